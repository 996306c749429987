// The one interface every transport implements (TCP between processes, in-memory for tests): fire-and-forget
// delivery of opaque wire messages between node addresses. Delivery is at-most-once; a send to an unknown or
// unreachable peer never throws (the transport counts and logs it instead). The transport knows no message
// family: each layer registers its own, and only messages a registered family parsed reach listeners.
import type { NodeAddress } from '../address.js';
import type { MessageFamily, WireMessage } from './wire-message.js';

export type { MessageFamily, RawMessage, WireMessage } from './wire-message.js';
export { isFamilyMessage } from './wire-message.js';

/** What a probe of a peer's address found (see `Transport.probe`). */
export type ProbeResult = 'refused' | 'accepting' | 'unknown';

/** Receives each message of a family a transport delivers, with its sender. */
export type MessageListener = (from: NodeAddress, message: WireMessage) => void;

/**
 * How nodes exchange messages: what Cluster, ClusterSharding and PlacementReplication need of a transport (TcpTransport
 * in production, MemoryTransport in tests). Delivery is at-most-once: layers above retry what must arrive.
 */
export interface Transport {
  readonly self: NodeAddress;
  /** Identifies this run of the node when the transport has one (TCP announces it in its handshake). */
  readonly incarnation?: string;
  /** Lets messages of this family through; each layer registers its own (idempotent; type clashes throw). */
  register<M extends WireMessage>(family: MessageFamily<M>): void;
  /**
   * Generic so a message literal is checked as the family type it is, not as a bare WireMessage. `message`
   * must not change once sent: a transport may reuse the encoding of the same object (message-codec.ts).
   */
  send<M extends WireMessage>(to: NodeAddress, message: M): void;
  /**
   * Hands what this tick sent to `to` to the network now, not at the tick's end (a TCP transport holds a tick's
   * frames back to write them in one system call): for a message the peer should act on while this node is busy
   * with a long task in the same tick. Never throws; a transport that holds nothing back leaves it out.
   */
  flush?(to: NodeAddress): void;
  /**
   * Only messages of registered families that passed the family's parse reach listeners. Returns an unsubscribe
   * function.
   */
  onMessage(listener: MessageListener): () => void;
  /**
   * The caller has evidence that messages to `peer` are not getting through (its heartbeats went unanswered
   * for two intervals): a transport with connections drops the one to `peer` that looks stalled and dials
   * afresh, instead of waiting for the kernel's retransmission backoff to find out the path works again.
   * Never throws; a transport without connections (in-memory) has nothing to do.
   */
  reconnect?(peer: NodeAddress): void;
  /**
   * Asks whether anything listens at `peer`'s address now, without a handshake (probe.ts): `refused` when
   * the peer's host answered that nothing does (its process is gone), `accepting` when a connection opened,
   * `unknown` on silence or any other error (a cut link, a paused host). Never rejects. A transport that cannot
   * tell leaves it out, and nothing is ever confirmed dead through it.
   */
  probe?(peer: NodeAddress): Promise<ProbeResult>;
  /**
   * Calls `listener` when an established connection with `peer` ended from the peer's side (EOF or reset on an
   * open connection, either direction), which is what the kernel does at once to every socket of a process that
   * died. Not evidence of death by itself (a peer closing gracefully or dropping one connection does the same):
   * only a reason to probe now rather than when heartbeats fall silent. Returns an unsubscribe function.
   */
  onConnectionLost?(listener: (peer: NodeAddress) => void): () => void;
  /**
   * What the latest completed handshake with each peer (by its address string) agreed, its protocol version
   * among it; a transport without handshakes (in-memory: one build at both ends) leaves it out.
   */
  readonly protocols?: { of(peer: string): { readonly protocol: number } | undefined };
  close(): Promise<void>;
}
