import { ActorTsError } from '../../errors.js';
/** Longest timer key, in characters: keys are names an entity picks, not data. */
export const MAX_TIMER_KEY_LENGTH = 256;
/** Longest delay: what setTimeout takes without overflowing. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;
export class EntityTimerSet {
    scheduler;
    enqueue;
    active = new Map();
    nextGeneration = 1;
    ended = false;
    constructor(scheduler, enqueue) {
        this.scheduler = scheduler;
        this.enqueue = enqueue;
    }
    startSingleTimer(key, message, delayMs) {
        this.start(checkKey(key), message, checkDelay(delayMs, 0), undefined);
    }
    startTimerWithFixedDelay(key, message, delayMs) {
        const delay = checkDelay(delayMs, 1);
        this.start(checkKey(key), message, delay, delay);
    }
    cancel(key) {
        const timer = this.active.get(checkKey(key));
        if (timer === undefined)
            return;
        timer.handle?.cancel();
        this.active.delete(key);
    }
    isTimerActive(key) {
        return this.active.has(checkKey(key));
    }
    get size() {
        return this.active.size;
    }
    /**
     * At dequeue: whether the letter's timer is still current (deliver it) or was restarted or cancelled since
     * (drop it). A delivered single timer ends; a fixed-delay one is scheduled again from now.
     */
    accept(letter) {
        const timer = this.active.get(letter.key);
        if (timer === undefined || timer.generation !== letter.generation)
            return false;
        if (timer.repeatMs === undefined)
            this.active.delete(letter.key);
        else
            this.schedule(letter.key, timer, timer.repeatMs);
        return true;
    }
    /** Cancels every timer for good: the entity is stopping. Later starts are ignored. */
    end() {
        this.ended = true;
        for (const timer of this.active.values())
            timer.handle?.cancel();
        this.active.clear();
    }
    start(key, message, delayMs, repeatMs) {
        if (this.ended)
            return;
        this.active.get(key)?.handle?.cancel();
        const timer = { generation: this.nextGeneration++, message, repeatMs, handle: undefined };
        this.active.set(key, timer);
        this.schedule(key, timer, delayMs);
    }
    schedule(key, timer, delayMs) {
        timer.handle = this.scheduler.setTimeout(() => {
            timer.handle = undefined;
            if (this.active.get(key) === timer)
                this.enqueue({ key, generation: timer.generation, message: timer.message });
        }, delayMs);
    }
}
function checkKey(key) {
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_TIMER_KEY_LENGTH) {
        throw new ActorTsError('invalid_argument', `timer key must be a string of 1..${MAX_TIMER_KEY_LENGTH} characters, got ${describeKey(key)}`);
    }
    return key;
}
function checkDelay(delayMs, min) {
    if (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < min || delayMs > MAX_TIMER_DELAY_MS) {
        throw new ActorTsError('invalid_argument', `timer delayMs must be an integer in ${min}..${MAX_TIMER_DELAY_MS}, got ${String(delayMs)}`);
    }
    return delayMs;
}
function describeKey(key) {
    if (typeof key === 'string')
        return `a string of ${key.length} characters`;
    return key === null ? 'null' : typeof key;
}
//# sourceMappingURL=entity-timers.js.map