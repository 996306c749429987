// The management API's JSON shapes, declared once as JSON schemas (TypeBox) from which every TypeScript type comes:
// the routes validate requests with the request schemas and type their answers with the answer types, the CLI's
// client and the console page read the same types, and a test checks a real node's answers against the schemas.
// The console page is compiled for the browser and imports this file for its types only, so it may import nothing
// but TypeBox and the leaf of text limits.
import Type, { type Static } from 'typebox';
import { Nullable, type Shape } from '../shapes.js';
import { HlcShape, PinMode as Mode, PinRecord } from '../sharding/placements/pin-shape.js';
import { MAX_BY_LENGTH, MAX_PLACEMENT_TARGET_LENGTH, MAX_REASON_LENGTH } from '../sharding/placements/text-limits.js';

export { PinRecord, type Shape };

/** Longest path parameter any route's schema accepts (an entity id), in characters. */
export const MAX_PARAM_CHARS = 256;
/**
 * The router's limit on one raw (percent-encoded) path parameter: a character takes at most 9 encoded
 * characters (3 UTF-8 bytes as %XX), so every parameter the schemas accept fits and the schema decides.
 */
export const MAX_PARAM_LENGTH = MAX_PARAM_CHARS * 9;
/** How many placements one bulk request may carry. */
export const MAX_BULK_PLACEMENTS = 10_000;

const ShardIdValue = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const ShardIds = Type.Array(Type.Integer({ minimum: 0 }));

// ---- Requests -------------------------------------------------------------------------------------------------

// JSON types and the target's length here; what a target or an option may be is judged by the placement
// validators (placement-target.ts, placement-options.ts), so the API answers invalid_target / invalid_placement
// with the same message the CLI and the controller give. The body limit bounds the rest.
/** One placement as the API takes it: the target and the rule options (see PlacementOptions). */
export const PinRequestBody = Type.Object(
  {
    shardId: ShardIdValue,
    target: Type.String({ minLength: 1, maxLength: MAX_PLACEMENT_TARGET_LENGTH }),
    mode: Type.Optional(Type.String()),
    ttlMs: Type.Optional(Type.Number()),
    expiresAt: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    by: Type.Optional(Type.String()),
    /** Write it even when no current member matches the target; refused with 409 unknown_target otherwise. */
    allowUnknownTarget: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type PinRequestBody = Shape<typeof PinRequestBody>;

const BulkPinsBody = Type.Object(
  {
    placements: Type.Array(PinRequestBody, { minItems: 1, maxItems: MAX_BULK_PLACEMENTS }),
    // For the whole write: pins to targets no current member matches are written (planned nodes).
    allowUnknownTarget: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

// if/then/else rather than a union (oneOf/anyOf): a rejected body is reported against the form it was meant to be
// (bulk when it has `placements`), not as a list of every branch's failures.
/** POST .../placements: one pin, or `{ placements: [...] }`. */
export const SetPlacementsBody = Type.Unsafe<Static<typeof PinRequestBody> | Static<typeof BulkPinsBody>>({
  type: 'object',
  if: { required: ['placements'] },
  then: BulkPinsBody,
  else: PinRequestBody,
});
export type SetPlacementsBody = Shape<typeof SetPlacementsBody>;

/** Who made a write and why, as the audit records it: optional, bounded like a pin's. */
const provenance = {
  by: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_BY_LENGTH })),
  reason: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_REASON_LENGTH })),
};
/** Query of DELETE .../placements/{shardId} and DELETE .../cordon. */
export const ProvenanceQuery = Type.Object(provenance, { additionalProperties: false });
export type ProvenanceQuery = Shape<typeof ProvenanceQuery>;
/** Body of cordon and drain: optional (a POST without a body is a cordon without provenance). */
export const ProvenanceBody = Type.Union([Type.Object(provenance, { additionalProperties: false }), Type.Null()]);
export type ProvenanceBody = Shape<typeof ProvenanceBody>;

/** POST .../rebalance. */
export const RebalanceBody = Type.Object(
  {
    shardIds: Type.Array(ShardIdValue, { minItems: 1, maxItems: MAX_BULK_PLACEMENTS }),
    ...provenance,
  },
  { additionalProperties: false },
);
export type RebalanceBody = Shape<typeof RebalanceBody>;

const TrueOrFalse = Type.Union([Type.Literal('true'), Type.Literal('false')]);
/** GET .../placements. */
export const PlacementsQuery = Type.Object(
  { includeExpired: Type.Optional(TrueOrFalse) },
  { additionalProperties: false },
);
export type PlacementsQuery = Shape<typeof PlacementsQuery>;
/** The query of the routes that can dry-run; anything else in it is refused, so a typo never writes for real. */
export const DryRunQuery = Type.Object({ dryRun: Type.Optional(TrueOrFalse) }, { additionalProperties: false });
export type DryRunQuery = Shape<typeof DryRunQuery>;

export const TypeNameParams = Type.Object({ typeName: Type.String({ minLength: 1, maxLength: 128 }) });
export type TypeNameParams = Shape<typeof TypeNameParams>;
export const ShardParams = Type.Object({
  typeName: Type.String({ minLength: 1, maxLength: 128 }),
  shardId: Type.String({ pattern: '^[0-9]{1,15}$' }),
});
export type ShardParams = Shape<typeof ShardParams>;
export const AddressParams = Type.Object({ address: Type.String({ minLength: 1, maxLength: MAX_PARAM_CHARS }) });
export type AddressParams = Shape<typeof AddressParams>;

// ---- Answers --------------------------------------------------------------------------------------------------

/** Every error: `{ error, message }`. */
export const ErrorAnswer = Type.Object({ error: Type.String(), message: Type.String() });
export type ErrorAnswer = Shape<typeof ErrorAnswer>;

/** GET .../placements. */
export const PlacementsAnswer = Type.Object({ placements: Type.Array(PinRecord) });
export type PlacementsAnswer = Shape<typeof PlacementsAnswer>;

/** A written pin whose target no member can take now (cordoned, unreachable, none matching). */
export const PinWarning = Type.Object({ shardId: Type.Integer(), target: Type.String(), message: Type.String() });
/** POST .../placements (202). */
export const PinsWritten = Type.Object({ placements: Type.Array(PinRecord), warnings: Type.Array(PinWarning) });
export type PinsWritten = Shape<typeof PinsWritten>;

const DryRunMove = Type.Object({ shardId: Type.Integer(), from: Type.String(), to: Nullable(Type.String()) });
const DryRunWarning = Type.Object({
  /** Null for a warning about no one shard (the strategy failed). */
  shardId: Nullable(Type.Integer()),
  target: Type.Optional(Type.String()),
  message: Type.String(),
});
const dryRunFields = {
  dryRun: Type.Literal(true),
  moves: Type.Array(DryRunMove),
  /** Shards that would wait without a home (a require pin no member can take). */
  waiting: ShardIds,
  /** Deprecated: the same list as `waiting`, under its old name; removed in the next minor release. */
  withoutHome: ShardIds,
  warnings: Type.Array(DryRunWarning),
};
/** POST .../rebalance?dryRun=true. */
export const RebalanceDryRun = Type.Object(dryRunFields);
export type RebalanceDryRun = Shape<typeof RebalanceDryRun>;
/** POST .../placements?dryRun=true: the pins as they would be written, and the moves they would start. */
export const PlacementsDryRunAnswer = Type.Object({
  ...dryRunFields,
  /** The pins as they would be written: a pin record without what only a write gives it (writer, timestamp). */
  placements: Type.Array(Type.Omit(PinRecord, ['writer', 'hlc', 'expired'])),
});
export type PlacementsDryRunAnswer = Shape<typeof PlacementsDryRunAnswer>;

/** POST .../rebalance (202). */
export const RebalanceAnswer = Type.Object({
  accepted: ShardIds,
  /** Shards never given a home: nothing to move (their first message allocates them). */
  unallocated: ShardIds,
  /** Deprecated: the same list as `unallocated`, under its old name; removed in the next minor release. */
  homeless: ShardIds,
});
export type RebalanceAnswer = Shape<typeof RebalanceAnswer>;

/** GET /actor-ts/cluster/shards/{type}: where every allocated shard lives. */
export const ShardLocationsAnswer = Type.Object({
  regions: Type.Array(Type.Object({ address: Type.String(), shards: ShardIds })),
  /** Shards whose hand-off is in progress: still listed under the region they are leaving. */
  handingOff: ShardIds,
});
export type ShardLocationsAnswer = Shape<typeof ShardLocationsAnswer>;

const ExplainDecision = Type.Enum(['placement', 'placement-unavailable', 'waiting', 'fallback', 'unallocated']);
/** GET .../explain/{shardId}: where the shard is and why, in the coordinator's words. */
export const ExplainAnswer = Type.Object({
  shardId: Type.Integer(),
  home: Nullable(Type.String()),
  handingOff: Type.Boolean(),
  placement: Nullable(PinRecord),
  decision: ExplainDecision,
  /** One plain sentence saying why. */
  message: Type.String(),
  nodes: Type.Array(
    Type.Object({
      address: Type.String(),
      shards: Type.Integer(),
      reachable: Type.Boolean(),
      status: Type.String(),
      cordoned: Type.Boolean(),
      /** Whether the shard's pin allows this node; null when no pin is in force. */
      matches: Nullable(Type.Boolean()),
    }),
  ),
  /** What the coordinator did with the shard lately, oldest first; absent from nodes before 0.3.0. */
  history: Type.Optional(Type.Array(Type.Object({ atMs: Type.Number(), what: Type.String() }))),
  /** The type's entities active on the node that answered (not passivated or stopped); absent before 0.3.0. */
  activeEntities: Type.Optional(Type.Object({ node: Type.String(), count: Type.Integer() })),
});
export type ExplainAnswer = Shape<typeof ExplainAnswer>;

/** One member of GET /actor-ts/cluster/members. */
export const MemberJson = Type.Object({
  address: Type.String(),
  status: Type.String(),
  appVersion: Type.String(),
  /** The member's release (package version); null while unknown, absent from nodes that predate it. */
  release: Type.Optional(Nullable(Type.String())),
  /** The protocol version the answering node speaks with it; null while unknown. */
  protocol: Type.Optional(Nullable(Type.Integer())),
  upNumber: Type.Integer(),
  reachable: Type.Boolean(),
  roles: Type.Array(Type.String()),
  /** Absent from nodes that predate attributes. */
  attributes: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** Absent from nodes that predate cordons. */
  cordoned: Type.Optional(Type.Boolean()),
});
export type MemberJson = Shape<typeof MemberJson>;
export const MembersAnswer = Type.Object({ self: Type.String(), members: Type.Array(MemberJson) });
export type MembersAnswer = Shape<typeof MembersAnswer>;

/** GET /actor-ts/health. */
export const HealthAnswer = Type.Object({
  status: Type.Enum(['ok', 'degraded', 'starting', 'leaving', 'down']),
  /** Why the node is not ok, one line each; empty when ok. */
  reasons: Type.Array(Type.String()),
  memberStatus: Type.Optional(Type.String()),
  self: Type.String(),
  pid: Type.Integer(),
  /** Absent from nodes that predate it; `shardIdFunction` absent from nodes before 0.3. */
  entityTypes: Type.Optional(
    Type.Array(
      Type.Object({
        typeName: Type.String(),
        numberOfShards: Type.Integer(),
        shardIdFunction: Type.Optional(Type.String()),
        /** Its entities active on this node now (issue 37); absent from nodes before 0.3. */
        activeEntities: Type.Optional(Type.Integer()),
        /** Whether its entities commit to the node's entity store (issue 36). */
        durable: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
  placementStore: Type.Object({
    generation: Type.Integer(),
    slots: Type.Integer(),
    baseSlots: Type.Integer(),
    documentItems: Type.Integer(),
  }),
  replication: Type.Object({
    peers: Type.Integer(),
    syncedPeers: Type.Integer(),
    peersBehind: Type.Integer(),
    framesRejected: Type.Integer(),
    sendFailures: Type.Integer(),
    rejectedValues: Type.Object({ outOfRange: Type.Integer(), aheadOfClock: Type.Integer() }),
    heldValues: Type.Integer(),
    quarantinedValues: Type.Integer(),
    awaitingMissingUpdates: Type.Boolean(),
    problems: Type.Array(Type.String()),
  }),
  storage: Type.Object({
    durable: Type.Boolean(),
    path: Nullable(Type.String()),
    bytesOnDisk: Type.Number(),
    lastCommitAt: Nullable(Type.Number()),
    logRecordsSinceSnapshot: Type.Integer(),
    restored: Type.Boolean(),
    failure: Nullable(Type.String()),
  }),
});
export type HealthAnswer = Shape<typeof HealthAnswer>;

/** POST .../members/{address}/cordon (202). */
export const CordonAnswer = Type.Object({
  address: Type.String(),
  cordoned: Type.Literal(true),
  by: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  hlc: HlcShape,
});
export type CordonAnswer = Shape<typeof CordonAnswer>;
/** POST .../members/{address}/drain (202): the cordon, and per entity type the hand-offs it started. */
export const DrainAnswer = Type.Object({
  address: Type.String(),
  cordon: CordonAnswer,
  moves: Type.Record(Type.String(), Type.Array(DryRunMove)),
  /** Types whose shards no other region could take (those stay). */
  warnings: Type.Array(Type.String()),
});
export type DrainAnswer = Shape<typeof DrainAnswer>;

/** One write this node accepted, as the audit lists it. */
export const AuditEntryJson = Type.Object({
  action: Type.Enum(['pin', 'unpin', 'cordon', 'uncordon', 'drain', 'rebalance']),
  typeName: Nullable(Type.String()),
  shardIds: ShardIds,
  target: Nullable(Type.String()),
  by: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  hlc: Nullable(HlcShape),
  /** When this node accepted it (ISO-8601). */
  at: Type.String(),
});
export type AuditEntryJson = Shape<typeof AuditEntryJson>;
/** GET /actor-ts/audit: every write this node accepted, newest first. */
export const AuditAnswer = Type.Object({ entries: Type.Array(AuditEntryJson) });
export type AuditAnswer = Shape<typeof AuditAnswer>;

/** Every answer schema by route, for the test that checks a real node's answers against them. */
export const ANSWERS = {
  health: HealthAnswer,
  members: MembersAnswer,
  shardLocations: ShardLocationsAnswer,
  placements: PlacementsAnswer,
  pinsWritten: PinsWritten,
  placementsDryRun: PlacementsDryRunAnswer,
  rebalance: RebalanceAnswer,
  rebalanceDryRun: RebalanceDryRun,
  explain: ExplainAnswer,
  cordon: CordonAnswer,
  drain: DrainAnswer,
  audit: AuditAnswer,
  error: ErrorAnswer,
} as const;
