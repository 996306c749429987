// The placement sync family of the wire protocol: crdt/'s sync frames (step 1, step 2, update) as transport
// messages, the gate their untrusted input passes, and the one mapping between frames and messages.
// A digest (crdt/digest-relay.ts) is a PlacementUpdate with an optional `digest` field and an empty `update`:
// a node that knows no digests ignores the field, as every parser ignores fields it does not know, and applies
// the empty update to no effect, so no new message type and no protocol version are needed (docs/design.md).
import { MAX_DIGEST_BYTES, type SyncFrame } from '../../crdt/index.js';
import type { MessageFamily, RawMessage } from '../cluster/transport/wire-message.js';

/** The placement-sync message family: the store's sync frames as cluster messages. */
export type PlacementSyncMessage =
  | { readonly type: 'PlacementSyncStep1'; readonly stateVector: Uint8Array }
  | { readonly type: 'PlacementSyncStep2'; readonly update: Uint8Array }
  | { readonly type: 'PlacementUpdate'; readonly update: Uint8Array; readonly digest?: Uint8Array };

// Below the transport's 16 MiB frame limit, so a message at the limit still fits its envelope.
const MAX_PLACEMENT_BYTES = 15 * 1024 * 1024;

const TYPES = {
  PlacementSyncStep1: 'step1',
  PlacementSyncStep2: 'step2',
  PlacementUpdate: 'update',
} as const satisfies Record<PlacementSyncMessage['type'], SyncFrame['kind']>;

/** The family PlacementReplication registers on its transport. */
export const PLACEMENT_SYNC_MESSAGES: MessageFamily<PlacementSyncMessage> = {
  name: 'placement-sync',
  types: new Set<string>(Object.keys(TYPES)),
  parse: (raw) => parsePlacementSyncMessage(raw),
};

/** Validates one decoded message whose `type` is a placement sync type; undefined when a field is wrong. */
export function parsePlacementSyncMessage(raw: RawMessage): PlacementSyncMessage | undefined {
  switch (raw.type) {
    case 'PlacementSyncStep1':
      return isBytes(raw['stateVector']) ? { type: raw.type, stateVector: raw['stateVector'] } : undefined;
    case 'PlacementSyncStep2':
      return isBytes(raw['update']) ? { type: raw.type, update: raw['update'] } : undefined;
    case 'PlacementUpdate':
      return parseUpdate(raw['update'], raw['digest']);
    default:
      return undefined;
  }
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

// A digest, when present, is bounded here, before the replicator reads a byte of it.
function parseUpdate(update: unknown, digest: unknown): PlacementSyncMessage | undefined {
  if (!isBytes(update)) return undefined;
  if (digest === undefined) return { type: 'PlacementUpdate', update };
  return digest instanceof Uint8Array && digest.byteLength <= MAX_DIGEST_BYTES
    ? { type: 'PlacementUpdate', update, digest }
    : undefined;
}

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.byteLength <= MAX_PLACEMENT_BYTES;
}
