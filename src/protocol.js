// The top-level list of every message family nodes exchange. Each family is defined, and registered on the
// transport, by the layer that speaks it (cluster membership, sharding, placement replication); nothing in
// src/cluster or src/sharding imports this file. It serves `parseMessage` (tests, tools) and the public API.
import { CLUSTER_MESSAGES } from './cluster/messages.js';
import { FamilyRegistry } from './cluster/wire-message.js';
import { SHARDING_MESSAGES } from './sharding/protocol/messages.js';
import { PLACEMENT_SYNC_MESSAGES } from './placement-replication/sync-messages.js';
export { PROTOCOL_VERSION } from './cluster/wire-message.js';
/** Every family of the protocol. */
export const MESSAGE_FAMILIES = [CLUSTER_MESSAGES, SHARDING_MESSAGES, PLACEMENT_SYNC_MESSAGES];
const all = new FamilyRegistry();
for (const family of MESSAGE_FAMILIES)
    all.register(family);
/** Validates an untrusted decoded value; returns undefined for anything that is not a known, well-formed message. */
export function parseMessage(value) {
    return all.parse(value);
}
//# sourceMappingURL=protocol.js.map