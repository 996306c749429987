// Entity timers and pipeToSelf on one mailbox, driven by a ManualScheduler: a restarted key cancels its previous
// timer, a timer cancelled or restarted after its message was queued never delivers it, fixed-delay timers,
// invalid keys and delays, piped work that does not block the mailbox, and what ends with the entity.
import { describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { Entity } from '../../src/sharding/region/entity.js';
import type { EntityInstance, PipeOutcome } from '../../src/sharding/core/entity-api.js';
import { ManualScheduler } from '../support/schedulers.js';

/** A promise and the functions that settle it. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets queued promise callbacks (the mailbox's drain) run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

function entityWith(
  scheduler: ManualScheduler,
  receive: (entity: Entity, message: unknown) => unknown,
): { entity: Entity; seen: unknown[] } {
  const seen: unknown[] = [];
  const entity: Entity = new Entity('e', undefined, () => undefined, { scheduler });
  const instance: EntityInstance = {
    receive: (message) => {
      seen.push(message);
      return receive(entity, message);
    },
  };
  entity.attach(instance);
  return { entity, seen };
}

/** An entity whose 'busy' message waits until `gate` opens, then runs `andThen` before it completes. */
function entityBusyUntil(
  scheduler: ManualScheduler,
  andThen: (self: Entity) => void,
): { entity: Entity; seen: unknown[]; gate: ReturnType<typeof deferred<void>> } {
  const gate = deferred<void>();
  const { entity, seen } = entityWith(scheduler, async (self, message) => {
    if (message === 'busy') {
      await gate.promise;
      andThen(self);
    }
  });
  return { entity, seen, gate };
}

describe('entity timers', () => {
  it('starting a key again cancels the previous timer: one message, a full delay after the last start', async () => {
    const scheduler = new ManualScheduler();
    const { entity, seen } = entityWith(scheduler, () => undefined);
    entity.timers.startSingleTimer('quiet', 'Quiet', 2_500);
    scheduler.advance(2_000);
    entity.timers.startSingleTimer('quiet', 'Quiet', 2_500);
    scheduler.advance(2_000);
    await flush();
    expect(seen).toEqual([]);
    expect(entity.timers.isTimerActive('quiet')).toBe(true);
    scheduler.advance(500);
    await flush();
    expect(seen).toEqual(['Quiet']);
    expect(entity.timers.isTimerActive('quiet')).toBe(false);
    scheduler.advance(10_000);
    await flush();
    expect(seen).toEqual(['Quiet']);
  });

  it('a timer restarted after its message was queued never delivers that message', async () => {
    const scheduler = new ManualScheduler();
    const { entity, seen, gate } = entityBusyUntil(scheduler, (self) =>
      self.timers.startSingleTimer('quiet', 'Quiet-2', 2_500),
    );
    entity.timers.startSingleTimer('quiet', 'Quiet-1', 1_000);
    entity.enqueue('busy', undefined);
    await flush();
    scheduler.advance(1_000); // Quiet-1 fires and waits in the mailbox behind 'busy'
    expect(entity.queued).toBe(1);
    gate.resolve();
    await flush();
    expect(seen).toEqual(['busy']);
    scheduler.advance(2_500);
    await flush();
    expect(seen).toEqual(['busy', 'Quiet-2']);
  });

  it('a timer cancelled after its message was queued never delivers it', async () => {
    const scheduler = new ManualScheduler();
    const { entity, seen, gate } = entityBusyUntil(scheduler, (self) => self.timers.cancel('tick'));
    entity.timers.startTimerWithFixedDelay('tick', 'Tick', 100);
    entity.enqueue('busy', undefined);
    await flush();
    scheduler.advance(100);
    expect(entity.queued).toBe(1);
    gate.resolve();
    await flush();
    scheduler.advance(1_000);
    await flush();
    expect(seen).toEqual(['busy']);
    expect(entity.timers.isTimerActive('tick')).toBe(false);
  });

  it('a fixed-delay timer delivers every delay, counted from the previous delivery, until cancelled', async () => {
    const scheduler = new ManualScheduler();
    const { entity, seen } = entityWith(scheduler, () => undefined);
    entity.timers.startTimerWithFixedDelay('tick', 'Tick', 100);
    for (let i = 0; i < 3; i++) {
      scheduler.advance(100);
      await flush();
    }
    expect(seen).toEqual(['Tick', 'Tick', 'Tick']);
    expect(entity.timers.isTimerActive('tick')).toBe(true);
    entity.timers.cancel('tick');
    scheduler.advance(1_000);
    await flush();
    expect(seen).toHaveLength(3);
    expect(scheduler.pending).toBe(0);
  });

  it('rejects an invalid key or delay at the call with a typed error, and starts nothing', () => {
    const scheduler = new ManualScheduler();
    const { entity } = entityWith(scheduler, () => undefined);
    const calls: Array<() => void> = [
      () => entity.timers.startSingleTimer('', 'm', 10),
      () => entity.timers.startSingleTimer('k'.repeat(257), 'm', 10),
      () => entity.timers.startSingleTimer(42 as unknown as string, 'm', 10),
      () => entity.timers.startSingleTimer('k', 'm', -1),
      () => entity.timers.startSingleTimer('k', 'm', 1.5),
      () => entity.timers.startSingleTimer('k', 'm', Number.NaN),
      () => entity.timers.startSingleTimer('k', 'm', 2 ** 31),
      () => entity.timers.startTimerWithFixedDelay('k', 'm', 0),
      () => entity.timers.cancel(undefined as unknown as string),
      () => entity.timers.isTimerActive({} as unknown as string),
    ];
    for (const call of calls) {
      let thrown: unknown;
      try {
        call();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ActorTsError);
      expect((thrown as ActorTsError).code).toBe('invalid_argument');
    }
    expect(scheduler.pending).toBe(0);
    expect(entity.timers.isTimerActive('k')).toBe(false);
  });
});

describe('pipeToSelf', () => {
  it('keeps the mailbox running while the work runs, then delivers its outcome as a message', async () => {
    const scheduler = new ManualScheduler();
    const work = deferred<string>();
    const failing = deferred<string>();
    const { entity, seen } = entityWith(scheduler, (self, message) => {
      if (message === 'think') self.pipeToSelf(work.promise, (outcome: PipeOutcome<string>) => ({ piped: outcome }));
      if (message === 'fail') self.pipeToSelf(failing.promise, (outcome) => ({ piped: outcome }));
    });
    entity.enqueue('think', undefined);
    entity.enqueue('fail', undefined);
    entity.enqueue('meanwhile', undefined);
    await flush();
    expect(seen).toEqual(['think', 'fail', 'meanwhile']);
    expect(entity.pendingPipes).toBe(2);
    const boom = new Error('no pun');
    failing.reject(boom);
    work.resolve('a joke');
    await flush();
    expect(seen.slice(3)).toEqual([{ piped: { ok: false, error: boom } }, { piped: { ok: true, value: 'a joke' } }]);
    expect(entity.pendingPipes).toBe(0);
  });

  it('drops (and reports) an outcome that settles after the entity stopped, and ends its timers', async () => {
    const scheduler = new ManualScheduler();
    const work = deferred<string>();
    const late: string[] = [];
    const seen: unknown[] = [];
    const entity = new Entity('e', { receive: (message) => void seen.push(message) }, () => undefined, {
      scheduler,
      onLatePipe: (id) => void late.push(id),
    });
    entity.pipeToSelf(work.promise, (outcome) => outcome);
    entity.timers.startTimerWithFixedDelay('tick', 'Tick', 100);
    await entity.stop();
    expect(scheduler.pending).toBe(0);
    expect(entity.timers.isTimerActive('tick')).toBe(false);
    entity.timers.startSingleTimer('again', 'Again', 10); // after the end: ignored
    work.resolve('too late');
    scheduler.advance(1_000);
    await flush();
    expect(seen).toEqual([]);
    expect(late).toEqual(['e']);
  });

  it('rejects work that is not a promise, or a missing toMessage, with a typed error', () => {
    const entity = new Entity('e', { receive: () => undefined }, () => undefined, { scheduler: new ManualScheduler() });
    expect(() => entity.pipeToSelf(42 as unknown as Promise<number>, (o) => o)).toThrow(ActorTsError);
    expect(() =>
      entity.pipeToSelf(Promise.resolve(1), undefined as unknown as (o: PipeOutcome<number>) => unknown),
    ).toThrow(/pipeToSelf/);
    expect(entity.pendingPipes).toBe(0);
  });
});
