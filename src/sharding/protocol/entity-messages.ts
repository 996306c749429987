// The messages that carry one entity's traffic between regions: the envelope (a tell, an ask or a reliable
// send), the answer to an ask, and the answers without a value (a send's) that one node owes another, many in
// one frame. Kept apart from messages.ts, which routes them, because the envelope is the one message with
// optional nested parts (reply address, reliable mark), each validated here.
import type { RawMessage } from '../../cluster/transport/wire-message.js';
import { isAddress, isRequestId, isShardId } from './wire-values.js';

/** Longest entity id accepted, in UTF-16 code units. */
export const MAX_ENTITY_ID_LENGTH = 1024;
/** Longest error text carried back to an asker. */
export const MAX_ERROR_LENGTH = 4096;
/** Most answers in one EntityReplies (a host coalescing more sends a second frame). */
export const MAX_REPLIES_PER_MESSAGE = 4096;

/** Where an ask's answer goes: the asking node and its request number. */
export interface ReplyTo {
  readonly node: string;
  readonly askId: number;
}

/**
 * The mark of a reliable `send`: the sending region's incarnation and the send's sequence number (a host
 * processes each at most once while it lives), and the lowest number the sender still retries (the host
 * forgets those below).
 */
export interface ReliableMark {
  readonly incarnation: number;
  readonly seq: number;
  readonly below: number;
}

export type EntityMessage =
  /**
   * R->R. One message for one entity. `hops` counts forwards; `replyTo` is present for an ask and a send,
   * `reliable` for a send (which always has a `replyTo`).
   */
  | {
      readonly type: 'EntityEnvelope';
      readonly typeName: string;
      readonly shardId: number;
      readonly entityId: string;
      readonly payload: unknown;
      readonly hops: number;
      readonly replyTo?: ReplyTo;
      readonly reliable?: ReliableMark;
    }
  /** Hosting node -> asking node. The entity's answer, or why it failed. */
  | { readonly type: 'EntityReply'; readonly askId: number; readonly ok: true; readonly value: unknown }
  | {
      readonly type: 'EntityReply';
      readonly askId: number;
      readonly ok: false;
      readonly error: string;
      /** Why, when the host knows a typed reason (REPLY_CODES); absent: the entity failed. Older hosts never send it. */
      readonly code?: ReplyCode;
    }
  /**
   * Hosting node -> asking node. These asks were answered with `null`, as every send is: the acknowledgements
   * one node owes another within a tick travel in one frame, not one frame each.
   */
  | { readonly type: 'EntityReplies'; readonly askIds: ReadonlyArray<number> };

/** The typed reasons a host may give for a failed answer, beside the entity's own failure. */
export const REPLY_CODES = [
  'entity_store_unavailable',
  'entity_fenced',
  'entity_state_invalid',
  'entity_snapshot_invalid',
  'invalid_message',
] as const;
export type ReplyCode = (typeof REPLY_CODES)[number];

export function isReplyCode(value: unknown): value is ReplyCode {
  return typeof value === 'string' && (REPLY_CODES as readonly string[]).includes(value);
}

/** An EntityEnvelope (typeName already checked) with every field checked; undefined when any is wrong. */
export function parseEnvelope(raw: RawMessage, typeName: string): EntityMessage | undefined {
  const { shardId, entityId, hops } = raw;
  if (!isShardId(shardId)) return undefined;
  if (typeof entityId !== 'string' || entityId.length === 0 || entityId.length > MAX_ENTITY_ID_LENGTH) return undefined;
  if (typeof hops !== 'number' || !Number.isInteger(hops) || hops < 0 || hops > 255) return undefined;
  // A missing payload or value is `undefined`: some encoders drop undefined fields instead of encoding them.
  const payload = raw['payload'];
  const rawReplyTo = raw['replyTo'];
  if (rawReplyTo === undefined || rawReplyTo === null) {
    return { type: 'EntityEnvelope', typeName, shardId, entityId, payload, hops };
  }
  const replyTo = parseReplyTo(rawReplyTo);
  if (replyTo === undefined) return undefined;
  const rawReliable = raw['reliable'];
  if (rawReliable === undefined || rawReliable === null)
    return { type: 'EntityEnvelope', typeName, shardId, entityId, payload, hops, replyTo };
  const reliable = parseReliable(rawReliable);
  return reliable
    ? { type: 'EntityEnvelope', typeName, shardId, entityId, payload, hops, replyTo, reliable }
    : undefined;
}

/** An EntityReply or EntityReplies with every field checked; undefined when any is wrong. */
export function parseEntityReply(raw: RawMessage): EntityMessage | undefined {
  if (raw.type === 'EntityReplies') return parseEntityReplies(raw);
  const { askId, ok } = raw;
  if (!isRequestId(askId)) return undefined;
  if (ok === true) return { type: 'EntityReply', askId, ok, value: raw['value'] };
  const error = raw['error'];
  if (ok === false && typeof error === 'string' && error.length <= MAX_ERROR_LENGTH) {
    const code = raw['code'];
    // An unknown code (a newer host's) is read as the generic failure rather than refusing the answer.
    if (isReplyCode(code)) return { type: 'EntityReply', askId, ok, error, code };
    return { type: 'EntityReply', askId, ok, error };
  }
  return undefined;
}

/** An EntityReplies whose every entry is an ask id, 1 to MAX_REPLIES_PER_MESSAGE of them; else undefined. */
function parseEntityReplies(raw: RawMessage): EntityMessage | undefined {
  const askIds = raw['askIds'];
  if (!Array.isArray(askIds) || askIds.length === 0 || askIds.length > MAX_REPLIES_PER_MESSAGE) return undefined;
  for (const askId of askIds as unknown[]) if (!isRequestId(askId)) return undefined;
  return { type: 'EntityReplies', askIds: askIds as number[] };
}

function parseReplyTo(value: unknown): ReplyTo | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { node, askId } = value as Record<string, unknown>;
  return isAddress(node) && isRequestId(askId) ? { node, askId } : undefined;
}

function parseReliable(value: unknown): ReliableMark | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { incarnation, seq, below } = value as Record<string, unknown>;
  if (!isRequestId(incarnation) || !isRequestId(seq) || !isRequestId(below) || below > seq) return undefined;
  return { incarnation, seq, below };
}
