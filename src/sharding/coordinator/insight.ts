// The coordinator's answers to explain and dry-run requests: read from its state, its candidates, its
// strategy (a pin-aware one is asked for its pins and copied with other pins; see pin-aware.ts), the
// cordons and the listed pins. Answering changes nothing: no state, no strategy warning record, no log.
// Three sections: the answer to one request (here), explain (why one shard is where it is) and dry runs (the
// hand-offs the coordinator would start now), each headed by what it is for.
import type { NodeAddress } from '../../cluster/address.js';
import { type MemberInfo, isGone } from '../../cluster/member.js';
import { NO_CORDONS, type CordonView } from '../placements/cordon-view.js';
import {
  MAX_HISTORY,
  MAX_INSIGHT_TEXT,
  type DryRunMove,
  type DryRunWarning,
  type InsightRequest,
  type ProposedPin,
  type ExplainDecision,
  type ExplainNode,
  type ShardExplanation,
  type ShardHistoryEntry,
} from '../protocol/insight-messages.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { AllocationStrategy } from '../strategies/index.js';
import { isPinAware, type PinContext } from '../strategies/pin-aware.js';
import { type PinLike, activePin, PlacementPin } from '../placements/placement-pin.js';
import { judgeRebalanceNow } from './operator-requests.js';
import type { CoordinatorState, CoordinatorEvent } from './state.js';
import type { PinRecord } from '../placements/placement-record.js';
import { homeMatches, isReachable, matchingCandidates, type ClusterReading } from '../strategies/pin-matching.js';
import { tryParsePlacementTarget } from '../placements/placement-target.js';
import { chooseHome, shardsToMove } from './allocation.js';

/** Moves listed in one answer at most (about 100 bytes each on the wire); the rest are counted in a warning. */
export const MAX_LISTED_MOVES = 50_000;
const MAX_WARNINGS = 10_000;

/** What the answers read besides the state. */
export interface InsightSources {
  /** Who may get shards now (Allocator.candidates). */
  candidates(): NodeAddress[];
  /** The cluster's members as this node sees them now (ShardingContext.membership). */
  members(): ReadonlyArray<MemberInfo>;
  /** The coordinator's clock (its scheduler), for a strategy that keeps none of its own. */
  now(): number;
}

/** What the answers read of a coordinator's settings (CoordinatorConfig extends it). */
export interface InsightSettings {
  readonly numberOfShards: number;
  readonly strategy: AllocationStrategy;
  /** Nodes that take no new shards (issue 12); default NO_CORDONS. */
  readonly cordons?: CordonView;
  /** A shard's pin as listed (stored, not expired at `now`), for explain; default none. */
  readonly listedPlacement?: (shardId: number, now: number) => PinRecord | undefined;
}

/** The coordinator's answerer: what it reads, bound once; each call reads the current state. */
export function coordinatorInsight(
  settings: InsightSettings,
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
        const listed = settings.listedPlacement?.(shardId, pins?.now ?? sources.now());
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
  settings: InsightSettings,
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
  settings: InsightSettings,
  state: CoordinatorState,
  candidates: NodeAddress[],
  shardIds: ReadonlyArray<number>,
  warn: Warn,
): DryRunMove[] {
  const verdict = judgeRebalanceNow(shardIds, settings.numberOfShards, state);
  for (const shardId of verdict.unknown) warn({ shardId, message: `shard ${shardId} is out of range` });
  for (const shardId of verdict.unallocated)
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

// Why one shard is where it is, from the coordinator's state: its home, its pin as the strategy reads it
// (pins, cluster view and clock from the strategy itself, matched with pin-matching.ts, the code allocation
// runs), the candidates allocation would offer now, and the cordons. A pure function of those.

export interface ExplainSources {
  readonly state: Pick<CoordinatorState, 'homeOf' | 'isHandingOff' | 'locations' | 'historyOf'>;
  readonly members: ReadonlyArray<MemberInfo>;
  /** The regions allocation would offer a shard now (allocationCandidates). */
  readonly candidates: ReadonlyArray<NodeAddress>;
  readonly cordons: CordonView;
  /** What the strategy decides by; undefined when it reads no pins. */
  readonly pins: PinContext | undefined;
  /** The shard's pin as listed (stored and not expired), or undefined. */
  readonly listed: PinRecord | undefined;
  /** Why the fallback has the shard on its home (AllocationStrategy.reasonFor), e.g. "ring home, under its bound". */
  readonly fallbackReason?: string | undefined;
}

export function explainShard(shardId: number, sources: ExplainSources): ShardExplanation {
  const { state, members, candidates, cordons, pins, listed } = sources;
  const pin = pins === undefined ? undefined : activePin(pins.pins.get(shardId), pins.now);
  const home = state.homeOf(shardId) ?? null;
  const handingOff = state.isHandingOff(shardId);
  const byKey = new Map(members.map((member) => [member.address.toString(), member]));
  const nodes: ExplainNode[] = state.locations().map(({ address, shards }) => {
    const member = byKey.get(address);
    return {
      address,
      shards: shards.length,
      reachable: member?.reachable ?? false,
      status: member?.status ?? 'removed',
      cordoned: cordons.isCordoned(address),
      matches: pin === undefined || pins === undefined ? null : homeMatches(pin, address, pins.view),
    };
  });
  const verdict =
    pin === undefined || pins === undefined
      ? unpinned(shardId, home, pins === undefined ? listed : undefined)
      : pinned(shardId, home, pin, { ...sources, view: pins.view, byKey });
  const { decision } = verdict;
  // Only where the fallback decided: elsewhere the pin (or no home at all) is the reason.
  const reason = sources.fallbackReason;
  const fallbackDecided = decision === 'fallback' || decision === 'placement-unavailable';
  const message =
    fallbackDecided && reason !== undefined && reason !== '' ? `${verdict.message} (${reason})` : verdict.message;
  const moving = handingOff ? `; a hand-off of it is in progress` : '';
  const history = historyOf(shardId, state);
  return {
    shardId,
    home,
    handingOff,
    placement: listed ?? null,
    decision,
    message: `${message}${moving}.`,
    nodes,
    history,
  };
}

/** The shard's last events in words, oldest first. */
function historyOf(shardId: number, state: ExplainSources['state']): ShardHistoryEntry[] {
  return state.historyOf(shardId).flatMap(({ atMs, event }) => {
    const what = describeEvent(event);
    return what === undefined ? [] : [{ atMs, what }];
  });
}

/** What an event did to the shard it is recorded for, in a few words; undefined for those that say nothing. */
export function describeEvent(event: CoordinatorEvent): string | undefined {
  switch (event.type) {
    case 'ShardAllocated':
      return `allocated to ${event.region}`;
    case 'ShardStarted':
      return `started on ${event.region}`;
    case 'ShardClaimed':
      return `reported running by ${event.region}, which became its home`;
    case 'ShardAdopted':
      return `started by ${event.region} without a home here, which became its home`;
    case 'ShardDeferred':
      return 'asked for while the coordinator warmed up: waiting';
    case 'ShardWaiting':
      return 'no home now: the allocation strategy allows none of the candidates';
    case 'RegionTerminated':
      return `lost its home: ${event.region} was removed`;
    case 'HandOffStarted':
      return `handed off from ${event.handOff.owner} (${event.handOff.cause})`;
    case 'HandOffCompleted':
      return 'stopped on its old home: hand-off complete';
    case 'HandOffTimedOut':
      return 'hand-off timed out: it stays where it was';
    default:
      return undefined;
  }
}

interface Verdict {
  readonly decision: ExplainDecision;
  /** One sentence without its final full stop. */
  readonly message: string;
}

/** No pin in force; `ignored` is a pin stored for a strategy that reads none. */
function unpinned(shardId: number, home: string | null, ignored: PinRecord | undefined): Verdict {
  const unread =
    ignored === undefined
      ? ''
      : ` (its pin to ${ignored.target} is not read: this type's allocation strategy reads no pins)`;
  if (home === null) {
    return {
      decision: 'unallocated',
      message: `shard ${shardId} has no home yet${unread}: its first message allocates it through the allocation strategy`,
    };
  }
  const why =
    ignored === undefined
      ? 'has no pin'
      : `is pinned to ${ignored.target}, but this type's allocation strategy reads no pins`;
  return { decision: 'fallback', message: `shard ${shardId} ${why}: the fallback strategy placed it on ${home}` };
}

function pinned(
  shardId: number,
  home: string | null,
  pin: PlacementPin,
  sources: ExplainSources & { readonly view: ClusterReading; readonly byKey: ReadonlyMap<string, MemberInfo> },
): Verdict {
  const { candidates, view } = sources;
  const target = pin.toString();
  const rule = `${pin.mode === 'require' ? 'requires' : 'prefers'} ${target}`;
  if (home !== null && homeMatches(pin, home, view)) {
    const note = sources.cordons.isCordoned(home)
      ? ` (cordoned: it keeps what it hosts but takes no new shards)`
      : !isReachable(home, view)
        ? ` (unreachable now)`
        : '';
    return { decision: 'placement', message: `shard ${shardId} is on ${home}${note} because its pin ${rule}` };
  }
  if (matchingCandidates(pin, candidates, view).length > 0) {
    if (home === null)
      return {
        decision: 'unallocated',
        message: `shard ${shardId} has no home yet: its pin ${rule}, where its first message will allocate it`,
      };
    return {
      decision: 'placement',
      message: `shard ${shardId} is on ${home}, but its pin ${rule}, which can take it: it moves there at the next rebalance round`,
    };
  }
  const reason = unavailable(pin, sources);
  if (pin.mode === 'require') {
    const where = home === null ? 'it has no home and waits' : `it is handed off from ${home} and waits without a home`;
    return {
      decision: 'waiting',
      message: `shard ${shardId} requires ${target}, which ${reason}: ${where} until a matching node can take it`,
    };
  }
  if (home === null) {
    return {
      decision: 'unallocated',
      message: `shard ${shardId} has no home yet: it prefers ${target}, which ${reason}, so its first message lets the fallback strategy place it`,
    };
  }
  return {
    decision: 'placement-unavailable',
    message: `shard ${shardId} prefers ${target}, which ${reason}, so the fallback strategy placed it on ${home}`,
  };
}

/** Why no candidate can take the pinned shard, as a clause after "which". */
function unavailable(
  pin: PlacementPin,
  sources: ExplainSources & { readonly view: ClusterReading; readonly byKey: ReadonlyMap<string, MemberInfo> },
): string {
  const { candidates, cordons, view, byKey } = sources;
  const isCandidate = (key: string): boolean => candidates.some((candidate) => candidate.toString() === key);
  if (pin.target.kind === 'address') {
    const key = pin.target.canonical;
    const member = byKey.get(key);
    if (member === undefined) return 'is not a member of the cluster';
    if (isGone(member.status)) return `is ${member.status}`;
    if (cordons.isCordoned(key)) return 'is cordoned';
    if (!isReachable(key, view) || !member.reachable) return 'is unreachable';
    if (member.status !== 'up') return `is ${member.status}, not up`;
    return isCandidate(key) ? 'cannot take shards now' : 'hosts no region of this entity type';
  }
  const matching = [...byKey.values()].filter(
    (member) => !isGone(member.status) && homeMatches(pin, member.address.toString(), view),
  );
  if (matching.length === 0) return 'no member matches';
  const open = matching.filter((member) => !cordons.isCordoned(member.address.toString()));
  if (open.length === 0) return 'matches only cordoned nodes';
  const reachable = open.filter((member) => member.reachable && isReachable(member.address.toString(), view));
  if (reachable.length === 0) return 'matches only unreachable or cordoned nodes';
  if (!reachable.some((member) => member.status === 'up')) return 'matches no node that is up';
  return 'matches no node that hosts a region of this entity type';
}

// Dry runs: the hand-offs the coordinator would start right now and where each shard would land, computed
// with the calls the coordinator itself makes (shardsToMove for a rebalance round, judgeRebalanceNow for a
// manual move, chooseHome when a hand-off ends) on a copy of its shard map. Nothing is sent or recorded.

export type ShardMap = ReadonlyMap<string, ReadonlySet<number>>;

/**
 * Where each shard of `handedOff` lands: hand-offs in this order, each shard allocated (chooseHome, as
 * ShardHomes.freed does) when its own hand-off ends, with the earlier ones already landed. A shard without
 * a home, or already moving, is skipped (HandOffs.begin starts nothing for it). `to` is null when the
 * strategy has no home for it now.
 */
export function landings(
  strategy: AllocationStrategy,
  candidates: ReadonlyArray<NodeAddress>,
  shards: ShardMap,
  inProgress: ReadonlySet<number>,
  handedOff: Iterable<number>,
): DryRunMove[] {
  const map = new Map([...shards].map(([key, owned]) => [key, new Set(owned)]));
  const homes = new Map<number, string>();
  for (const [key, owned] of map) for (const shardId of owned) homes.set(shardId, key);
  const moves: DryRunMove[] = [];
  for (const shardId of new Set(handedOff)) {
    const from = homes.get(shardId);
    if (from === undefined || inProgress.has(shardId)) continue;
    map.get(from)?.delete(shardId);
    homes.delete(shardId);
    const to = chooseHome(strategy, shardId, candidates, map)?.region ?? null;
    if (to !== null) {
      let owned = map.get(to);
      if (owned === undefined) map.set(to, (owned = new Set()));
      owned.add(shardId);
      homes.set(shardId, to);
    }
    moves.push({ shardId, from, to });
  }
  return moves;
}

/** The shards a dry run's moves would leave waiting (the strategy has no home for them now), ascending. */
export function waitingIn(moves: ReadonlyArray<DryRunMove>): number[] {
  return moves
    .filter((move) => move.to === null)
    .map((move) => move.shardId)
    .sort((a, b) => a - b);
}

/** @deprecated The old name of `waitingIn`; removed in the next minor release. */
export const withoutHome = waitingIn;

/** The moves of one rebalance round (what Allocator.shardsToRebalance picks, then landings); or the strategy's error. */
export function rebalanceRoundMoves(
  strategy: AllocationStrategy,
  candidates: ReadonlyArray<NodeAddress>,
  shards: ShardMap,
  inProgress: ReadonlySet<number>,
): { readonly moves: DryRunMove[]; readonly error?: string } {
  let allocated = 0;
  for (const owned of shards.values()) allocated += owned.size;
  if (candidates.length === 0 || allocated === 0) return { moves: [] };
  const chosen = shardsToMove(strategy, candidates, shards, inProgress);
  if ('error' in chosen) return { moves: [], error: chosen.error };
  return { moves: landings(strategy, candidates, shards, inProgress, chosen.shards) };
}

/**
 * The pins as they would read once `proposed` were written: each proposed pin replaces the shard's current
 * one. A proposed target that cannot be parsed (the controller validated it, so only a foreign sender) is
 * left out and reported by shard id.
 */
export function pinsWith(
  current: ReadonlyMap<number, PinLike>,
  proposed: ReadonlyArray<ProposedPin>,
): { readonly pins: ReadonlyMap<number, PinLike>; readonly unreadable: number[] } {
  const pins = new Map(current);
  const unreadable: number[] = [];
  for (const { shardId, target, mode, expiresAt } of proposed) {
    const parsed = tryParsePlacementTarget(target);
    if (parsed === undefined) unreadable.push(shardId);
    else pins.set(shardId, new PlacementPin(parsed, mode, expiresAt));
  }
  return { pins, unreadable };
}
