// Runs an action when the strategy says its answers change by time alone (a pin expiring: see
// AllocationStrategy.nextChangeInMs), so an expiry takes effect at that moment and not at the next tick.
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import type { AllocationStrategy } from '../strategies/index.js';

// setTimeout's longest delay; a later change is waited for in steps (an early wake-up only re-checks).
const MAX_DELAY_MS = 2_147_483_647;

/** Whom the timer tells (wired in rooms.ts). */
export interface ChangeTimerPort {
  /** The strategy's answers changed by time (a pin expired): ShardCoordinator rebalances and retries waiting shards. */
  changed(): void;
}

export class ChangeTimer {
  private timer: Cancellable | undefined;
  private stopped = false;

  constructor(
    private readonly strategy: AllocationStrategy,
    private readonly scheduler: Scheduler,
    private readonly logger: Logger,
    private readonly port: ChangeTimerPort,
  ) {}

  /** Asks the strategy for its next change and (re)arms the timer for it; nothing when it has none. */
  schedule(): void {
    if (this.stopped || typeof this.strategy.nextChangeInMs !== 'function') return;
    this.timer?.cancel();
    this.timer = undefined;
    let delay: number | undefined;
    try {
      delay = this.strategy.nextChangeInMs();
    } catch (error) {
      this.logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'allocation strategy nextChangeInMs threw',
      );
      return;
    }
    // Anything but a positive finite delay is no change ahead: a zero or negative one would spin.
    if (delay === undefined || typeof delay !== 'number' || !(delay > 0) || !Number.isFinite(delay)) return;
    this.timer = this.scheduler.setTimeout(
      () => {
        this.timer = undefined;
        if (this.stopped) return;
        this.port.changed();
        this.schedule();
      },
      Math.min(Math.ceil(delay), MAX_DELAY_MS),
    );
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }
}
