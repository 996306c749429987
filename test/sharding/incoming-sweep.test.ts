// Chunks a new home received for a start that is not coming (sent ahead of a stop to a home the HandOff did not
// name after all: the rest went elsewhere) are dropped on the retry tick once older than the hand-off timeout, by
// the region's clock; a transfer a HostShard named, a younger one, or a complete one (a start named later takes it)
// stays.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import { StateTransfer } from '../../src/sharding/region/state-transfer.js';

const TIMEOUT_MS = 60_000;

function transferAt(clock: { now: number }): StateTransfer {
  return new StateTransfer({
    typeName: 'T',
    config: {
      ...{ maxEntitySnapshotBytes: 100_000, stateChunkBytes: 50_000 },
      ...{ maxHandOffStateBytes: 1_000_000, handOffTimeoutMs: TIMEOUT_MS },
    },
    logger: silentLogger(),
    now: () => clock.now,
  });
}

/** Part 0 of `parts` (2: incomplete) of transfer `transferId` of `shardId`: one entity's state of 100 bytes. */
function firstPart(transfer: StateTransfer, shardId: number, transferId: number, parts = 2): void {
  const entities = [{ entityId: `e${shardId}`, state: new Uint8Array(100) }];
  transfer.received({ type: 'RestoreShardState', typeName: 'T', shardId, transferId, part: 0, parts, entities });
}

describe('a transfer no start waits for', () => {
  it('is dropped once older than the hand-off timeout, if incomplete; one a HostShard named, a younger or a complete one stays', () => {
    const clock = { now: 1_000 };
    const transfer = transferAt(clock);
    firstPart(transfer, 1, 10);
    firstPart(transfer, 2, 20);
    firstPart(transfer, 4, 40, 1);
    expect(transfer.expect(2, 20, clock.now)).toBe('waiting');
    clock.now += TIMEOUT_MS / 2;
    firstPart(transfer, 3, 30);
    transfer.sweep();
    expect(transfer.bytesWaiting).toBe(400);
    clock.now += TIMEOUT_MS / 2 + 1;
    transfer.sweep();
    // Shard 1's is gone; shard 2's is awaited (its own wait ends at the timeout: expect), 3's younger, 4's complete.
    expect(transfer.bytesWaiting).toBe(300);
    clock.now += TIMEOUT_MS;
    transfer.sweep();
    expect(transfer.bytesWaiting).toBe(200);
    expect(transfer.restore(3)).toBeUndefined();
    // A start named later takes the complete one as it is.
    expect(transfer.expect(4, 40, clock.now)).toBe('ready');
    expect(transfer.restore(4)).toBeDefined();
    expect(transfer.bytesWaiting).toBe(100);
  });
});
