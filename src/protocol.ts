// The top-level list of every message family nodes exchange. Each family is defined, and registered on the
// transport, by the layer that speaks it (cluster membership, sharding, placement replication); nothing in
// src/cluster or src/sharding imports this file. It serves `parseMessage` (tests, tools) and the public API.
import { CLUSTER_MESSAGES, type ClusterMessage } from './cluster/membership/messages.js';
import { FamilyRegistry, type MessageFamily, type WireMessage } from './cluster/transport/wire-message.js';
import { SHARDING_MESSAGES, type ShardingMessage } from './sharding/protocol/messages.js';
import { PLACEMENT_SYNC_MESSAGES, type PlacementSyncMessage } from './placement-replication/sync-messages.js';

export { PROTOCOL_VERSION, type RawMessage } from './cluster/transport/wire-message.js';
export type { PlacementSyncMessage } from './placement-replication/sync-messages.js';

/** Any message of the cluster protocol: membership, sharding or placement sync. */
export type ProtocolMessage = ClusterMessage | ShardingMessage | PlacementSyncMessage;

/** Every family of the protocol. */
export const MESSAGE_FAMILIES: ReadonlyArray<MessageFamily<WireMessage>> = [
  CLUSTER_MESSAGES,
  SHARDING_MESSAGES,
  PLACEMENT_SYNC_MESSAGES,
];

const all = new FamilyRegistry();
for (const family of MESSAGE_FAMILIES) all.register(family);

/** Validates an untrusted decoded value; returns undefined for anything that is not a known, well-formed message. */
export function parseMessage(value: unknown): ProtocolMessage | undefined {
  return all.parse(value) as ProtocolMessage | undefined;
}
