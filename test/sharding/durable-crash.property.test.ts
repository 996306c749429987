// Exactly-once effects of reliable sends on a durable entity across a crash of its host (issue 36), over random
// crash points: the host dies after its k-th commit landed (before its answers left) or during it (the commit
// never lands), with its sends pipelined at random. The sender retries every send not acknowledged, and some
// acknowledged ones too (a lost answer); the new host must apply each send exactly once in all: its final state
// counts every send once, it never runs a send the old host committed, and every send ends acknowledged. Reads
// among the sends (answered by an epoch check, nothing written) never miss a send acknowledged before them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  CommitResult,
  EntityStore,
  EntityWrite,
  EpochCheck,
  ShardKey,
} from '../../src/entity-store/entity-store.js';
import { EntityStoreError } from '../../src/entity-store/entity-store.js';
import type { HostOutcome } from '../../src/sharding/core/entity-api.js';
import { MemoryEntityStore } from '../support/memory-entity-store.js';
import { deliver, hostShard, type Counted } from './durable-fixtures.js';

/** One host's connection to the shared store: dead after the crash point, as the process would be. */
class HostView implements EntityStore {
  readonly kind = 'lmdb';
  readonly where = 'memory';
  dead = false;
  constructor(
    private readonly inner: MemoryEntityStore,
    private readonly crash: { readonly atCommit: number; readonly lands: boolean } | undefined,
  ) {}
  claim(shard: ShardKey): Promise<number> {
    return this.live(() => this.inner.claim(shard));
  }
  load(typeName: string, entityId: string): Promise<Uint8Array | undefined> {
    return this.live(() => this.inner.load(typeName, entityId));
  }
  checkEpochs(checks: ReadonlyArray<EpochCheck>): Promise<CommitResult> {
    const check = this.inner.checkEpochs;
    if (check === undefined) throw new Error('the memory store checks epochs');
    return this.live(() => check(checks));
  }
  async commit(writes: ReadonlyArray<EntityWrite>): Promise<CommitResult> {
    if (this.crash !== undefined && this.inner.commits + 1 === this.crash.atCommit && !this.crash.lands) {
      this.dead = true;
    }
    const result = await this.live(() => this.inner.commit(writes));
    if (this.crash !== undefined && this.inner.commits === this.crash.atCommit) this.dead = true;
    return result;
  }
  async close(): Promise<void> {}
  private async live<T>(call: () => Promise<T>): Promise<T> {
    if (this.dead) throw new EntityStoreError('the host is dead');
    return call();
  }
}

const SENDER = { node: 's@127.0.0.1:9', incarnation: 3 };

/** An ask that reads the count: if it is answered before the crash, it includes every send acknowledged before. */
async function read(shard: Parameters<typeof deliver>[0], ackedBefore: number, dead: () => boolean): Promise<void> {
  const outcome = await deliver(shard, { get: true });
  if (outcome.ok && !dead()) expect(outcome.value).toBeGreaterThanOrEqual(ackedBefore);
}

describe('durable entity, crash of its host at a random point', () => {
  it('every send is applied exactly once in all, and every send ends acknowledged', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
        fc.array(fc.integer({ min: 1, max: 16 }), { maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
        async (sends, atCommit, lands, yields, repeats, reads) => {
          const store = new MemoryEntityStore();
          const seen: Counted = { ran: [], restored: [] };
          const view = new HostView(store, { atCommit, lands });
          const old = hostShard(view, '1', seen);
          const acked = new Set<number>();
          const answers: Array<Promise<void>> = [];
          const send = (shard: typeof old, seq: number): Promise<HostOutcome> =>
            deliver(shard, { add: 1, tag: seq }, { ...SENDER, seq, below: 1 });
          for (let seq = 1; seq <= sends && !view.dead; seq++) {
            // An answer that leaves after the crash point never reaches the sender.
            answers.push(send(old, seq).then((outcome) => void (outcome.ok && !view.dead && acked.add(seq))));
            // A read (no mark, state unchanged: an epoch check, no write) counts every send acknowledged before it.
            if (reads[seq - 1] === true) answers.push(read(old, acked.size, () => view.dead));
            if (yields[seq - 1] === true) await new Promise((resolve) => setImmediate(resolve));
          }
          // Every answer of the old host settles: acknowledged before the crash, or refused after it.
          await Promise.all(answers);
          view.dead = true;
          const next = hostShard(store, '2', seen);
          const retried = [...Array.from({ length: sends }, (_, i) => i + 1), ...repeats.filter((r) => r <= sends)];
          const outcomes = await Promise.all(retried.map((seq) => send(next, seq)));
          expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
          expect(await deliver(next, { get: true })).toEqual({ ok: true, value: sends });
          const ranOnNext = seen.ran.filter((r) => r.host === '2').map((r) => r.tag as number);
          expect(new Set(ranOnNext).size).toBe(ranOnNext.length);
          for (const seq of acked) expect(ranOnNext).not.toContain(seq);
        },
      ),
      { numRuns: 150 },
    );
  });
});
