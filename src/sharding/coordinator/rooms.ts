// The coordinator's rooms, built and wired to one another: each room gets its settings and its port, and this
// is the one place that says which room answers which port member (each member's comment, in the room's own
// file, names the same). Built in dependency order, so no room is called before it exists; the calls back
// into the dispatcher itself go through DispatcherPort.
import type { Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import { NO_CORDONS } from '../placements/cordon-view.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { ShardingContext } from '../core/sharding-context.js';
import { Allocator } from './allocation.js';
import { ChangeTimer } from './change-timer.js';
import { DownRemovalMargin } from './down-removal-margin.js';
import { CoordinatorCordons, DrainRequests } from './drain.js';
import { FailoverReport } from './failover-report.js';
import { HandOffStates } from './hand-off-state.js';
import { HandOffs } from './hand-offs.js';
import { coordinatorInsight } from './insight.js';
import { OperatorRequests } from './operator-requests.js';
import type { CoordinatorConfig } from './settings.js';
import { ShardHomes } from './shard-homes.js';
import type { HandOffCause } from './shard-life.js';
import { CoordinatorState } from './state.js';
import { WarmUpGate } from './warm-up-gate.js';

/** What the rooms call on the dispatcher itself (ShardCoordinator implements it). */
export interface DispatcherPort {
  /** One rebalance round: the strategy names shards to move, each gets a hand-off. */
  rebalanceRound(): void;
  /** A down-removal margin ended: the membership check runs again and removes the regions whose margin ended. */
  membershipChanged(): void;
  /** The warm-up gate opened: requests deferred until then are answered. */
  warm(reason: string): void;
  /** A placement rule expired (the strategy's next change came due): a round, and waiting shards asked again. */
  placementExpired(): void;
  /** Sends one message in the current dispatch (or one of its own), in order with its other sends. */
  send(to: string, message: ShardingMessage): void;
  /** Starts a hand-off of a shard that has a home, in a dispatch of its own (HandOffs.begin). */
  handOff(shardId: number, cause: HandOffCause): void;
}

export interface CoordinatorRooms {
  readonly state: CoordinatorState;
  readonly gate: WarmUpGate;
  readonly margin: DownRemovalMargin;
  readonly operator: OperatorRequests;
  readonly drains: DrainRequests;
  readonly handOffs: HandOffs;
  /** Entity state between the old host's stop and the new home's start. */
  readonly states: HandOffStates;
  readonly allocator: Allocator;
  readonly homes: ShardHomes;
  readonly changeTimer: ChangeTimer;
  readonly failovers: FailoverReport;
  /** The send every room's SendPort is: a moved shard's state goes ahead of its HostShard. */
  send(to: string, message: ShardingMessage): void;
}

export function wireRooms(
  settings: CoordinatorConfig,
  ctx: ShardingContext,
  logger: Logger,
  scheduler: Scheduler,
  dispatcher: DispatcherPort,
): CoordinatorRooms {
  const { typeName, role, strategy, events } = settings;
  const { config } = ctx;
  const state = new CoordinatorState(() => scheduler.now());
  const basics = { typeName, state, logger };
  const members = () => ctx.membership.members();
  const states = new HandOffStates(
    { typeName, maxBytes: config.maxHandOffStateBytes, logger },
    {
      lost: (entities) => events?.onEntitySnapshots?.(typeName, 'lost', entities),
      release: (source, shardId, handOffId) =>
        ctx.send(source, { type: 'ShardStateReleased', typeName, shardId, handOffId }),
    },
  );
  const send = (to: string, message: ShardingMessage): void => {
    // A moved shard's state goes first, on the same connection: the new home restores before it starts.
    if (message.type === 'HostShard') for (const chunk of states.before(to, message.shardId)) ctx.send(to, chunk);
    ctx.send(to, message);
  };
  const cordons = new CoordinatorCordons(settings.cordons ?? NO_CORDONS, () => scheduler.now());
  const allocator = new Allocator({ ...basics, role, strategy, cordons, members });
  const margin = new DownRemovalMargin(config.downRemovalMarginMs, scheduler, {
    ended: () => dispatcher.membershipChanged(),
    ...(settings.probe === undefined ? {} : { probe: settings.probe }),
  });
  const gate = new WarmUpGate(
    { role, warmupMs: config.coordinatorWarmupMs, scheduler, logger },
    {
      members,
      isRegistered: (address) => state.isRegistered(address),
      // Just downed and never registered with this coordinator: it may still run shards nobody here knows of.
      downedUnregistered: () => margin.anyInMargin((key) => !state.isRegistered(key), scheduler.now()),
      warm: (reason) => dispatcher.warm(reason),
    },
  );
  const homes = new ShardHomes({ typeName, logger, allocator, gate });
  const handOffs = new HandOffs({ typeName, logger, now: () => scheduler.now(), timeoutMs: config.handOffTimeoutMs });
  const requests = {
    send: (to: string, message: ShardingMessage) => dispatcher.send(to, message),
    whenWarm: (action: () => void) => gate.whenWarm(action),
    handOff: (shardId: number, cause: HandOffCause) => dispatcher.handOff(shardId, cause),
  };
  const candidates = () => allocator.candidates();
  const operator = new OperatorRequests(
    { ...basics, numberOfShards: settings.numberOfShards },
    {
      ...requests,
      rebalanceRound: () => dispatcher.rebalanceRound(),
      insight: coordinatorInsight(settings, state, { candidates, members }),
    },
  );
  const drains = new DrainRequests({ ...basics, strategy, cordons }, { ...requests, candidates });
  const changeTimer = new ChangeTimer(strategy, scheduler, logger, { changed: () => dispatcher.placementExpired() });
  const failovers = new FailoverReport(events);
  return {
    state,
    gate,
    margin,
    operator,
    drains,
    handOffs,
    states,
    allocator,
    homes,
    changeTimer,
    failovers,
    send,
  };
}
