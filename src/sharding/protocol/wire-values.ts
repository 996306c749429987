// The kinds of value sharding messages share (shard ids, request ids, node addresses, type names) as schema atoms
// for the messages declared once, and the two checks the region's held-state readers use on the same kinds, so
// that each judges a value the same way.
import Type, { type TSchema } from 'typebox';
import { NodeAddress } from '../../cluster/address.js';

/** Largest shard id accepted on the wire (`numberOfShards` is capped below this by `init`). */
export const MAX_SHARD_ID = 999_999;

export function isRequestId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

export function isAddress(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 512 && NodeAddress.tryParse(value)?.toString() === value;
}

// The same kinds as schema atoms, for the messages declared once (wire-schema.ts): a field's schema says what
// the function above says, so both judge a value alike.

/** A shard id: an integer 0 .. MAX_SHARD_ID. */
export const ShardIdField = Type.Integer({ minimum: 0, maximum: MAX_SHARD_ID });
/** A request id (also ask ids, hand-off ids, incarnations, sequence numbers): a safe integer above 0. */
export const RequestIdField = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
/** Any safe integer (a shard number an operator named, which may be out of range). */
export const AnyShardNumberField = Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
/** A count or an epoch-ms time: a safe integer from 0. */
export const CountField = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** A node address in its canonical `system@host:port` form. */
export const AddressField = Type.Refine(Type.String({ maxLength: 512 }), isAddress);
/** Entity type names: also path segments of the management API, so kept to a safe alphabet. */
export const TYPE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/** An entity type name. */
export const TypeNameField = Type.String({ pattern: TYPE_NAME_PATTERN.source, maxLength: 128 });
/** A list of at most `max` items. */
export const ListField = <S extends TSchema>(item: S, max: number) => Type.Array(item, { maxItems: max });
