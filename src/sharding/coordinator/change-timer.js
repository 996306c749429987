// setTimeout's longest delay; a later change is waited for in steps (an early wake-up only re-checks).
const MAX_DELAY_MS = 2_147_483_647;
export class ChangeTimer {
    strategy;
    scheduler;
    logger;
    onChange;
    timer;
    stopped = false;
    constructor(strategy, scheduler, logger, onChange) {
        this.strategy = strategy;
        this.scheduler = scheduler;
        this.logger = logger;
        this.onChange = onChange;
    }
    /** Asks the strategy for its next change and (re)arms the timer for it; nothing when it has none. */
    schedule() {
        if (this.stopped || typeof this.strategy.nextChangeInMs !== 'function')
            return;
        this.timer?.cancel();
        this.timer = undefined;
        let delay;
        try {
            delay = this.strategy.nextChangeInMs();
        }
        catch (error) {
            this.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'allocation strategy nextChangeInMs threw');
            return;
        }
        // Anything but a positive finite delay is no change ahead: a zero or negative one would spin.
        if (delay === undefined || typeof delay !== 'number' || !(delay > 0) || !Number.isFinite(delay))
            return;
        this.timer = this.scheduler.setTimeout(() => {
            this.timer = undefined;
            if (this.stopped)
                return;
            this.onChange();
            this.schedule();
        }, Math.min(Math.ceil(delay), MAX_DELAY_MS));
    }
    stop() {
        this.stopped = true;
        this.timer?.cancel();
        this.timer = undefined;
    }
}
//# sourceMappingURL=change-timer.js.map