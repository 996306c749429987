// Issue 41 on one real node: while its clock is far off its peers' (two references say so), pins written in process
// through its ExternalAllocationController are refused with clock_skew as over HTTP, nothing is written, and once the
// references agree again it writes. The readings are fed through the node's own ClockWatch as heartbeat acks would.
import { describe, expect, it } from 'vitest';
import { PlacementStoreError } from '../../crdt/index.js';
import { COUNTER, useTestNode } from '../management/node-fixture.js';

const DAY = 86_400_000;

describe('a skewed node in process', () => {
  const node = useTestNode();

  it('refuses pins and unpins through its controller with clock_skew, and writes again once back', async () => {
    const { clock } = node().cluster;
    const controller = node().placements('Counter');
    const self = node().address;
    await controller.setPlacement(1, self);
    // Two peers whose clocks read a day behind ours: a majority says this node is a day ahead.
    for (const peer of ['a', 'b']) clock.acked(peer, { echoMs: Date.now() - 1, atMs: Date.now() - DAY });
    expect(clock.skewReason()).toMatch(/ahead of the median/);
    await expect(controller.setPlacement(2, self)).rejects.toMatchObject({ code: 'clock_skew' });
    await expect(controller.removePlacement(1)).rejects.toBeInstanceOf(PlacementStoreError);
    const http = await node().http.inject({
      method: 'POST',
      url: `${COUNTER}/placements`,
      payload: { shardId: 2, target: self.toString() },
    });
    expect(http.statusCode).toBe(503);
    expect((await controller.getPlacements()).has(2)).toBe(false);
    expect((await controller.getPlacements()).has(1)).toBe(true);

    for (const peer of ['a', 'b']) clock.forget(peer);
    expect(clock.skewReason()).toBeUndefined();
    await controller.setPlacement(2, self);
    expect((await controller.getPlacements()).has(2)).toBe(true);
  });
});
