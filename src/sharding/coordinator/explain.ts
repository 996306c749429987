// Why one shard is where it is, from the coordinator's state: its home, its pin as the strategy reads it
// (pins, cluster view and clock from the strategy itself, matched with pin-matching.ts, the code allocation
// runs), the candidates allocation would offer now, and the cordons. A pure function of those.
import type { NodeAddress } from '../../cluster/address.js';
import { isGone, type MemberInfo } from '../../cluster/member.js';
import type { CordonView } from '../placements/cordon-view.js';
import type {
  ExplainDecision,
  ExplainNode,
  ShardExplanation,
  ShardHistoryEntry,
} from '../protocol/insight-messages.js';
import type { PinRecord } from '../placements/placement-record.js';
import type { PinContext } from '../strategies/pin-aware.js';
import { homeMatches, isReachable, matchingCandidates, type PinView } from '../strategies/pin-matching.js';
import { activePin, type PlacementPin } from '../placements/placement-pin.js';
import type { CoordinatorEvent } from './shard-life.js';
import type { CoordinatorState } from './state.js';

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
  sources: ExplainSources & { readonly view: PinView; readonly byKey: ReadonlyMap<string, MemberInfo> },
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
  sources: ExplainSources & { readonly view: PinView; readonly byKey: ReadonlyMap<string, MemberInfo> },
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
