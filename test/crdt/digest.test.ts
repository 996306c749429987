// Digests (crdt/wire-digest.ts, crdt/digest-relay.ts): their encoding and its bounds against hostile bytes, what a
// replica offers after an update and what a digest shows it lacks, and one pull at a time.
import fc from 'fast-check';
import * as encoding from 'lib0/encoding';
import { describe, expect, it } from 'vitest';
import { PlacementStore, PlacementStoreError } from '../../crdt/index.js';
import { DigestRelay } from '../../crdt/digest-relay.js';
import {
  MAX_DIGEST_BYTES,
  MAX_DIGEST_CLIENTS,
  decodeDigest,
  digestAfter,
  encodeDigest,
  lackedBy,
} from '../../crdt/wire-digest.js';
import { stateVectorOf } from './helpers.js';

function code(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof PlacementStoreError ? error.code : 'untyped';
  }
  return undefined;
}

/** Raw digest bytes written entry by entry, for encodings encodeDigest never makes. */
function raw(generation: number, entries: ReadonlyArray<readonly [number, number]>, count = entries.length) {
  return encoding.encode((e) => {
    encoding.writeVarUint(e, generation);
    encoding.writeVarUint(e, count);
    for (const [client, clock] of entries) {
      encoding.writeVarUint(e, client);
      encoding.writeVarUint(e, clock);
    }
  });
}

/** A store with one write, and the update that write emitted. */
function written(node: string, shardId = 1): { store: PlacementStore; update: Uint8Array } {
  const store = new PlacementStore({ node, now: () => 1_000 });
  const updates: Uint8Array[] = [];
  store.onUpdate((u) => updates.push(u));
  store.set('T', shardId, 'app@10.0.0.1:7701');
  return { store, update: updates[0] as Uint8Array };
}

describe('digest encoding', () => {
  it('round-trips any generation and writers up to the bound, within MAX_DIGEST_BYTES', () => {
    const entries = fc.array(fc.tuple(fc.nat(2 ** 32 - 1), fc.nat()), { maxLength: MAX_DIGEST_CLIENTS });
    fc.assert(
      fc.property(fc.nat(), entries, (generation, pairs) => {
        const clocks = new Map(pairs);
        const bytes = encodeDigest({ generation, clocks });
        expect(bytes.length).toBeLessThanOrEqual(MAX_DIGEST_BYTES);
        expect(decodeDigest(bytes)).toEqual({ generation, clocks });
      }),
      { numRuns: 200 },
    );
  });

  it('rejects oversized, overlong, unordered, duplicated, truncated and trailing encodings with malformed_digest', () => {
    expect(code(() => decodeDigest(new Uint8Array(MAX_DIGEST_BYTES + 1)))).toBe('malformed_digest');
    expect(code(() => decodeDigest(raw(0, [], MAX_DIGEST_CLIENTS + 1)))).toBe('malformed_digest');
    expect(
      code(() =>
        decodeDigest(
          raw(0, [
            [5, 1],
            [4, 1],
          ]),
        ),
      ),
    ).toBe('malformed_digest');
    expect(
      code(() =>
        decodeDigest(
          raw(0, [
            [5, 1],
            [5, 2],
          ]),
        ),
      ),
    ).toBe('malformed_digest');
    expect(code(() => decodeDigest(raw(0, [[5, 1]], 2)))).toBe('malformed_digest');
    expect(code(() => decodeDigest(new Uint8Array([...raw(0, [[5, 1]]), 0])))).toBe('malformed_digest');
    expect(code(() => decodeDigest(new Uint8Array()))).toBe('malformed_digest');
    expect(decodeDigest(raw(3, [[5, 1]]))).toEqual({ generation: 3, clocks: new Map([[5, 1]]) });
  });

  it('any byte string either decodes or is rejected as malformed_digest, never another error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const outcome = code(() => decodeDigest(bytes));
        expect(outcome === undefined || outcome === 'malformed_digest').toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('what a digest offers and shows', () => {
  it('after an update: the writers it carried at the clocks held here; nothing for an update without structs', () => {
    const { store, update } = written('w');
    const receiver = new PlacementStore({ node: 'r', now: () => 1_000 });
    receiver.applyUpdate(update);
    const digest = decodeDigest(digestAfter(update, receiver.encodeStateVector()) as Uint8Array);
    expect(digest).toEqual({ generation: 0, clocks: stateVectorOf(store) });
  });

  it('offers nothing after an update without structs: the prune of an own slot that lost is a deletion only', () => {
    const { store } = written('w');
    const later = new PlacementStore({ node: 'v', now: () => 2_000 });
    later.set('T', 1, 'app@10.0.0.2:7701');
    const own: Uint8Array[] = [];
    store.onUpdate((u, origin) => origin === 'local' && own.push(u));
    store.applyUpdate(later.encodeDiff(store.encodeStateVector()));
    expect(own).toHaveLength(1);
    expect(digestAfter(own[0] as Uint8Array, store.encodeStateVector())).toBeUndefined();
  });

  it('offers only what it holds: a struct waiting for a missing predecessor is not named', () => {
    const writer = new PlacementStore({ node: 'w', now: () => 1_000 });
    const updates: Uint8Array[] = [];
    writer.onUpdate((u) => updates.push(u));
    writer.set('T', 1, 'app@10.0.0.1:7701');
    writer.set('T', 2, 'app@10.0.0.1:7701');
    const receiver = new PlacementStore({ node: 'r', now: () => 1_000 });
    receiver.applyUpdate(updates[1] as Uint8Array);
    expect(receiver.awaitingMissing).toBe(true);
    expect(digestAfter(updates[1] as Uint8Array, receiver.encodeStateVector())).toBeUndefined();
  });

  it('shows a later generation, per writer the clocks held beyond this replica, and nothing from an earlier one', () => {
    const { store } = written('w');
    const local = new PlacementStore({ node: 'r', now: () => 1_000 }).encodeStateVector();
    const clocks = stateVectorOf(store);
    expect(lackedBy(local, { generation: 0, clocks })).toEqual({ laterGeneration: false, clocks });
    expect(lackedBy(store.encodeStateVector(), { generation: 0, clocks })).toEqual({
      laterGeneration: false,
      clocks: new Map(),
    });
    expect(lackedBy(local, { generation: 1, clocks: new Map() }).laterGeneration).toBe(true);
    store.compact();
    expect(lackedBy(store.encodeStateVector(), { generation: 0, clocks })).toEqual({
      laterGeneration: false,
      clocks: new Map(),
    });
  });
});

describe('DigestRelay', () => {
  const digestOf = (store: PlacementStore) => encodeDigest({ generation: 0, clocks: stateVectorOf(store) });

  it('pulls once for digests of one version from three peers; the others are judged again after the answer', () => {
    const { store } = written('w');
    const { store: other } = written('v', 2);
    const empty = new PlacementStore({ node: 'r', now: () => 1_000 });
    const relay = new DigestRelay();
    expect(relay.shouldPull('a', empty.encodeStateVector(), digestOf(store))).toBe(true);
    expect(relay.shouldPull('b', empty.encodeStateVector(), digestOf(store))).toBe(false);
    expect(relay.shouldPull('c', empty.encodeStateVector(), digestOf(other))).toBe(false);
    // a's answer brings w's write: b's digest shows nothing more, c's still shows v's write
    empty.applyUpdate(store.encodeDiff(empty.encodeStateVector()));
    expect(relay.answered('b', () => empty.encodeStateVector())).toBeUndefined();
    expect(relay.answered('a', () => empty.encodeStateVector())).toBe('c');
    expect(relay.answered('c', () => new Uint8Array())).toBeUndefined();
    // nothing lacking: no pull, whatever waits
    expect(relay.shouldPull('a', store.encodeStateVector(), digestOf(store))).toBe(false);
  });

  it('takes a pull unanswered for a whole anti-entropy round as lost, then pulls for what waited', () => {
    const { store } = written('w');
    const empty = new PlacementStore({ node: 'r', now: () => 1_000 }).encodeStateVector();
    const relay = new DigestRelay();
    expect(relay.shouldPull('a', empty, digestOf(store))).toBe(true);
    expect(relay.shouldPull('b', empty, digestOf(store))).toBe(false);
    expect(relay.tick(() => empty)).toBeUndefined();
    expect(relay.tick(() => empty)).toBe('b');
    relay.forget('b');
    expect(relay.shouldPull('c', empty, digestOf(store))).toBe(true);
  });

  it('throws malformed_digest for bytes that are not a digest, before any state changes', () => {
    const relay = new DigestRelay();
    const empty = new PlacementStore({ node: 'r', now: () => 1_000 }).encodeStateVector();
    expect(code(() => relay.shouldPull('a', empty, new Uint8Array([0, 1])))).toBe('malformed_digest');
    const { store } = written('w');
    expect(relay.shouldPull('a', empty, digestOf(store))).toBe(true);
  });
});
