// The closed, versioned set of messages nodes exchange. Each family is defined next to the code that speaks
// it (cluster membership, sharding, placement replication); this file unites them and is the one gate every
// incoming message passes: anything `parseMessage` does not recognise is dropped by the transport.
import { CLUSTER_MESSAGE_TYPES, parseClusterMessage, type ClusterMessage } from './cluster/messages.js';
import { SHARDING_MESSAGE_TYPES, parseShardingMessage, type ShardingMessage } from './sharding/messages.js';

/**
 * Bumped on any incompatible change of a message shape; carried in every frame. 2: placement sync payloads
 * carry the store's generation envelope (compaction) and ShardLocations names hand-offs in progress.
 */
export const PROTOCOL_VERSION = 2;

/** Placement-store replication (crdt/ sync frames), riding on the cluster transport. */
export type PlacementMessage =
  | { readonly type: 'PlacementSyncStep1'; readonly stateVector: Uint8Array }
  | { readonly type: 'PlacementSyncStep2'; readonly update: Uint8Array }
  | { readonly type: 'PlacementUpdate'; readonly update: Uint8Array };

export type ProtocolMessage = ClusterMessage | ShardingMessage | PlacementMessage;

/** A decoded but not yet trusted message: an object with a string `type`. */
export type RawMessage = { readonly type: string } & Readonly<Record<string, unknown>>;

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

/** Validates an untrusted decoded value; returns undefined for anything that is not a known, well-formed message. */
export function parseMessage(value: unknown): ProtocolMessage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const raw = value as RawMessage;
  if (typeof raw.type !== 'string') return undefined;
  if (CLUSTER_MESSAGE_TYPES.has(raw.type)) return parseClusterMessage(raw);
  if (SHARDING_MESSAGE_TYPES.has(raw.type)) return parseShardingMessage(raw);
  return parsePlacementMessage(raw);
}
