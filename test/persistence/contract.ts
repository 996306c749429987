// The behaviour both PlacementPersistence implementations share, as one suite run against each
// (memory.test.ts, lmdb.test.ts): what load returns after appends and snapshots, group commit, typed
// rejections that change nothing, close, reopen and the one-opener rule.
import { describe, expect, it } from 'vitest';
import {
  PersistenceError,
  type PersistenceErrorCode,
  type PlacementPersistence,
} from '../../crdt/persistence/persistence.js';

/** Storage that outlives the instances opened on it (a directory, a memory volume). */
export interface Subject {
  open(options?: { maxRecordBytes?: number; now?: () => number }): Promise<PlacementPersistence>;
}

export const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);

export async function expectCode(promise: Promise<unknown>, code: PersistenceErrorCode): Promise<PersistenceError> {
  const error: unknown = await promise.then(
    () => new Error(`expected a PersistenceError '${code}', but it resolved`),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(PersistenceError);
  expect((error as PersistenceError).code).toBe(code);
  return error as PersistenceError;
}

export function persistenceContract(name: string, newSubject: () => Promise<Subject>): void {
  describe(`${name}: the PlacementPersistence contract`, () => {
    it('starts empty', async () => {
      const p = await (await newSubject()).open();
      expect(await p.load()).toEqual({ snapshot: undefined, log: [] });
      expect(p.stats()).toMatchObject({
        commits: 0,
        appends: 0,
        logRecordsSinceSnapshot: 0,
        lastCommitAt: null,
        needsSnapshot: false,
      });
      await p.close();
    });

    it('returns appended updates in order, and counts them', async () => {
      let t = 1000;
      const p = await (await newSubject()).open({ now: () => t++ });
      await p.append(bytes(1));
      await p.append(bytes(2, 2));
      expect(await p.load()).toEqual({ snapshot: undefined, log: [bytes(1), bytes(2, 2)] });
      expect(p.stats()).toMatchObject({
        commits: 2,
        appends: 2,
        logRecordsSinceSnapshot: 2,
        logBytesSinceSnapshot: 3,
        lastCommitAt: 1001,
      });
      await p.close();
    });

    it('commits concurrent appends together (group commit), each acknowledged', async () => {
      const p = await (await newSubject()).open();
      await Promise.all(Array.from({ length: 100 }, (_, i) => p.append(bytes(i, 7))));
      const { log } = await p.load();
      expect(log).toEqual(Array.from({ length: 100 }, (_, i) => bytes(i, 7)));
      expect(p.stats().appends).toBe(100);
      expect(p.stats().commits).toBe(1);
      await p.close();
    });

    it('a snapshot replaces the previous one and drops the log it covers; later appends stay', async () => {
      const p = await (await newSubject()).open();
      await p.append(bytes(1));
      await p.writeSnapshot(bytes(9, 1));
      await p.append(bytes(2));
      await p.writeSnapshot(bytes(9, 2));
      await p.append(bytes(3));
      expect(await p.load()).toEqual({ snapshot: bytes(9, 2), log: [bytes(3)] });
      expect(p.stats()).toMatchObject({ logRecordsSinceSnapshot: 1, snapshotBytes: 2 });
      await p.close();
    });

    it('appends issued before a snapshot are acknowledged with it and not logged; those after are', async () => {
      const p = await (await newSubject()).open();
      const writes = [p.append(bytes(1)), p.append(bytes(2)), p.writeSnapshot(bytes(9)), p.append(bytes(3))];
      await Promise.all(writes);
      expect(await p.load()).toEqual({ snapshot: bytes(9), log: [bytes(3)] });
      expect(p.stats()).toMatchObject({ appends: 3, commits: 1 });
      await p.close();
    });

    it('rejects bad input with a typed error and changes nothing', async () => {
      const p = await (await newSubject()).open({ maxRecordBytes: 4 });
      await p.append(bytes(1));
      await expectCode(p.append('text' as unknown as Uint8Array), 'invalid_argument');
      await expectCode(p.append(new Uint8Array(0)), 'invalid_argument');
      const big = await expectCode(p.append(new Uint8Array(5)), 'invalid_argument');
      expect(big.message).toContain('maxRecordBytes');
      await expectCode(p.writeSnapshot(undefined as unknown as Uint8Array), 'invalid_argument');
      expect(await p.load()).toEqual({ snapshot: undefined, log: [bytes(1)] });
      expect(p.stats()).toMatchObject({ appends: 1, pendingWrites: 0 });
      await p.close();
    });

    it('rejects invalid options', async () => {
      const subject = await newSubject();
      await expectCode(subject.open({ maxRecordBytes: 0 }), 'invalid_option');
      await expectCode(subject.open({ now: 5 as unknown as () => number }), 'invalid_option');
      // Nothing was left holding the storage.
      await (await subject.open()).close();
    });

    it('keeps its own copy of the bytes it is given', async () => {
      const p = await (await newSubject()).open();
      const update = bytes(1, 2, 3);
      const written = p.append(update);
      update[0] = 99;
      await written;
      const loaded = await p.load();
      expect(loaded.log).toEqual([bytes(1, 2, 3)]);
      (loaded.log[0] as Uint8Array)[1] = 77;
      expect((await p.load()).log).toEqual([bytes(1, 2, 3)]);
      await p.close();
    });

    it('close commits what is pending, then refuses everything', async () => {
      const p = await (await newSubject()).open();
      const pending = [p.append(bytes(1)), p.writeSnapshot(bytes(8)), p.append(bytes(2))];
      await p.close();
      await Promise.all(pending);
      await expectCode(p.append(bytes(3)), 'closed');
      await expectCode(p.writeSnapshot(bytes(3)), 'closed');
      await expectCode(p.load(), 'closed');
      await p.close();
    });

    it('a reopen finds everything acknowledged; a second opener is refused while the first is open', async () => {
      const subject = await newSubject();
      const first = await subject.open();
      await first.writeSnapshot(bytes(5));
      await first.append(bytes(6));
      await expectCode(subject.open(), 'locked');
      await first.close();
      const second = await subject.open();
      expect(await second.load()).toEqual({ snapshot: bytes(5), log: [bytes(6)] });
      expect(second.stats()).toMatchObject({ logRecordsSinceSnapshot: 1, snapshotBytes: 1 });
      // Sequence numbers continue: a new append goes after the reloaded one.
      await second.append(bytes(7));
      await second.close();
      const third = await subject.open();
      expect(await third.load()).toEqual({ snapshot: bytes(5), log: [bytes(6), bytes(7)] });
      await third.close();
    });
  });
}
