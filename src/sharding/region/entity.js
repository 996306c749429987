import { ActorTsError } from '../../errors.js';
import { describeValue } from '../../logging.js';
import { backgroundScheduler } from '../timers.js';
import { EntityTimerSet } from './entity-timers.js';
/** Longest error text reported to an asker or written to a log; an entity's error may quote its input. */
export const MAX_ERROR_TEXT = 500;
/** One entity's mailbox and lifecycle inside a shard. */
export class Entity {
    entityId;
    onError;
    options;
    queue = [];
    running = false;
    idleWaiters = [];
    instance;
    timerSet;
    ended = false;
    pipes = 0;
    /** Without `instance`, messages wait in the mailbox until `attach` (the behavior is given the entity's context first). */
    constructor(entityId, instance, onError, options = {}) {
        this.entityId = entityId;
        this.onError = onError;
        this.options = options;
        this.timerSet = new EntityTimerSet(options.scheduler ?? backgroundScheduler, (timer) => this.push({ kind: 'timer', timer }));
        if (instance !== undefined)
            this.attach(instance);
    }
    get queued() {
        return this.queue.length;
    }
    get timers() {
        return this.timerSet;
    }
    /** Piped work not settled yet. */
    get pendingPipes() {
        return this.pipes;
    }
    attach(instance) {
        this.instance = instance;
        if (!this.running && this.queue.length > 0)
            void this.drain();
    }
    enqueue(message, reply) {
        this.push({ kind: 'message', message, reply });
    }
    pipeToSelf(work, toMessage) {
        if (typeof work?.then !== 'function') {
            throw new ActorTsError('invalid_argument', 'pipeToSelf needs a promise (or thenable) as its work');
        }
        if (typeof toMessage !== 'function')
            throw new ActorTsError('invalid_argument', 'pipeToSelf needs a function (outcome) => message');
        this.pipes++;
        const settled = (outcome) => {
            this.pipes--;
            if (this.ended) {
                this.options.onLatePipe?.(this.entityId);
                return;
            }
            let message;
            try {
                message = toMessage(outcome);
            }
            catch (error) {
                this.onError(this.entityId, 'receive', error);
                return;
            }
            this.enqueue(message, undefined);
        };
        Promise.resolve(work).then((value) => settled({ ok: true, value }), (error) => settled({ ok: false, error }));
    }
    /**
     * The entity is stopping (its shard hands off or the node shuts down): its timers end (queued timer messages
     * are dropped at dequeue) and pipes settling from now on are dropped. Messages already queued still run.
     */
    end() {
        this.ended = true;
        this.timerSet.end();
    }
    /** Resolves once every queued message was handled. */
    whenIdle() {
        if (!this.running && this.queue.length === 0)
            return Promise.resolve();
        return new Promise((resolve) => this.idleWaiters.push(resolve));
    }
    /** Runs the entity's stop hook; errors are reported, never thrown, so one entity cannot block a hand-off. */
    async stop() {
        this.end();
        try {
            await this.instance?.stop?.();
        }
        catch (error) {
            this.onError(this.entityId, 'stop', error);
        }
    }
    push(letter) {
        this.queue.push(letter);
        if (!this.running && this.instance !== undefined)
            void this.drain();
    }
    async drain() {
        const instance = this.instance;
        if (instance === undefined)
            return;
        this.running = true;
        let letter = this.queue.shift();
        while (letter !== undefined) {
            // A timer restarted or cancelled after its message was queued: that message is never delivered.
            if (letter.kind === 'timer' && !this.timerSet.accept(letter.timer)) {
                letter = this.queue.shift();
                continue;
            }
            const message = letter.kind === 'timer' ? letter.timer.message : letter.message;
            const reply = letter.kind === 'message' ? letter.reply : undefined;
            let outcome;
            try {
                outcome = { ok: true, value: await instance.receive(message) };
            }
            catch (error) {
                this.onError(this.entityId, 'receive', error);
                outcome = { ok: false, error: describeError(error) };
            }
            try {
                reply?.(outcome);
            }
            catch (error) {
                // A failing reply must neither escape as an unhandled rejection nor leave the mailbox stuck.
                this.onError(this.entityId, 'receive', error);
            }
            letter = this.queue.shift();
        }
        this.running = false;
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters)
            resolve();
    }
}
/**
 * Never throws, whatever an entity threw or rejected with (a null-prototype object, a throwing toString), and
 * never returns more than MAX_ERROR_TEXT characters: a thrown value is described, not stringified whole.
 */
export function describeError(error) {
    try {
        // String() of an array joins every element, however large or deeply shared the array is.
        if (Array.isArray(error))
            return describeValue(error, MAX_ERROR_TEXT - 40);
        const text = error instanceof Error ? String(error.message || error.name) : String(error);
        return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT - 20)}... (${text.length} chars)` : text;
    }
    catch {
        return Object.prototype.toString.call(error);
    }
}
//# sourceMappingURL=entity.js.map