// The placement sync family of the wire protocol: crdt/'s sync frames (step 1, step 2, update) as transport
// messages, declared once (wire-schema.ts: the types and the gate their untrusted input passes come from the
// table below), and the one mapping between frames and messages.
// A digest (crdt/digest-relay.ts) is a PlacementUpdate with an optional `digest` field and an empty `update`:
// a node that knows no digests ignores the field, as every parser ignores fields it does not know, and applies
// the empty update to no effect, so no new message type and no protocol version are needed (docs/design.md).
import Type from 'typebox';
import { MAX_DIGEST_BYTES, type SyncFrame } from '../../crdt/index.js';
import { Bytes } from '../shapes.js';
import type { MessageFamily, RawMessage } from '../cluster/transport/wire-message.js';
import { declareFamily, type MessagesOf } from '../cluster/transport/wire-schema.js';

// Below the transport's 16 MiB frame limit, so a message at the limit still fits its envelope.
const MAX_PLACEMENT_BYTES = 15 * 1024 * 1024;

/** The family's one declaration: each message type and its fields, from which the types and the gate come. */
const SCHEMAS = {
  PlacementSyncStep1: Type.Object({ stateVector: Bytes(MAX_PLACEMENT_BYTES) }),
  PlacementSyncStep2: Type.Object({ update: Bytes(MAX_PLACEMENT_BYTES) }),
  // A digest, when present, is bounded here, before the replicator reads a byte of it.
  PlacementUpdate: Type.Object({ update: Bytes(MAX_PLACEMENT_BYTES), digest: Type.Optional(Bytes(MAX_DIGEST_BYTES)) }),
};

/** The placement-sync message family: the store's sync frames as cluster messages. */
export type PlacementSyncMessage = MessagesOf<typeof SCHEMAS>;

const TYPES = {
  PlacementSyncStep1: 'step1',
  PlacementSyncStep2: 'step2',
  PlacementUpdate: 'update',
} as const satisfies Record<PlacementSyncMessage['type'], SyncFrame['kind']>;

/** The family PlacementReplication registers on its transport. */
export const PLACEMENT_SYNC_MESSAGES: MessageFamily<PlacementSyncMessage> = declareFamily('placement-sync', SCHEMAS);

/** Validates one decoded message whose `type` is a placement sync type; undefined when a field is wrong. */
export function parsePlacementSyncMessage(raw: RawMessage): PlacementSyncMessage | undefined {
  return PLACEMENT_SYNC_MESSAGES.parse(raw);
}

/** TYPES read backwards: the message type of each frame kind. */
const TYPE_OF_KIND = Object.fromEntries(Object.entries(TYPES).map(([type, kind]) => [kind, type])) as {
  readonly [T in keyof typeof TYPES as (typeof TYPES)[T]]: T;
};

export function toSyncMessage(frame: SyncFrame): PlacementSyncMessage {
  if (frame.kind === 'step1') return { type: TYPE_OF_KIND.step1, stateVector: frame.stateVector };
  if (frame.kind === 'update' && frame.digest !== undefined)
    return { type: TYPE_OF_KIND.update, update: frame.update, digest: frame.digest };
  return { type: TYPE_OF_KIND[frame.kind], update: frame.update };
}

export function toSyncFrame(message: PlacementSyncMessage): SyncFrame {
  if (message.type === 'PlacementSyncStep1')
    return { kind: TYPES.PlacementSyncStep1, stateVector: message.stateVector };
  if (message.type === 'PlacementUpdate' && message.digest !== undefined)
    return { kind: TYPES.PlacementUpdate, update: message.update, digest: message.digest };
  return { kind: TYPES[message.type], update: message.update };
}
