// PlacementStore unit tests, semantics 6 of issue 2: bad input (shard ids, targets, type names, truncated, foreign
// or oversized updates, bad options) throws a typed PlacementStoreError and leaves the store exactly as it was.
import * as Y from 'yjs';
import { describe, expect, it } from 'vitest';
import {
  MAX_TARGET_LENGTH,
  MAX_TYPE_NAME_LENGTH,
  EMPTY_STATE_VECTOR,
  PlacementStore,
  PlacementStoreError,
  type PlacementStoreErrorCode,
} from '../../crdt/index.js';
import { asWireUpdate } from './helpers.js';

describe('semantics 6: bad input throws a typed error and changes nothing', () => {
  function expectUnchanged(
    store: PlacementStore,
    action: () => unknown,
    code: PlacementStoreErrorCode,
    message?: RegExp,
  ): void {
    const snapshot = store.snapshot('T');
    const stateVector = store.encodeStateVector();
    const state = store.encodeDiff(EMPTY_STATE_VECTOR);
    const updates: Uint8Array[] = [];
    const off = store.onUpdate((u) => updates.push(u));
    let thrown: unknown;
    try {
      action();
    } catch (error) {
      thrown = error;
    }
    off();
    expect(thrown).toBeInstanceOf(PlacementStoreError);
    expect((thrown as PlacementStoreError).code).toBe(code);
    if (message !== undefined) expect((thrown as Error).message).toMatch(message);
    expect(store.snapshot('T')).toBe(snapshot);
    expect(store.encodeStateVector()).toEqual(stateVector);
    expect(store.encodeDiff(EMPTY_STATE_VECTOR)).toEqual(state);
    expect(updates).toHaveLength(0);
  }

  function seeded(): PlacementStore {
    const s = new PlacementStore({ node: 'a', now: () => 5_000 });
    s.set('T', 1, 'x');
    s.set('T', 2, 'y');
    s.remove('T', 2);
    return s;
  }

  it('rejects shard ids that are not non-negative safe integers', () => {
    const s = seeded();
    for (const bad of [-1, 1.5, Number.NaN, Infinity, 2 ** 53, '3', null]) {
      expectUnchanged(
        s,
        () => s.set('T', bad as number, 'x'),
        'invalid_shard_id',
        /shardId must be a non-negative safe integer/,
      );
      expectUnchanged(s, () => s.remove('T', bad as number), 'invalid_shard_id');
    }
  });

  it('rejects empty, over-long or control-character targets', () => {
    const s = seeded();
    expectUnchanged(s, () => s.set('T', 1, ''), 'invalid_target', /must not be empty/);
    expectUnchanged(s, () => s.set('T', 1, 'x'.repeat(MAX_TARGET_LENGTH + 1)), 'invalid_target', /limit is 256/);
    expectUnchanged(s, () => s.set('T', 1, 'a\nb'), 'invalid_target');
    expectUnchanged(s, () => s.set('T', 1, 7 as unknown as string), 'invalid_target');
    expect(s.set('T', 1, 'x'.repeat(MAX_TARGET_LENGTH)).target).toHaveLength(MAX_TARGET_LENGTH);
  });

  it('rejects empty, over-long or control-character type names', () => {
    const s = seeded();
    expectUnchanged(s, () => s.set('', 1, 'x'), 'invalid_type_name');
    expectUnchanged(s, () => s.set('T'.repeat(MAX_TYPE_NAME_LENGTH + 1), 1, 'x'), 'invalid_type_name', /limit is 128/);
    expectUnchanged(s, () => s.remove('a\u0000b', 1), 'invalid_type_name');
    expectUnchanged(s, () => s.snapshot(''), 'invalid_type_name');
    expect(s.typeNames()).toEqual(['T']);
  });

  it('rejects every truncation of a valid update', () => {
    const source = seeded();
    const full = source.encodeDiff(EMPTY_STATE_VECTOR);
    const target = new PlacementStore({ node: 'b' });
    target.set('T', 9, 'z');
    for (let n = 0; n < full.length; n++) {
      expectUnchanged(
        target,
        () => target.applyUpdate(full.slice(0, n)),
        'malformed_update',
        /placement update rejected/,
      );
    }
    expect(target.stats().rejectedUpdates).toBe(full.length);
    target.applyUpdate(full);
    expect(target.snapshot('T').placements.get(1)?.target).toBe('x');
  });

  it('does not read past the end of a subarray view', () => {
    const full = seeded().encodeDiff(EMPTY_STATE_VECTOR);
    const padded = new Uint8Array(full.length + 64);
    padded.set(full);
    const target = new PlacementStore({ node: 'b' });
    for (const cut of [full.length - 1, full.length - 10]) {
      expectUnchanged(target, () => target.applyUpdate(padded.subarray(0, cut)), 'malformed_update');
    }
  });

  it('rejects garbage and non-bytes', () => {
    const s = seeded();
    expectUnchanged(
      s,
      () => s.applyUpdate(new Uint8Array([255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 1])),
      'malformed_update',
    );
    expectUnchanged(
      s,
      () => s.applyUpdate('nope' as unknown as Uint8Array),
      'malformed_update',
      /must be a Uint8Array/,
    );
    expectUnchanged(s, () => s.encodeDiff(new Uint8Array([5, 1])), 'malformed_state_vector');
    expectUnchanged(s, () => s.encodeDiff(new Uint8Array([0, 7])), 'malformed_state_vector', /end of array/);
    expectUnchanged(s, () => s.encodeDiff(new Uint8Array([0, 0, 1, 0, 9])), 'malformed_state_vector', /trailing/);
    expectUnchanged(s, () => s.applyUpdate(new Uint8Array([0, 8])), 'malformed_update', /unknown flags/);
  });

  it('rejects well-formed Yjs updates that are not placement slots', () => {
    const s = seeded();
    const foreign: Array<[string, (doc: Y.Doc) => void, RegExp]> = [
      ['text', (d) => d.getText('T').insert(0, 'hi'), /has no map key/],
      ['string in a map', (d) => d.getMap('T').set('1\u0000a', new Y.Text('x')), /content type 7/],
      ['array', (d) => d.getArray('T').insert(0, [['x', 1, 0]]), /has no map key/],
      ['nested map', (d) => d.getMap('T').set('1\u0000a', new Y.Map()), /content type 7/],
      ['bad key', (d) => d.getMap('T').set('01\u0000a', ['x', 1, 0]), /not shardId/],
      ['key without writer', (d) => d.getMap('T').set('1', ['x', 1, 0]), /not shardId/],
      ['bad value', (d) => d.getMap('T').set('1\u0000a', { target: 'x' }), /value is not/],
      ['bad counter', (d) => d.getMap('T').set('1\u0000a', ['x', 1, 70_000]), /value is not/],
      ['empty target', (d) => d.getMap('T').set('1\u0000a', ['', 1, 0]), /value is not/],
      ['long type name', (d) => d.getMap('T'.repeat(200)).set('1\u0000a', ['x', 1, 0]), /type name/],
      ['binary', (d) => d.getMap('T').set('1\u0000a', new Uint8Array([1])), /content type 3/],
    ];
    for (const [, write, message] of foreign) {
      const doc = new Y.Doc();
      write(doc);
      expectUnchanged(s, () => s.applyUpdate(asWireUpdate(Y.encodeStateAsUpdateV2(doc))), 'malformed_update', message);
    }
    // a V1 update is not our encoding either, nor is a bare V2 update without the store's envelope
    const doc = new Y.Doc();
    doc.getMap('T').set('7\u0000q', ['x', 1, 0]);
    expectUnchanged(s, () => s.applyUpdate(asWireUpdate(Y.encodeStateAsUpdate(doc))), 'malformed_update');
    expectUnchanged(s, () => s.applyUpdate(Y.encodeStateAsUpdateV2(doc)), 'malformed_update');
    // the same content in the store's encoding is accepted
    s.applyUpdate(asWireUpdate(Y.encodeStateAsUpdateV2(doc)));
    expect(s.snapshot('T').placements.get(7)).toEqual({
      target: 'x',
      hlc: { wallMs: 1, counter: 0, node: 'q' },
      writer: 'q',
    });
  });

  it('rejects updates with more structs than maxUpdateStructs', () => {
    const source = new PlacementStore({ node: 'src' });
    for (let i = 0; i < 10; i++) source.set('T', i, 'x');
    const update = source.encodeDiff(EMPTY_STATE_VECTOR);
    const small = new PlacementStore({ node: 'b', maxUpdateStructs: 9 });
    expectUnchanged(small, () => small.applyUpdate(update), 'malformed_update', /more than 9 structs/);
    const enough = new PlacementStore({ node: 'b', maxUpdateStructs: 10 });
    enough.applyUpdate(update);
    expect(enough.snapshot('T').placements.size).toBe(10);
  });

  it('rejects bad constructor options', () => {
    expect(() => new PlacementStore({ node: '' })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => new PlacementStore({ node: 'a', maxDriftMs: Number.NaN })).toThrow(
      expect.objectContaining({ code: 'invalid_option' }),
    );
    expect(() => new PlacementStore(null as unknown as { node: string })).toThrow(PlacementStoreError);
    expect(() => new PlacementStore({ node: 'a', maxUpdateStructs: 0 })).toThrow(
      expect.objectContaining({ code: 'invalid_option' }),
    );
  });
});
