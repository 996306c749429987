// What a TCP connection needs from the transport that owns it: settings, logging, counters, socket
// tracking, the shared inbound buffer budget, rate-limited logging of what peers cause, and the hand-over of
// received messages and authenticated inbound peers.
import type { Socket } from 'node:net';
import type { Logger } from '../logging.js';
import type { NodeAddress } from './address.js';
import type { Frame } from './frame-codec.js';
import type { TcpSettings, TcpTransportStats } from './tcp-settings.js';

/** An accepted connection, as the transport needs to see it (to drop it when its peer restarts). */
export interface InboundLink {
  destroy(): void;
}

export interface TcpHost {
  readonly self: NodeAddress;
  readonly incarnation: string;
  readonly config: TcpSettings;
  readonly log: Logger;
  readonly isClosed: boolean;
  count(stat: keyof TcpTransportStats): void;
  /** Keeps the socket so `close()` can destroy it. */
  track(socket: Socket): void;
  /**
   * Moves the bytes held in incomplete inbound frames by `delta` (negative to release). Returns false, and
   * changes nothing, when growing would exceed the transport's total inbound budget.
   */
  reserveInbound(delta: number): boolean;
  /** Logs an event a remote peer caused at `warn`, at most once per kind and peer host per interval, with a count. */
  peerEvent(kind: string, peerHost: string, details: Readonly<Record<string, unknown>>): void;
  /** Decodes one message frame from an authenticated peer and hands it to listeners; never throws. */
  receive(from: NodeAddress, frame: Frame): void;
  registerInbound(link: InboundLink, from: NodeAddress, incarnation: string): void;
  unregisterInbound(link: InboundLink, from: NodeAddress): void;
}
