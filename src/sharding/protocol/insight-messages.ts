// What explain and dry runs answer, and the messages that carry them between any node and the coordinator:
// the requests (ExplainShard, DryRunPlacements, DryRunRebalance) and their answers (ShardExplained,
// DryRunAnswer). Answers come from the network, so every field is checked and every list and string bounded.
import Type from 'typebox';
import { Nullable, type Shape } from '../../shapes.js';
import { PinMode, PinRecord } from '../placements/pin-shape.js';
import { MAX_PLACEMENT_TARGET_LENGTH } from '../placements/placement-target.js';
import {
  AddressField,
  CountField,
  ListField,
  MAX_SHARD_ID,
  RequestIdField,
  ShardIdField,
  TypeNameField,
} from './wire-values.js';

/** Why a shard is where it is (or nowhere). */
export const EXPLAIN_DECISIONS = ['placement', 'placement-unavailable', 'waiting', 'fallback', 'unallocated'] as const;
/** Why a shard is where it is (or nowhere): one of EXPLAIN_DECISIONS. */
export type ExplainDecision = (typeof EXPLAIN_DECISIONS)[number];

/** History entries one explanation carries at most, and the longest entry text accepted. */
export const MAX_HISTORY = 16;
export const MAX_HISTORY_TEXT = 512;
/** Longest explanation sentence or warning accepted. */
export const MAX_INSIGHT_TEXT = 4096;
const MAX_LIST = MAX_SHARD_ID + 1;
const MAX_NODES = 10_000;
const MAX_STATUS_LENGTH = 32;

/** One region as explain lists it. */
const ExplainNodeField = Type.Object({
  address: AddressField,
  /** How many shards of the type it hosts. */
  shards: Type.Integer({ minimum: 0, maximum: MAX_LIST }),
  reachable: Type.Boolean(),
  /** Its member status (`up`, `leaving`, ...), or `removed` once the membership no longer lists it. */
  status: Type.String({ maxLength: MAX_STATUS_LENGTH }),
  cordoned: Type.Boolean(),
  /** Whether the shard's pin allows this node; null when the shard has no pin in force. */
  matches: Nullable(Type.Boolean()),
});
/** One region as explain lists it. */
export type ExplainNode = Shape<typeof ExplainNodeField>;

/** One thing the coordinator did with a shard. */
const HistoryEntryField = Type.Object({
  /** When, in epoch milliseconds (the coordinator's clock). */
  atMs: CountField,
  /** What, in a few words: `allocated to B`, `handed off from B (drain)`. */
  what: Type.String({ maxLength: MAX_HISTORY_TEXT }),
});
export type ShardHistoryEntry = Shape<typeof HistoryEntryField>;

/** The answer of `GET .../explain/{shardId}`: where the shard is and why, in the coordinator's words. */
const ExplanationField = Type.Object({
  shardId: ShardIdField,
  /** The address hosting it, or null. */
  home: Nullable(AddressField),
  handingOff: Type.Boolean(),
  /** The pin as `placements ls` lists it, or null. */
  placement: Nullable(PinRecord),
  decision: Type.Enum(EXPLAIN_DECISIONS),
  /** One plain sentence saying why. */
  message: Type.String({ maxLength: MAX_INSIGHT_TEXT }),
  nodes: ListField(ExplainNodeField, MAX_NODES),
  /**
   * What the coordinator did with the shard lately, oldest first (at most MAX_HISTORY entries): its allocations,
   * starts and hand-offs with their cause. Empty from a coordinator of a release before 0.3.0 (which sends none:
   * the message's rule), and for a shard this coordinator has not touched since it took over.
   */
  history: Type.Optional(ListField(HistoryEntryField, MAX_HISTORY)),
});
/** The answer of `GET .../explain/{shardId}`: where the shard is and why (its history always a list once read). */
export type ShardExplanation = Shape<typeof ExplanationField> & { readonly history: ReadonlyArray<ShardHistoryEntry> };

/** One hand-off a dry run found: `to` is null when the shard would wait without a home (a require pin). */
const DryRunMoveField = Type.Object({ shardId: ShardIdField, from: AddressField, to: Nullable(AddressField) });
/** One hand-off a dry run found: `to` is null when the shard would wait without a home (a require pin). */
export type DryRunMove = Shape<typeof DryRunMoveField>;

/** A warning of a dry run: a pin that could not be honoured, or the strategy failing. */
const DryRunWarningField = Type.Object({
  /** Null for a warning about no one shard (the strategy failed). */
  shardId: Nullable(ShardIdField),
  /** The pin's target, when the warning is about one (null is read as absent). */
  target: Type.Optional(Nullable(Type.String({ maxLength: MAX_PLACEMENT_TARGET_LENGTH }))),
  message: Type.String({ maxLength: MAX_INSIGHT_TEXT }),
});
/** A warning of a dry run: a pin that could not be honoured, or the strategy failing. */
export type DryRunWarning = Omit<Shape<typeof DryRunWarningField>, 'target'> & { readonly target?: string };

/** What the coordinator would start right now, and what it would warn about. */
export interface DryRunMoves {
  readonly moves: ReadonlyArray<DryRunMove>;
  readonly warnings: ReadonlyArray<DryRunWarning>;
}

/** A pin as a placements dry run proposes it: validated by the controller, the expiry fixed in epoch ms. */
const ProposedPinField = Type.Object({
  shardId: ShardIdField,
  /** Canonical target. */
  target: Type.String({ maxLength: MAX_PLACEMENT_TARGET_LENGTH }),
  mode: PinMode,
  expiresAt: Nullable(CountField),
});
/** A pin as a placements dry run proposes it: validated by the controller, the expiry fixed in epoch ms. */
export type ProposedPin = Shape<typeof ProposedPinField>;

const HEAD = { typeName: TypeNameField, requestId: RequestIdField };

/** The insight messages: each type and its fields beyond `type`. */
export const INSIGHT_SCHEMAS = {
  /** Requester -> C. Why is this shard where it is? */
  ExplainShard: Type.Object({ ...HEAD, shardId: ShardIdField }),
  /** C -> requester. Null when the shard id is out of range for the type. */
  ShardExplained: Type.Object({ ...HEAD, explanation: Nullable(ExplanationField) }),
  /** Requester -> C. Which shards would move if these pins were written now? Nothing is written. */
  DryRunPlacements: Type.Object({ ...HEAD, pins: ListField(ProposedPinField, MAX_LIST) }),
  /** Requester -> C. Which shards would move, and where, if these were handed off now? Nothing is handed off. */
  DryRunRebalance: Type.Object({ ...HEAD, shardIds: ListField(ShardIdField, MAX_LIST) }),
  /** C -> requester. The answer to either dry run. */
  DryRunAnswer: Type.Object({
    ...HEAD,
    moves: ListField(DryRunMoveField, MAX_LIST),
    warnings: ListField(DryRunWarningField, MAX_LIST),
  }),
};

type Declared<T extends keyof typeof INSIGHT_SCHEMAS> = Shape<(typeof INSIGHT_SCHEMAS)[T]> & { readonly type: T };

export type InsightMessage =
  | Declared<'ExplainShard'>
  | (Omit<Declared<'ShardExplained'>, 'explanation'> & { readonly explanation: ShardExplanation | null })
  | Declared<'DryRunPlacements'>
  | Declared<'DryRunRebalance'>
  | (Omit<Declared<'DryRunAnswer'>, 'warnings'> & DryRunMoves);

/** The insight messages a coordinator answers (the rest are its answers). */
export type InsightRequest = Extract<
  InsightMessage,
  { readonly type: 'ExplainShard' | 'DryRunPlacements' | 'DryRunRebalance' }
>;

/** The rules beyond the schemas: an absent history is empty, a null warning target is absent. */
export const INSIGHT_RULES = {
  ShardExplained: (message: Declared<'ShardExplained'>): Declared<'ShardExplained'> => {
    const { explanation } = message;
    if (explanation === null || explanation.history !== undefined) return message;
    return { ...message, explanation: { ...explanation, history: [] } };
  },
  DryRunAnswer: (message: Declared<'DryRunAnswer'>): Declared<'DryRunAnswer'> => {
    if (message.warnings.every((warning) => warning.target !== null)) return message;
    const warnings = message.warnings.map(({ target, ...rest }) => (target === null ? rest : { ...rest, target }));
    return { ...message, warnings };
  },
};
