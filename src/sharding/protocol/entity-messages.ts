// The messages that carry one entity's traffic between regions: the envelope (a tell, an ask or a reliable
// send), the answer to an ask, and the answers without a value (a send's) that one node owes another, many in
// one frame. Kept apart from messages.ts, which routes them, because the envelope is the one message with
// optional nested parts (reply address, reliable mark), each validated here.
import Type from 'typebox';
import { absentOrNull } from '../../cluster/transport/wire-schema.js';
import type { Shape } from '../../shapes.js';
import { AddressField, RequestIdField, ShardIdField, TypeNameField } from './wire-values.js';

/** Longest entity id accepted, in UTF-16 code units. */
export const MAX_ENTITY_ID_LENGTH = 1024;
/** Longest error text carried back to an asker. */
export const MAX_ERROR_LENGTH = 4096;
/** Most answers in one EntityReplies (a host coalescing more sends a second frame). */
export const MAX_REPLIES_PER_MESSAGE = 4096;

/** Where an ask's answer goes: the asking node and its request number. */
const ReplyToField = Type.Object({ node: AddressField, askId: RequestIdField });
/** Where an ask's answer goes: the asking node and its request number. */
export type ReplyTo = Shape<typeof ReplyToField>;

/**
 * The mark of a reliable `send`: the sending region's incarnation and the send's sequence number (a host
 * processes each at most once while it lives), and the lowest number the sender still retries (the host
 * forgets those below; never above `seq`, the message's rule).
 */
const ReliableField = Type.Object({ incarnation: RequestIdField, seq: RequestIdField, below: RequestIdField });
export type ReliableMark = Shape<typeof ReliableField>;

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

/** The entity messages, declared once: their types and their parse gate come from this table (messages.ts). */
export const ENTITY_SCHEMAS = {
  /**
   * R->R. One message for one entity. `hops` counts forwards; `replyTo` is present for an ask and a send,
   * `reliable` for a send (which always has a `replyTo`). A missing payload is `undefined`: some encoders drop
   * undefined fields instead of encoding them.
   */
  EntityEnvelope: Type.Object({
    typeName: TypeNameField,
    shardId: ShardIdField,
    entityId: Type.String({ minLength: 1, maxLength: MAX_ENTITY_ID_LENGTH }),
    payload: Type.Optional(Type.Unknown()),
    hops: Type.Integer({ minimum: 0, maximum: 255 }),
    // Null is read as absent, as an encoder that writes undefined as nil sends it.
    replyTo: absentOrNull(ReplyToField),
    reliable: absentOrNull(ReliableField),
  }),
  /** Hosting node -> asking node. The entity's answer, or why it failed. */
  EntityReply: Type.Union([
    Type.Object({ askId: RequestIdField, ok: Type.Literal(true), value: Type.Optional(Type.Unknown()) }),
    Type.Object({
      askId: RequestIdField,
      ok: Type.Literal(false),
      error: Type.String({ maxLength: MAX_ERROR_LENGTH }),
      /**
       * Why, when the host knows a typed reason (REPLY_CODES); absent: the entity failed. Older hosts never send
       * it; an unknown one (a newer host's) is read as the generic failure (the message's rule).
       */
      code: Type.Optional(Type.Unsafe<ReplyCode>(Type.String())),
    }),
  ]),
  /**
   * Hosting node -> asking node. These asks were answered with `null`, as every send is: the acknowledgements
   * one node owes another within a tick travel in one frame, not one frame each.
   */
  EntityReplies: Type.Object({
    askIds: Type.Array(RequestIdField, { minItems: 1, maxItems: MAX_REPLIES_PER_MESSAGE }),
  }),
};

type Declared<T extends keyof typeof ENTITY_SCHEMAS> = Shape<(typeof ENTITY_SCHEMAS)[T]> & { readonly type: T };
type Envelope = Declared<'EntityEnvelope'>;
type Reply = Declared<'EntityReply'>;

/** One entity's traffic: envelopes R->R, replies to the asker. */
export type EntityMessage = Envelope | Reply | Declared<'EntityReplies'>;

/** The rules beyond the schemas: a reliable mark only with a reply address and below <= seq; unknown codes. */
export const ENTITY_RULES = {
  EntityEnvelope: (message: Envelope): Envelope | undefined => {
    const { reliable } = message;
    if (reliable === undefined) return message;
    if (message.replyTo === undefined) return withoutReliable(message);
    return reliable.below <= reliable.seq ? message : undefined;
  },
  EntityReply: (message: Reply): Reply => {
    if (message.ok || message.code === undefined || isReplyCode(message.code)) return message;
    // An unknown code (a newer host's) is read as the generic failure rather than refusing the answer.
    return { type: message.type, askId: message.askId, ok: false, error: message.error };
  },
};

/** A mark without a reply address means nothing (a tell): it is dropped, as a reader before marks did. */
function withoutReliable(message: Envelope): Envelope {
  const { type, typeName, shardId, entityId, payload, hops } = message;
  return payload === undefined
    ? { type, typeName, shardId, entityId, hops }
    : { type, typeName, shardId, entityId, payload, hops };
}
