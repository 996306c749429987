// Passivation of single entities on one shard, driven by a ManualScheduler: idle entities stop after idleMs,
// the least recently used stop beyond maxActiveEntities, ctx.passivate() stops an entity after its current
// message, messages arriving meanwhile wait and start the next incarnation in order, stop() runs and timers end.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { ActorTsError } from '../../src/errors.js';
import { silentLogger } from '../../src/logging.js';
import type { EntityBehavior, EntityContext, EntityRef } from '../../src/sharding/core/entity-api.js';
import { checkPassivation, type PassivationSettings } from '../../src/sharding/core/passivation.js';
import { PassivationTracker } from '../../src/sharding/region/passivation.js';
import { Shard } from '../../src/sharding/region/shard.js';
import type { EntityOutcome } from '../../src/sharding/core/entity-api.js';
import { ManualScheduler } from '../support/schedulers.js';

async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

interface Fixture {
  readonly shard: Shard;
  readonly tracker: PassivationTracker;
  readonly scheduler: ManualScheduler;
  /** Entity ids in the order their incarnations started. */
  readonly started: string[];
  /** Entity ids in the order their stop hooks ran. */
  readonly stopped: string[];
  /** Every message handled, as `id:message`. */
  readonly seen: string[];
  readonly contexts: Map<string, EntityContext>;
}

/** A counter entity: 'n' answers its count (lost on passivation); 'tick' starts a repeating timer. */
function fixture(
  settings: PassivationSettings,
  receive?: (ctx: EntityContext, message: unknown) => unknown,
  stopHook: () => void | Promise<void> = () => undefined,
): Fixture {
  const scheduler = new ManualScheduler();
  const tracker = new PassivationTracker(settings, scheduler);
  const started: string[] = [];
  const stopped: string[] = [];
  const seen: string[] = [];
  const contexts = new Map<string, EntityContext>();
  const behavior: EntityBehavior = (ctx) => {
    started.push(ctx.entityId);
    contexts.set(ctx.entityId, ctx);
    let count = 0;
    return {
      receive: (message) => {
        seen.push(`${ctx.entityId}:${String(message)}`);
        if (message === 'tick') ctx.timers.startTimerWithFixedDelay('t', 'tock', 100);
        if (receive !== undefined) return receive(ctx, message);
        return ++count;
      },
      stop: () => {
        stopped.push(ctx.entityId);
        return stopHook();
      },
    };
  };
  const entityRef = (): EntityRef => {
    throw new Error('not routed in this test');
  };
  const shard = new Shard('T', 1, behavior, NodeAddress.parse('s@127.0.0.1:1'), silentLogger(), {
    entityRef,
    scheduler,
    passivation: tracker,
  });
  return { shard, tracker, scheduler, started, stopped, seen, contexts };
}

function ask(shard: Shard, entityId: string, message: unknown): Promise<EntityOutcome> {
  return new Promise((resolve) => shard.deliver(entityId, message, resolve));
}

describe('passivation', () => {
  it('idle: an entity that received nothing for idleMs is stopped, and the next message starts it fresh', async () => {
    const { shard, scheduler, started, stopped, tracker } = fixture({ idleMs: 1000 });
    expect(await ask(shard, 'a', 'n')).toEqual({ ok: true, value: 1 });
    expect(await ask(shard, 'a', 'n')).toEqual({ ok: true, value: 2 });
    scheduler.advance(600);
    await ask(shard, 'b', 'n');
    scheduler.advance(900);
    await flush();
    // a: 1500 ms quiet, stopped; b: 900 ms, still active.
    expect(stopped).toEqual(['a']);
    expect(shard.entityCount).toBe(1);
    expect(tracker.passivated).toEqual({ idle: 1, limit: 0, self: 0 });
    expect(await ask(shard, 'a', 'n')).toEqual({ ok: true, value: 1 });
    expect(started).toEqual(['a', 'b', 'a']);
  });

  it('idle: the sweep timer ends once no entity is active, and no entity means no timer', async () => {
    const { shard, scheduler } = fixture({ idleMs: 1000 });
    expect(scheduler.pending).toBe(0);
    await ask(shard, 'a', 'n');
    expect(scheduler.pending).toBe(1);
    scheduler.advance(2000);
    await flush();
    expect(scheduler.pending).toBe(0);
  });

  it('limit: beyond maxActiveEntities the least recently used entity is stopped', async () => {
    const { shard, stopped, tracker } = fixture({ maxActiveEntities: 2 });
    await ask(shard, 'a', 'n');
    await ask(shard, 'b', 'n');
    await ask(shard, 'a', 'n'); // a is now the most recently used
    await ask(shard, 'c', 'n');
    await flush();
    expect(stopped).toEqual(['b']);
    expect(shard.entityCount).toBe(2);
    await ask(shard, 'd', 'n');
    await flush();
    expect(stopped).toEqual(['b', 'a']);
    expect(tracker.passivated).toEqual({ idle: 0, limit: 2, self: 0 });
  });

  it('ctx.passivate() stops the entity after its current message; stop() runs and its timers end', async () => {
    const { shard, scheduler, stopped, seen, tracker } = fixture({}, (ctx, message) => {
      if (message === 'bye') ctx.passivate();
      return message;
    });
    await ask(shard, 'a', 'tick');
    scheduler.advance(100);
    await flush();
    expect(seen).toEqual(['a:tick', 'a:tock']);
    expect(await ask(shard, 'a', 'bye')).toEqual({ ok: true, value: 'bye' });
    await flush();
    expect(stopped).toEqual(['a']);
    expect(shard.entityCount).toBe(0);
    expect(scheduler.pending).toBe(0);
    scheduler.advance(1000);
    await flush();
    expect(seen).toEqual(['a:tick', 'a:tock', 'a:bye']);
    expect(tracker.passivated.self).toBe(1);
  });

  it('passivate and pipeToSelf taken out of the context work unbound; timers first read after a stop never start', async () => {
    let late: EntityContext | undefined;
    const { shard, seen, stopped, scheduler } = fixture({}, (ctx, message) => {
      const { passivate, pipeToSelf } = ctx;
      if (message === 'pipe') pipeToSelf(Promise.resolve('piped'), (outcome) => (outcome.ok ? outcome.value : 'x'));
      if (message === 'bye') {
        late = ctx;
        passivate();
      }
      return message;
    });
    await ask(shard, 'a', 'pipe');
    await flush();
    expect(seen).toEqual(['a:pipe', 'a:piped']);
    await ask(shard, 'a', 'bye');
    await flush();
    expect(stopped).toEqual(['a']);
    late?.timers.startSingleTimer('k', 'never', 10);
    expect(late?.timers.isTimerActive('k')).toBe(false);
    scheduler.advance(100);
    await flush();
    expect(seen).toEqual(['a:pipe', 'a:piped', 'a:bye']);
  });

  it('messages queued behind a passivate and arriving during the stop wait, then run in order on a new incarnation', async () => {
    let releaseStop!: () => void;
    const stopGate = new Promise<void>((resolve) => (releaseStop = resolve));
    // A slow stop hook: messages keep arriving while it runs.
    const { shard, seen, started, stopped, contexts } = fixture(
      {},
      (ctx, message) => {
        if (message === 'bye') ctx.passivate();
        return message;
      },
      () => stopGate,
    );
    const answers: Array<Promise<EntityOutcome>> = [];
    answers.push(ask(shard, 'a', 1));
    const firstContext = contexts.get('a');
    answers.push(ask(shard, 'a', 'bye'), ask(shard, 'a', 2), ask(shard, 'a', 3));
    await flush();
    expect(stopped).toEqual(['a']);
    answers.push(ask(shard, 'a', 4));
    await flush();
    expect(started).toEqual(['a']);
    releaseStop();
    const outcomes = await Promise.all(answers);
    expect(outcomes.map((outcome) => (outcome.ok ? outcome.value : outcome.error))).toEqual([1, 'bye', 2, 3, 4]);
    expect(seen).toEqual(['a:1', 'a:bye', 'a:2', 'a:3', 'a:4']);
    expect(started).toEqual(['a', 'a']);
    // A context kept from the old incarnation cannot stop the new one.
    firstContext?.passivate();
    await flush();
    expect(shard.entityCount).toBe(1);
  });

  it('an entity passivated while its shard hands off still gets the messages that waited for it', async () => {
    const { shard, seen, stopped } = fixture({}, (ctx, message) => {
      if (message === 'bye') ctx.passivate();
      return message;
    });
    const answers = [ask(shard, 'a', 'bye'), ask(shard, 'a', 'after')];
    await shard.stop(10_000);
    expect((await Promise.all(answers)).map((outcome) => outcome.ok)).toEqual([true, true]);
    expect(seen).toEqual(['a:bye', 'a:after']);
    expect(stopped).toEqual(['a', 'a']);
  });

  it('limit: a busy entity evicted finishes its message first; messages for it wait and reach the next incarnation', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { shard, seen, started, stopped } = fixture({ maxActiveEntities: 1 }, async (_ctx, message) => {
      if (message === 'slow') await gate;
      return message;
    });
    const slow = ask(shard, 'a', 'slow');
    const queued = ask(shard, 'a', 'queued');
    await flush();
    const other = ask(shard, 'b', 'x'); // evicts a while it runs 'slow'
    const later = ask(shard, 'a', 'later');
    await flush();
    expect(stopped).toEqual([]);
    open();
    const outcomes = await Promise.all([slow, queued, other, later]);
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(seen.filter((entry) => entry.startsWith('a:'))).toEqual(['a:slow', 'a:queued', 'a:later']);
    expect(started.filter((id) => id === 'a')).toHaveLength(2);
  });

  it('the limit keeps memory bounded across many entities', async () => {
    const { shard } = fixture({ maxActiveEntities: 10 });
    for (let i = 0; i < 500; i++) shard.deliver(`e${i}`, 'n', undefined);
    await flush();
    expect(shard.entityCount).toBeLessThanOrEqual(10);
  });
});

describe('passivation settings', () => {
  it.each([
    [{ idleMs: 0 }, 'passivation.idleMs'],
    [{ idleMs: 99 }, 'passivation.idleMs'],
    [{ idleMs: 1.5e3 + 0.5 }, 'passivation.idleMs'],
    [{ idleMs: 2 ** 31 }, 'passivation.idleMs'],
    [{ maxActiveEntities: 0 }, 'passivation.maxActiveEntities'],
    [{ maxActiveEntities: -1 }, 'passivation.maxActiveEntities'],
    [{ maxActiveEntities: '10' }, 'passivation.maxActiveEntities'],
    [{ idle: 1000 }, 'unknown passivation setting'],
    [null, 'passivation must be an object'],
    [[], 'passivation must be an object'],
  ])('%j is refused with invalid_argument', (value, text) => {
    expect(() => checkPassivation(value)).toThrow(ActorTsError);
    expect(() => checkPassivation(value)).toThrow(text);
    try {
      checkPassivation(value);
    } catch (error) {
      expect((error as ActorTsError).code).toBe('invalid_argument');
    }
  });

  it('valid settings and none pass', () => {
    expect(() => checkPassivation(undefined)).not.toThrow();
    expect(() => checkPassivation({})).not.toThrow();
    expect(() => checkPassivation({ idleMs: 100, maxActiveEntities: 1 })).not.toThrow();
  });
});
