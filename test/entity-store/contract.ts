// The EntityStore contract, run against each real store (lmdb.test.ts, postgres.test.ts): claims increment the
// shard's epoch, a commit lands but for the shards claimed since its epoch, an epoch check reads a later claim
// without writing, a closed store fails with the typed error, and a claim fences a writer running concurrently:
// once the claim returned, none of the old writer's commits lands (the row read right after the claim is the row
// for good, as far as the old writer goes).
import { expect, it } from 'vitest';
import type { EntityStore, EntityWrite } from '../../src/entity-store/entity-store.js';

const bytes = (n: number): Uint8Array => new Uint8Array([n & 255, (n >> 8) & 255, 7]);
const valueOf = (row: Uint8Array | undefined): number | undefined =>
  row === undefined ? undefined : row[0]! + row[1]! * 256;

function write(epoch: number, entityId: string, n: number, shardId = 1, typeName = 'T'): EntityWrite {
  return { typeName, entityId, shardId, epoch, value: bytes(n) };
}

/** Registers the contract's tests; `open` gives a new handle on the same store each call (another node). */
export function entityStoreContract(open: () => Promise<EntityStore>, prefix: string): void {
  const type = (name: string): string => `${prefix}-${name}`;

  it('a claim increments the epoch of its shard only, and a commit under it lands and reads back', async () => {
    const store = await open();
    expect(await store.claim({ typeName: type('a'), shardId: 1 })).toBe(1);
    expect(await store.claim({ typeName: type('a'), shardId: 1 })).toBe(2);
    expect(await store.claim({ typeName: type('a'), shardId: 2 })).toBe(1);
    expect(await store.commit([write(2, 'x', 300, 1, type('a')), write(1, 'y', 4, 2, type('a'))])).toEqual({
      fenced: [],
    });
    expect(valueOf(await store.load(type('a'), 'x'))).toBe(300);
    expect(valueOf(await store.load(type('a'), 'y'))).toBe(4);
    expect(await store.load(type('a'), 'nobody')).toBeUndefined();
    await store.close();
  });

  it('refuses the writes of a shard claimed since (and of one never claimed), and lands the others of the batch', async () => {
    const [one, two] = [await open(), await open()];
    const epoch = await one.claim({ typeName: type('b'), shardId: 1 });
    await one.claim({ typeName: type('b'), shardId: 2 });
    await two.claim({ typeName: type('b'), shardId: 1 });
    const result = await one.commit([
      write(epoch, 'p', 1, 1, type('b')),
      write(1, 'q', 2, 2, type('b')),
      write(1, 'r', 3, 3, type('b')),
    ]);
    expect([...result.fenced].sort((x, y) => x.shardId - y.shardId)).toEqual([
      { typeName: type('b'), shardId: 1 },
      { typeName: type('b'), shardId: 3 },
    ]);
    expect(await two.load(type('b'), 'p')).toBeUndefined();
    expect(valueOf(await two.load(type('b'), 'q'))).toBe(2);
    await Promise.all([one.close(), two.close()]);
  });

  it('checks epochs without writing: a later claim or none is fenced, the current epoch is not', async () => {
    const [one, two] = [await open(), await open()];
    const check = one.checkEpochs?.bind(one);
    if (check === undefined) throw new Error(`the ${one.kind} store has no checkEpochs`);
    const epoch = await one.claim({ typeName: type('d'), shardId: 1 });
    await one.claim({ typeName: type('d'), shardId: 2 });
    const shards = [1, 2, 3].map((shardId) => ({ typeName: type('d'), shardId, epoch }));
    expect(await check(shards)).toEqual({ fenced: [{ typeName: type('d'), shardId: 3 }] });
    // A claim by another handle (another node) is seen by the next check.
    await two.claim({ typeName: type('d'), shardId: 1 });
    const { fenced } = await check([...shards, shards[0]!]);
    expect([...fenced].sort((x, y) => x.shardId - y.shardId)).toEqual([
      { typeName: type('d'), shardId: 1 },
      { typeName: type('d'), shardId: 3 },
    ]);
    expect(await check([])).toEqual({ fenced: [] });
    expect(await two.load(type('d'), 'anyone')).toBeUndefined();
    await one.close();
    await expect(check(shards)).rejects.toMatchObject({ code: 'entity_store_unavailable' });
    await two.close();
  });

  it('a closed store fails with entity_store_unavailable', async () => {
    const store = await open();
    await store.close();
    await expect(store.claim({ typeName: type('c'), shardId: 1 })).rejects.toMatchObject({
      code: 'entity_store_unavailable',
    });
    await expect(store.load(type('c'), 'x')).rejects.toMatchObject({ code: 'entity_store_unavailable' });
  });
}

/**
 * Fence safety against a writer committing as fast as it can (another handle, or another process): claims the
 * shard after the writer's `warmUp` commits, reads the row, lets the writer run into the fence, and checks that
 * the row did not change and that the writer saw its commits refused.
 */
export async function checkFenceUnderLoad(
  claimant: EntityStore,
  writer: { readonly committed: () => number; readonly fenced: Promise<number> },
  typeName: string,
  warmUp: number,
): Promise<void> {
  while (writer.committed() < warmUp) await new Promise((resolve) => setTimeout(resolve, 5));
  await claimant.claim({ typeName, shardId: 1 });
  const atClaim = valueOf(await claimant.load(typeName, 'w'));
  const lastAcknowledged = await writer.fenced;
  expect(valueOf(await claimant.load(typeName, 'w'))).toBe(atClaim);
  // The writer's last acknowledged commit is the row the claim found: nothing it acknowledged was lost either.
  expect(atClaim).toBe(lastAcknowledged & 0xffff);
}

/** A writer on `store`: claims, then commits 'w' = 1, 2, 3, ... until a commit is fenced; resolves the last landed. */
export function runWriter(store: EntityStore, typeName: string): { committed: () => number; fenced: Promise<number> } {
  let committed = 0;
  const fenced = (async () => {
    const epoch = await store.claim({ typeName, shardId: 1 });
    for (;;) {
      const { fenced: refused } = await store.commit([write(epoch, 'w', committed + 1, 1, typeName)]);
      if (refused.length > 0) return committed;
      committed++;
    }
  })();
  return { committed: () => committed, fenced };
}
