// Issue 24: each input of a placement write is validated once, at the boundary it comes in by, and carried as a
// parsed value after it. The validators are spied on (the modules mocked with their own functions wrapped), and
// one write through the HTTP route, and one through the controller, must call each of them exactly once: the
// route's parse is not repeated by the backend or the controller below it.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ManagementBackend } from '../../src/management/backend.js';
import type { ExternalAllocationController } from '../../src/sharding/api/external-allocation-controller.js';
import { COUNTER, useTestNode } from './node-fixture.js';
import * as shardRange from '../../src/sharding/placements/shard-range.js';
import * as options from '../../src/sharding/placements/placement-options.js';
import * as target from '../../src/sharding/placements/placement-target.js';

// Each module replaced by itself with the named functions wrapped in spies that call the real ones.
const spying = vi.hoisted(
  () =>
    (names: readonly string[]) =>
    async (original: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> => {
      const actual = await original();
      const spies = names.map((name) => [name, vi.fn(actual[name] as (...args: unknown[]) => unknown)]);
      return { ...actual, ...Object.fromEntries(spies) };
    },
);
vi.mock('../../src/sharding/placements/shard-range.js', spying(['parseShardId']));
vi.mock(
  '../../src/sharding/placements/placement-options.js',
  spying(['validatePlacementOptions', 'validatePlacementMode']),
);
vi.mock(
  '../../src/sharding/placements/placement-target.js',
  spying(['parsePlacementTarget', 'canonicalPlacementTarget']),
);

/** How often each input was judged since the last reset: the shard id, the options (mode among them), the target. */
function checks(): { shard: number; mode: number; target: number } {
  return {
    shard: vi.mocked(shardRange.parseShardId).mock.calls.length,
    // validatePlacementOptions judges the mode too: a separate validatePlacementMode call would be a second check.
    mode:
      vi.mocked(options.validatePlacementOptions).mock.calls.length +
      vi.mocked(options.validatePlacementMode).mock.calls.length,
    target:
      vi.mocked(target.parsePlacementTarget).mock.calls.length +
      vi.mocked(target.canonicalPlacementTarget).mock.calls.length,
  };
}

describe('a placement write validates each input once', () => {
  const node = useTestNode();
  beforeEach(() => vi.clearAllMocks());

  it('through the HTTP route: shard id, mode and target each checked once, and written', async () => {
    const self = node().address.toString();
    const reply = await node().http.inject({
      method: 'POST',
      url: `${COUNTER}/placements`,
      payload: { shardId: 7, target: `actor-ts://${self}`, mode: 'require' },
    });
    expect(reply.statusCode).toBe(202);
    expect(reply.json<{ placements: Array<{ target: string; mode: string }> }>().placements).toMatchObject([
      { target: self, mode: 'require' },
    ]);
    expect(checks()).toEqual({ shard: 1, mode: 1, target: 1 });
  });

  it('through the HTTP route, a bad shard id is refused by that one check (400 invalid_shard)', async () => {
    const reply = await node().http.inject({
      method: 'POST',
      url: `${COUNTER}/placements`,
      payload: { shardId: 1000, target: node().address.toString(), mode: 'require' },
    });
    expect(reply.statusCode).toBe(400);
    expect(reply.json<{ error: string }>().error).toBe('invalid_shard');
    expect(checks()).toEqual({ shard: 1, mode: 0, target: 0 });
  });

  it('through the controller (a programmatic caller) and through unpin: each checked once', async () => {
    await node().counterPlacements.setPlacement(8, node().address, { mode: 'prefer' });
    expect(checks()).toEqual({ shard: 1, mode: 1, target: 1 });
    vi.clearAllMocks();
    const reply = await node().http.inject({ method: 'DELETE', url: `${COUNTER}/placements/8` });
    expect(reply.statusCode).toBe(204);
    expect(checks()).toEqual({ shard: 1, mode: 0, target: 0 });
  });
});

/**
 * Compile-time half, checked by `tsc` (npm run typecheck): the layers below the boundary take only parsed values,
 * so a caller cannot hand them an unchecked shard id or an unparsed request. Never called.
 */
export function onlyParsedValuesGoDown(backend: ManagementBackend, controller: ExternalAllocationController): void {
  // @ts-expect-error a plain number is not a ShardId: only parseShardId makes one
  void backend.removePlacement('Counter', 8);
  // @ts-expect-error the same for a rebalance
  void backend.rebalance('Counter', [8]);
  // @ts-expect-error a pin request is not a ParsedPin: parsePins makes those
  void backend.setPlacements('Counter', [{ shardId: 8, target: 'app@127.0.0.1:1' }]);
  // @ts-expect-error the controller's inner write takes parsed pins only
  void controller.setParsedPlacements([{ shardId: 8, target: 'app@127.0.0.1:1' }]);
}
