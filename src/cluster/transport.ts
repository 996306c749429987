// The one interface every transport implements (TCP between processes, in-memory for tests): fire-and-forget
// delivery of protocol messages between node addresses. Delivery is at-most-once; a send to an unknown or
// unreachable peer never throws (the transport counts and logs it instead).
import type { NodeAddress } from './address.js';
import type { ProtocolMessage } from '../protocol.js';

export type MessageListener = (from: NodeAddress, message: ProtocolMessage) => void;

export interface Transport {
  readonly self: NodeAddress;
  /** Identifies this run of the node when the transport has one (TCP announces it in its handshake). */
  readonly incarnation?: string;
  send(to: NodeAddress, message: ProtocolMessage): void;
  /** Only messages that passed `parseMessage` reach listeners. Returns an unsubscribe function. */
  onMessage(listener: MessageListener): () => void;
  close(): Promise<void>;
}
