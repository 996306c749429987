// The placement sync family: frames and messages map one to one, and the gate drops anything else.
import { describe, expect, it } from 'vitest';
import { MAX_DIGEST_BYTES, type SyncFrame } from '../../crdt/index.js';
import {
  PLACEMENT_SYNC_MESSAGES,
  parsePlacementSyncMessage,
  toSyncFrame,
  toSyncMessage,
} from '../../src/placement-replication/sync-messages.js';

const FRAMES: SyncFrame[] = [
  { kind: 'step1', stateVector: new Uint8Array([0]) },
  { kind: 'step2', update: new Uint8Array([1, 2]) },
  { kind: 'update', update: new Uint8Array([3]) },
  { kind: 'update', update: new Uint8Array([0, 0]), digest: new Uint8Array([0, 1, 7, 2]) },
];

describe('placement sync messages', () => {
  it('map every frame to a message of the family and back unchanged', () => {
    for (const frame of FRAMES) {
      const message = toSyncMessage(frame);
      expect(PLACEMENT_SYNC_MESSAGES.types.has(message.type)).toBe(true);
      expect(PLACEMENT_SYNC_MESSAGES.parse(message)).toEqual(message);
      expect(toSyncFrame(message)).toEqual(frame);
    }
    expect([...PLACEMENT_SYNC_MESSAGES.types].sort()).toEqual([
      'PlacementSyncStep1',
      'PlacementSyncStep2',
      'PlacementUpdate',
    ]);
  });

  it('drops payloads that are not bytes or exceed the bound, and types of other families', () => {
    expect(parsePlacementSyncMessage({ type: 'PlacementSyncStep1', stateVector: [0] })).toBeUndefined();
    expect(parsePlacementSyncMessage({ type: 'PlacementUpdate', update: 'AAA=' })).toBeUndefined();
    expect(parsePlacementSyncMessage({ type: 'PlacementSyncStep2' })).toBeUndefined();
    expect(
      parsePlacementSyncMessage({ type: 'PlacementUpdate', update: new Uint8Array(15 * 1024 * 1024 + 1) }),
    ).toBeUndefined();
    expect(parsePlacementSyncMessage({ type: 'GetShardHome', typeName: 'T', shardId: 1 })).toBeUndefined();
  });

  it("bound a PlacementUpdate's digest before anything reads it, and ignore fields they do not know", () => {
    const update = new Uint8Array([0, 0]);
    expect(parsePlacementSyncMessage({ type: 'PlacementUpdate', update, digest: [0, 0] })).toBeUndefined();
    expect(parsePlacementSyncMessage({ type: 'PlacementUpdate', update, digest: null })).toBeUndefined();
    expect(
      parsePlacementSyncMessage({ type: 'PlacementUpdate', update, digest: new Uint8Array(MAX_DIGEST_BYTES + 1) }),
    ).toBeUndefined();
    const digest = new Uint8Array(MAX_DIGEST_BYTES);
    expect(parsePlacementSyncMessage({ type: 'PlacementUpdate', update, digest, later: 1 })).toEqual({
      type: 'PlacementUpdate',
      update,
      digest,
    });
    // a step 2 never carries one: the field is ignored there like any unknown one
    expect(parsePlacementSyncMessage({ type: 'PlacementSyncStep2', update, digest })).toEqual({
      type: 'PlacementSyncStep2',
      update,
    });
  });
});
