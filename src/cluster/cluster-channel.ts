// The membership's one contact with the transport: a send of cluster messages and a listener that lets
// only cluster messages through. Kept in one place so the switch to registered message families
// (`transport.register(CLUSTER_MESSAGES)` and `isFamilyMessage`) touches nothing else in the membership.
import type { NodeAddress } from './address.js';
import { CLUSTER_MESSAGE_TYPES, type ClusterMessage } from './messages.js';
import type { Transport } from './transport.js';

export interface ClusterChannel {
  send(to: NodeAddress, message: ClusterMessage): void;
  /** Calls `handler` with every cluster message that arrives; returns an unsubscribe function. */
  listen(handler: (from: NodeAddress, message: ClusterMessage) => void): () => void;
}

export function clusterChannel(transport: Transport): ClusterChannel {
  return {
    send: (to, message) => transport.send(to, message),
    listen: (handler) =>
      transport.onMessage((from, message) => {
        if (isClusterMessage(message)) handler(from, message);
      }),
  };
}

function isClusterMessage(message: { readonly type: string }): message is ClusterMessage {
  return CLUSTER_MESSAGE_TYPES.has(message.type);
}
