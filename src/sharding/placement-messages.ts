// Placement-store replication messages (crdt/ sync frames riding on the cluster transport): their family,
// registered on the transport by the placement replication (placement-gossip.ts).
import type { MessageFamily, RawMessage } from '../cluster/wire-message.js';

export type PlacementMessage =
  | { readonly type: 'PlacementSyncStep1'; readonly stateVector: Uint8Array }
  | { readonly type: 'PlacementSyncStep2'; readonly update: Uint8Array }
  | { readonly type: 'PlacementUpdate'; readonly update: Uint8Array };

// Below the transport's 16 MiB frame limit, so a message at the limit still fits its envelope.
const MAX_PLACEMENT_BYTES = 15 * 1024 * 1024;

function parsePlacementMessage(raw: RawMessage): PlacementMessage | undefined {
  switch (raw.type) {
    case 'PlacementSyncStep1':
      return isBytes(raw['stateVector']) ? { type: raw.type, stateVector: raw['stateVector'] } : undefined;
    case 'PlacementSyncStep2':
    case 'PlacementUpdate':
      return isBytes(raw['update']) ? { type: raw.type, update: raw['update'] } : undefined;
    default:
      return undefined;
  }
}

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.byteLength <= MAX_PLACEMENT_BYTES;
}

export const PLACEMENT_MESSAGES: MessageFamily<PlacementMessage> = {
  name: 'placement-sync',
  types: new Set(['PlacementSyncStep1', 'PlacementSyncStep2', 'PlacementUpdate']),
  parse: parsePlacementMessage,
};
