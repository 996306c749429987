// The membership's one contact with the transport: registers the cluster message family, sends cluster
// messages, and lets only cluster messages through to the membership.
import type { NodeAddress } from '../address.js';
import { CLUSTER_MESSAGES, type ClusterMessage } from './messages.js';
import type { ProbeResult, Transport } from '../transport/transport.js';
import { isFamilyMessage } from '../transport/wire-message.js';

export interface ClusterChannel {
  send(to: NodeAddress, message: ClusterMessage): void;
  /** Asks the transport to replace a connection to `to` that looks stalled (see `Transport.reconnect`). */
  reconnect(to: NodeAddress): void;
  /** Whether anything listens at `to` (see `Transport.probe`); undefined when the transport cannot tell. */
  readonly probe?: ((to: NodeAddress) => Promise<ProbeResult>) | undefined;
  /**
   * Calls `handler` when an open connection with a peer ended from its side (see `Transport.onConnectionLost`);
   * returns an unsubscribe function (a no-op when the transport cannot tell).
   */
  onConnectionLost(handler: (peer: NodeAddress) => void): () => void;
  /** Calls `handler` with every cluster message that arrives; returns an unsubscribe function. */
  listen(handler: (from: NodeAddress, message: ClusterMessage) => void): () => void;
}

export function clusterChannel(transport: Transport): ClusterChannel {
  transport.register(CLUSTER_MESSAGES);
  return {
    send: (to, message) => transport.send(to, message),
    reconnect: (to) => transport.reconnect?.(to),
    probe: transport.probe === undefined ? undefined : (to) => transport.probe?.(to) ?? Promise.resolve('unknown'),
    onConnectionLost: (handler) => transport.onConnectionLost?.(handler) ?? (() => undefined),
    listen: (handler) =>
      transport.onMessage((from, message) => {
        if (isFamilyMessage(CLUSTER_MESSAGES, message)) handler(from, message);
      }),
  };
}
