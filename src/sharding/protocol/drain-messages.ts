// The drain request and its answer on the wire, declared once (wire-schema.ts): kept apart from messages.ts, which
// routes them, because a move list is the one nested shape among the operator messages.
import Type from 'typebox';
import { Nullable, type Shape } from '../../shapes.js';
import { AddressField, ListField, MAX_SHARD_ID, RequestIdField, ShardIdField, TypeNameField } from './wire-values.js';

/** One shard a drain hands off: where from, and where the strategy places it now (null: it waits, e.g. a require pin). */
const DrainMoveField = Type.Object({ shardId: ShardIdField, from: AddressField, to: Nullable(AddressField) });
/** One shard a drain hands off: where from, and where the strategy places it now (null: it waits, e.g. a require pin). */
export type DrainMove = Shape<typeof DrainMoveField>;

/** The drain messages: each type and its fields beyond `type`. */
export const DRAIN_SCHEMAS = {
  /** Requester -> C. Treat `region` as cordoned and hand off every shard it hosts. */
  DrainRegion: Type.Object({ typeName: TypeNameField, requestId: RequestIdField, region: AddressField }),
  /** C -> requester. The hand-offs started (`moves`), or none because no other region may take them. */
  DrainStarted: Type.Object({
    typeName: TypeNameField,
    requestId: RequestIdField,
    moves: ListField(DrainMoveField, MAX_SHARD_ID + 1),
    noCapacity: Type.Boolean(),
  }),
};
