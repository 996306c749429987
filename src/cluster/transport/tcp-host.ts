// What a TCP connection needs from the transport that owns it: settings, logging, counters, socket
// tracking, the shared inbound buffer budget, rate-limited logging of what peers cause, the hand-over of
// received messages and authenticated inbound peers, and the one place an inbound connection's end is undone.
import type { ConnectionLostListeners } from './connection-lost.js';
import type { Socket } from 'node:net';
import type { Logger } from '../../logging.js';
import type { NodeAddress } from '../address.js';
import type { Frame } from './frame-codec.js';
import type { BudgetHolder, Reservation } from './inbound-budget.js';
import type { PeerProtocols } from './peer-protocols.js';
import type { TcpConfig, TcpTransportStats } from './tcp-settings.js';
import type { ClusterTls } from './tcp-tls.js';

/** An accepted connection, as the transport needs to see it (to drop it when its peer restarts or dials again). */
export interface InboundLink extends BudgetHolder {
  /** Ends the connection (idempotent); it releases everything through `TcpHost.endInbound`. */
  destroy(): void;
  /** Handshaking until the peer is authenticated, then open. */
  readonly phase: 'handshaking' | 'open';
}

export interface TcpHost {
  readonly self: NodeAddress;
  readonly incarnation: string;
  readonly config: TcpConfig;
  /** Mutual TLS on every connection (tcp-tls.ts); undefined for plain TCP. */
  readonly tls: ClusterTls | undefined;
  readonly log: Logger;
  readonly isClosed: boolean;
  count(stat: keyof TcpTransportStats): void;
  /** What this node announces in handshakes, what each peer's handshakes agreed, and the peers refused for it. */
  readonly protocols: PeerProtocols;
  /** Keeps the socket so `close()` can destroy it. */
  track(socket: Socket): void;
  /**
   * Sets the bytes `link` holds in an incomplete frame in the transport's shared inbound budget (see
   * inbound-budget.ts); a trusted peer may take the room of untrusted ones.
   */
  reserveInbound(link: InboundLink, bytes: number, trusted: boolean): Reservation;
  /** Whether frames from this authenticated peer always get room: it proved the secret, or the owner trusts it. */
  isTrusted(peer: NodeAddress): boolean;
  /** Logs an event a remote peer caused at `warn`, at most once per kind and peer host per interval, with a count. */
  peerEvent(kind: string, peerHost: string, details: Readonly<Record<string, unknown>>): void;
  /**
   * Decodes one message frame from an authenticated peer and hands it to listeners; false when it was malformed. Never
   * throws.
   */
  receive(from: NodeAddress, frame: Frame): boolean;
  /** Every accepted connection is added on accept and removed by `endInbound`. */
  registerInbound(link: InboundLink, from: NodeAddress, incarnation: string): void;
  /**
   * Called once by every inbound connection however it ended (peer close, our refusal, deadline, bad frame,
   * replacement, shutdown): releases its budget share and removes it from every registry.
   */
  endInbound(link: InboundLink, from: NodeAddress | undefined): void;
  /** Told when an open connection ended from the peer's side (see `Transport.onConnectionLost`). */
  readonly lost: ConnectionLostListeners;
}
