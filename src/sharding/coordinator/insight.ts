// The coordinator's answers to explain and dry-run requests: read from its state, its candidates, its
// strategy (a pin-aware one is asked for its pins and copied with other pins; see pin-aware.ts), the
// cordons and the listed pins. Answering changes nothing: no state, no strategy warning record, no log.
import type { NodeAddress } from '../../cluster/address.js';
import type { MemberInfo } from '../../cluster/member.js';
import { NO_CORDONS } from '../placements/cordon-view.js';
import {
  MAX_HISTORY,
  MAX_INSIGHT_TEXT,
  type DryRunMove,
  type DryRunWarning,
  type InsightRequest,
  type ProposedPin,
} from '../protocol/insight-messages.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { AllocationStrategy } from '../strategies/index.js';
import { isPinAware } from '../strategies/pin-aware.js';
import type { PinLike } from '../placements/placement-pin.js';
import { landings, pinsWith, rebalanceRoundMoves } from './dry-run.js';
import { explainShard } from './explain.js';
import { judgeRebalanceNow } from './operator-requests.js';
import type { CoordinatorConfig } from './settings.js';
import type { CoordinatorState } from './state.js';

/** Moves listed in one answer at most (about 100 bytes each on the wire); the rest are counted in a warning. */
export const MAX_LISTED_MOVES = 50_000;
const MAX_WARNINGS = 10_000;

/** What the answers read besides the state. */
export interface InsightSources {
  /** Who may get shards now (Allocator.candidates). */
  candidates(): NodeAddress[];
  /** The cluster's members as this node sees them now (ShardingContext.membership). */
  members(): ReadonlyArray<MemberInfo>;
}

/** The coordinator's answerer: what it reads, bound once; each call reads the current state. */
export function coordinatorInsight(
  settings: CoordinatorConfig,
  state: CoordinatorState,
  sources: InsightSources,
): (request: InsightRequest) => ShardingMessage {
  return (request) => {
    const { typeName, requestId } = request;
    switch (request.type) {
      case 'ExplainShard': {
        const { shardId } = request;
        if (shardId >= settings.numberOfShards)
          return { type: 'ShardExplained', typeName, requestId, explanation: null };
        const { strategy } = settings;
        const pins = isPinAware(strategy) ? strategy.pinContext() : undefined;
        const listed = settings.listedPlacement?.(shardId, pins?.now ?? Date.now());
        const offered = sources.candidates();
        const explanation = explainShard(shardId, {
          state,
          members: sources.members(),
          candidates: offered,
          cordons: settings.cordons ?? NO_CORDONS,
          pins,
          listed,
          fallbackReason: fallbackReason(strategy, shardId, state, offered),
        });
        return {
          type: 'ShardExplained',
          typeName,
          requestId,
          explanation: {
            ...explanation,
            message: explanation.message.slice(0, MAX_INSIGHT_TEXT),
            history: explanation.history.slice(-MAX_HISTORY),
          },
        };
      }
      case 'DryRunPlacements':
        return answer(request, (warn) => dryRunPlacements(settings, state, sources.candidates(), request.pins, warn));
      case 'DryRunRebalance':
        return answer(request, (warn) =>
          dryRunRebalance(settings, state, sources.candidates(), request.shardIds, warn),
        );
    }
  };
}

/** The strategy's own clause for why the shard is on its home; a strategy that throws here adds nothing. */
function fallbackReason(
  strategy: AllocationStrategy,
  shardId: number,
  state: CoordinatorState,
  candidates: NodeAddress[],
): string | undefined {
  const home = state.homeOf(shardId);
  if (home === undefined || strategy.reasonFor === undefined) return undefined;
  try {
    const reason: unknown = strategy.reasonFor(shardId, home, candidates, state.shardMapSnapshot());
    return typeof reason === 'string' ? reason.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}

type Warn = (warning: DryRunWarning) => void;

function answer(request: InsightRequest, run: (warn: Warn) => DryRunMove[]): ShardingMessage {
  const warnings: DryRunWarning[] = [];
  const warn: Warn = (warning) => {
    if (warnings.length < MAX_WARNINGS)
      warnings.push({ ...warning, message: warning.message.slice(0, MAX_INSIGHT_TEXT) });
  };
  const moves = run(warn);
  if (moves.length > MAX_LISTED_MOVES)
    warn({ shardId: null, message: `${moves.length - MAX_LISTED_MOVES} more moves are not listed` });
  return {
    type: 'DryRunAnswer',
    typeName: request.typeName,
    requestId: request.requestId,
    moves: moves.slice(0, MAX_LISTED_MOVES),
    warnings,
  };
}

/** The strategy the dry run runs: a pin-aware one over `pins` (default: its own), its warnings to `warn`. */
function silent(strategy: AllocationStrategy, warn: Warn, pins?: ReadonlyMap<number, PinLike>): AllocationStrategy {
  if (!isPinAware(strategy)) return strategy;
  return strategy.withPins(pins ?? strategy.pinContext().pins, (message, details) => warn(warningOf(message, details)));
}

/** What a placements write starts: the rebalance round placementsChanged triggers, with the new pins in force. */
function dryRunPlacements(
  settings: CoordinatorConfig,
  state: CoordinatorState,
  candidates: NodeAddress[],
  proposed: ReadonlyArray<ProposedPin>,
  warn: Warn,
): DryRunMove[] {
  const { strategy, numberOfShards } = settings;
  const inRange = proposed.filter((pin) => pin.shardId < numberOfShards);
  for (const pin of proposed)
    if (pin.shardId >= numberOfShards) warn({ shardId: pin.shardId, message: `shard ${pin.shardId} is out of range` });
  let hypothetical = strategy;
  if (isPinAware(strategy)) {
    const { pins, unreadable } = pinsWith(strategy.pinContext().pins, inRange);
    for (const shardId of unreadable)
      warn({ shardId, message: `shard ${shardId}: the target cannot be read; the pin is left out` });
    hypothetical = silent(strategy, warn, pins);
  } else {
    for (const pin of inRange) {
      warn({
        shardId: pin.shardId,
        target: pin.target,
        message: `shard ${pin.shardId}: this type's allocation strategy reads no pins; the pin would be stored but not honoured`,
      });
    }
  }
  const { moves, error } = rebalanceRoundMoves(
    hypothetical,
    candidates,
    state.shardMapSnapshot(),
    new Set(state.handingOff()),
  );
  if (error !== undefined)
    warn({ shardId: null, message: `the allocation strategy's rebalance threw: ${error}; no shard would move` });
  return moves;
}

/** What RebalanceNow starts: a hand-off of each named shard with a home, each re-allocated through the strategy. */
function dryRunRebalance(
  settings: CoordinatorConfig,
  state: CoordinatorState,
  candidates: NodeAddress[],
  shardIds: ReadonlyArray<number>,
  warn: Warn,
): DryRunMove[] {
  const verdict = judgeRebalanceNow(shardIds, settings.numberOfShards, state);
  for (const shardId of verdict.unknown) warn({ shardId, message: `shard ${shardId} is out of range` });
  for (const shardId of verdict.homeless)
    warn({ shardId, message: `shard ${shardId} has no home yet: nothing to move; its first message allocates it` });
  const starting = new Set(verdict.toHandOff);
  for (const shardId of verdict.accepted)
    if (!starting.has(shardId)) warn({ shardId, message: `shard ${shardId} is already being handed off` });
  return landings(
    silent(settings.strategy, warn),
    candidates,
    state.shardMap(),
    new Set(state.handingOff()),
    verdict.toHandOff,
  );
}

function warningOf(message: string, details: object): DryRunWarning {
  const { shardId, target } = details as { shardId?: unknown; target?: unknown };
  return {
    shardId: typeof shardId === 'number' ? shardId : null,
    ...(typeof target === 'string' ? { target } : {}),
    message,
  };
}
