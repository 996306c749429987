// Exact wire size of the placement messages (msgpackr, as the transports encode them), computed from the
// payload length instead of encoding a second time, so counting bytes does not add to the measured CPU time.
import { encodeMessage } from '../../src/cluster/transport/message-codec.js';
import type { PlacementSyncMessage } from '../../src/placement-replication/sync-messages.js';

export function wireSize(message: PlacementSyncMessage): number {
  // map16 header (msgpackr writes 0xde even for two keys) + "type" + fixstr(type) + key + bin(payload)
  const payload = message.type === 'PlacementSyncStep1' ? message.stateVector : message.update;
  const key = message.type === 'PlacementSyncStep1' ? 'stateVector' : 'update';
  const size = 3 + 5 + 1 + message.type.length + 1 + key.length + binHeader(payload.length) + payload.length;
  // A digest rides in a PlacementUpdate as one more key (crdt/digest-relay.ts).
  const digest = message.type === 'PlacementUpdate' ? message.digest : undefined;
  return digest === undefined ? size : size + 1 + 'digest'.length + binHeader(digest.length) + digest.length;
}

function binHeader(length: number): number {
  return length < 256 ? 2 : length < 65536 ? 3 : 5;
}

/** Fails loudly if the formula ever disagrees with the real encoder (a msgpackr upgrade, a new shape). */
export function checkWireSize(): void {
  for (const length of [0, 10, 255, 256, 70_000]) {
    const bytes = new Uint8Array(length);
    const messages: PlacementSyncMessage[] = [
      { type: 'PlacementUpdate', update: bytes },
      { type: 'PlacementSyncStep1', stateVector: bytes },
      { type: 'PlacementSyncStep2', update: bytes },
      { type: 'PlacementUpdate', update: bytes.subarray(0, 2), digest: bytes },
    ];
    for (const message of messages) {
      const real = encodeMessage(message).length;
      if (real !== wireSize(message)) {
        throw new Error(
          `wire size formula is wrong for ${message.type} of ${length} bytes: ${wireSize(message)} vs ${real}`,
        );
      }
    }
  }
}
