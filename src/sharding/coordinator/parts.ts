// Builds the parts a coordinator dispatches to, in dependency order, each given the concrete parts it reads
// (no ports: a call lands on the code that answers it). The parts record what they decide in the dispatch's
// Effects; the one call back is an input: a member's death confirmed by a probe.
import type { Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import { NO_CORDONS } from '../placements/cordon-view.js';
import type { InsightRequest } from '../protocol/insight-messages.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { ShardingContext } from '../core/sharding-context.js';
import { Allocator, ShardHomes } from './allocation.js';
import { DownRemovalMargin } from './down-removal-margin.js';
import { FailoverReport, WarmUpGate } from './membership.js';
import { HandOffStates } from './hand-off-state.js';
import { HandOffs } from './hand-offs.js';
import { coordinatorInsight } from './insight.js';
import { CoordinatorCordons, OperatorRequests } from './operator-requests.js';
import type { CoordinatorConfig } from './settings.js';
import { CoordinatorState } from './state.js';

/** Inputs that reach the coordinator from outside a dispatch. */
export interface CoordinatorInputs {
  /** A member's death was confirmed (its margin ended): the membership check runs again. */
  membershipChanged(): void;
}

export interface CoordinatorParts {
  readonly state: CoordinatorState;
  readonly gate: WarmUpGate;
  readonly margin: DownRemovalMargin;
  readonly operator: OperatorRequests;
  /** The answer to an explain or dry-run request, changing nothing (insight.ts). */
  readonly insight: (request: InsightRequest) => ShardingMessage;
  readonly handOffs: HandOffs;
  /** Entity state between the old host's stop and the new home's start. */
  readonly states: HandOffStates;
  readonly allocator: Allocator;
  readonly homes: ShardHomes;
  readonly failovers: FailoverReport;
}

/** The parts of one coordinator, over one state. */
export function buildParts(
  settings: CoordinatorConfig,
  ctx: ShardingContext,
  logger: Logger,
  scheduler: Scheduler,
  inputs: CoordinatorInputs,
): CoordinatorParts {
  const { typeName, role, strategy, events } = settings;
  const { config } = ctx;
  const state = new CoordinatorState(() => scheduler.now());
  const basics = { typeName, state, logger };
  const members = () => ctx.membership.members();
  const states = new HandOffStates({ typeName, maxBytes: config.maxHandOffStateBytes, logger });
  const cordons = new CoordinatorCordons(settings.cordons ?? NO_CORDONS, () => scheduler.now());
  const allocator = new Allocator({ ...basics, role, strategy, cordons, members, states });
  const margin = new DownRemovalMargin(config.downRemovalMarginMs, scheduler, {
    confirmed: () => inputs.membershipChanged(),
    ...(settings.probe === undefined ? {} : { probe: settings.probe }),
  });
  const now = (): number => scheduler.now();
  const gate = new WarmUpGate({ role, warmupMs: config.coordinatorWarmupMs, logger, members, state, margin, now });
  const homes = new ShardHomes({ typeName, logger, allocator, gate, states });
  const handOffs = new HandOffs({
    typeName,
    logger,
    now: () => scheduler.now(),
    timeoutMs: config.handOffTimeoutMs,
    numberOfShards: settings.numberOfShards,
  });
  const { numberOfShards } = settings;
  const operator = new OperatorRequests({ typeName, numberOfShards, strategy, logger, cordons, handOffs, allocator });
  const insight = coordinatorInsight(settings, state, { candidates: () => allocator.candidates(), members });
  const failovers = new FailoverReport(events);
  return {
    state,
    gate,
    margin,
    operator,
    insight,
    handOffs,
    states,
    allocator,
    homes,
    failovers,
  };
}
