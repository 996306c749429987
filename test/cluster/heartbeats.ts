// Test helper: the Heartbeat the transport tests send, and a live record of the Heartbeats a transport (memory
// or TCP) receives, with the sender, so a test can wait on delivery and check order and origin.
import { CLUSTER_MESSAGES, type ClusterMessage } from '../../src/cluster/membership/messages.js';
import type { Transport } from '../../src/cluster/transport/transport.js';
import { isFamilyMessage } from '../../src/cluster/transport/wire-message.js';

export function heartbeat(sequence: number): ClusterMessage {
  return { type: 'Heartbeat', sequence, incarnation: 'test' };
}

/** Every Heartbeat `transport` receives from now on, in arrival order, with its sender's address. */
export function receivedHeartbeats(transport: Transport): Array<{ from: string; sequence: number }> {
  const received: Array<{ from: string; sequence: number }> = [];
  transport.onMessage((from, message) => {
    if (isFamilyMessage(CLUSTER_MESSAGES, message) && message.type === 'Heartbeat')
      received.push({ from: from.toString(), sequence: message.sequence });
  });
  return received;
}
