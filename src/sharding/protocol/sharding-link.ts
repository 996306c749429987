// The sharding runtime's one use of the transport: sends sharding messages to node keys (`system@host:port`)
// and hands every sharding message that arrives to one receiver. A message to this node skips the transport
// but stays asynchronous, so no handler ever re-enters another.
import { NodeAddress } from '../../cluster/address.js';
import type { ProbeResult, Transport } from '../../cluster/transport/transport.js';
import { PROTOCOL_FLOOR } from '../../cluster/transport/protocol-versions.js';
import { PROTOCOL_VERSION, isFamilyMessage, type WireMessage } from '../../cluster/transport/wire-message.js';
import type { Logger } from '../../logging.js';
import { SHARDING_MESSAGES, type ShardingMessage } from './messages.js';
import { stateOnWire } from './state-messages.js';

export type ShardingReceiver = (from: string, message: ShardingMessage) => void;

export class ShardingLink {
  readonly selfKey: string;
  /** Parsed addresses by key, so a key is parsed once (and a sender's address is reused as is). */
  private readonly addresses = new Map<string, NodeAddress>();
  private receiver: ShardingReceiver | undefined;
  private unsubscribe: (() => void) | undefined;
  private sendFailureCount = 0;

  constructor(
    private readonly transport: Transport,
    private readonly logger: Logger,
  ) {
    this.selfKey = transport.self.toString();
    this.addresses.set(this.selfKey, transport.self);
    transport.register(SHARDING_MESSAGES);
  }

  /** Probes a node's address (Transport.probe), or undefined when the transport cannot. */
  get probe(): ((to: NodeAddress) => Promise<ProbeResult>) | undefined {
    const transport = this.transport;
    return transport.probe === undefined ? undefined : (to) => transport.probe?.(to) ?? Promise.resolve('unknown');
  }

  /** Sends the transport refused (a message that cannot be encoded, or an invalid address). */
  get sendFailures(): number {
    return this.sendFailureCount;
  }

  /** Starts delivering arriving sharding messages (and messages to self) to `receiver`. */
  listen(receiver: ShardingReceiver): void {
    this.receiver = receiver;
    this.unsubscribe ??= this.transport.onMessage((from, message) => this.onTransportMessage(from, message));
  }

  /** Stops delivering; later sends are refused. */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.receiver = undefined;
  }

  /**
   * Returns false when the message was refused here or by the transport (it cannot be encoded); a loss on
   * the way is not seen here.
   */
  send(to: string, message: ShardingMessage): boolean {
    const receiver = this.receiver;
    if (receiver === undefined) return false;
    if (to === this.selfKey) {
      queueMicrotask(() => {
        if (this.receiver === receiver) receiver(this.selfKey, message);
      });
      return true;
    }
    const address = this.addressOf(to);
    if (address === undefined) {
      this.sendFailureCount++;
      this.logger.warn({ to, type: message.type }, 'cannot send to an invalid address');
      return false;
    }
    try {
      this.transport.send(address, stateOnWire(message, this.protocolWith(address)));
      return true;
    } catch (error) {
      this.sendFailureCount++;
      this.logger.warn(
        { to, type: message.type, err: error instanceof Error ? error.message : String(error) },
        'send failed',
      );
      return false;
    }
  }

  /** What was sent to `to` this tick goes to the network now (Transport.flush); nothing for this node. */
  flush(to: string): void {
    if (to === this.selfKey) return;
    const address = this.addressOf(to);
    if (address !== undefined) this.transport.flush?.(address);
  }

  /**
   * The protocol version messages to `to` must be readable at: the one its latest handshake agreed; the floor
   * before any (a peer not yet heard of may be the oldest release); this release's own without handshakes.
   */
  protocolWith(to: NodeAddress): number {
    const { protocols } = this.transport;
    if (protocols === undefined) return PROTOCOL_VERSION;
    return protocols.of(to.toString())?.protocol ?? PROTOCOL_FLOOR;
  }

  /** protocolWith by node key: this release's for this node (no wire between), the floor for a key that is no address. */
  protocolOf(key: string): number {
    if (key === this.selfKey) return PROTOCOL_VERSION;
    const address = this.addressOf(key);
    return address === undefined ? PROTOCOL_FLOOR : this.protocolWith(address);
  }

  /** The address of a node key; undefined for a key that is not an address. */
  addressOf(key: string): NodeAddress | undefined {
    let address = this.addresses.get(key);
    if (address === undefined) {
      address = NodeAddress.tryParse(key);
      if (address !== undefined) this.addresses.set(key, address);
    }
    return address;
  }

  /** Remembers an address already parsed elsewhere (a member's). */
  remember(address: NodeAddress): string {
    const key = address.toString();
    if (!this.addresses.has(key)) this.addresses.set(key, address);
    return key;
  }

  private onTransportMessage(from: NodeAddress, message: WireMessage): void {
    const receiver = this.receiver;
    if (receiver === undefined || !isFamilyMessage(SHARDING_MESSAGES, message)) return;
    receiver(this.remember(from), message);
  }
}
