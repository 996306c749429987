// Issue 41, on real processes: three CLI nodes, the third under libfaketime, first 24 days ahead, then (a fresh node
// in its place) a day behind. The skewed node learns its offset from the heartbeats, refuses pin writes with 503
// clock_skew naming it and says why in health; the two nodes with sane clocks take writes and stay ok. Each run's
// outcome (every write's status, what each node lists, each node's health) is written to the report file the
// closing note quotes (FAKETIME_REPORT, default in the temp directory).
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePorts, useProcessSet, waitFor, waitForCluster, SHARDS_PATH, type NodeProc } from './harness.js';

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const REPORT = process.env['FAKETIME_REPORT'] ?? join(tmpdir(), 'actor-ts-faketime-runs.json');
const procs = useProcessSet();

interface Health {
  readonly status: string;
  readonly reasons: readonly string[];
}

/** A node started under libfaketime with its clock moved by `offset` (`+24d`, `-1d`), joining through `seed`. */
async function skewedNode(name: string, offset: string, seed: string): Promise<NodeProc> {
  if (!existsSync(LIBFAKETIME)) {
    throw new Error(`${LIBFAKETIME} is missing: run as root: apt-get update && apt-get install -y faketime`);
  }
  const [port, httpPort] = await freePorts(2);
  return procs.startNode({
    name,
    port: port!,
    httpPort: httpPort!,
    seed,
    env: { LD_PRELOAD: LIBFAKETIME, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' },
  });
}

async function pin(node: NodeProc, shardId: number, target: string): Promise<{ status: number; body: unknown }> {
  const result = await node.post(`${SHARDS_PATH}/placements`, { shardId, target, reason: 'clock skew test' });
  return { status: result.status, body: result.body };
}

/** What the closing note reports of one run: each write's status, each node's pins and health. */
async function outcome(nodes: readonly NodeProc[], writes: Record<string, number>) {
  return {
    writes,
    lists: Object.fromEntries(
      await Promise.all(nodes.map(async (node) => [node.name, (await node.placements()).map((p) => p.shardId)])),
    ),
    health: Object.fromEntries(
      await Promise.all(
        nodes.map(async (node) => {
          const health = (await node.get<Health>('/actor-ts/health')).body;
          return [node.name, { status: health.status, reasons: health.reasons }];
        }),
      ),
    ),
  };
}

describe('a node whose clock is far off (libfaketime)', () => {
  it('refuses writes with clock_skew and says why, 24 days ahead and a day behind; the sane nodes are unaffected', async () => {
    const [a, b] = await procs.startCluster(2, { downAfterMs: 3_000 });
    const report: Record<string, unknown> = {};
    let shard = 100;
    const pinned: number[] = [];
    for (const [name, offset, direction] of [
      ['ahead', '+24d', 'ahead of'],
      ['behind', '-1d', 'behind'],
    ] as const) {
      const skewed = await skewedNode(`node-${name}`, offset, a!.address);
      const nodes = [a!, b!, skewed];
      await waitForCluster(nodes, 45_000);
      await waitFor(
        `${skewed.name} to find its clock ${direction} its peers'`,
        async () => (await skewed.get<Health>('/actor-ts/health')).body.reasons.some((r) => r.includes('clock_skew')),
        20_000,
      );
      const refused = await pin(skewed, ++shard, a!.address);
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({
        error: 'clock_skew',
        message: expect.stringContaining(`s ${direction} the median`),
      });
      const writes: Record<string, number> = { [skewed.name]: refused.status };
      for (const sane of [a!, b!]) {
        const written = await pin(sane, ++shard, skewed.address);
        expect(written.status, JSON.stringify(written.body)).toBe(202);
        writes[sane.name] = written.status;
        pinned.push(shard);
      }
      const health = (await skewed.get<Health>('/actor-ts/health')).body;
      expect(health.status).toBe('degraded');
      const metrics = await (await fetch(`${skewed.url}/metrics`)).text();
      const seconds = Number(/^actor_ts_clock_offset_seconds (\S+)$/m.exec(metrics)?.[1]);
      expect(Math.abs(seconds)).toBeGreaterThan(offset === '+24d' ? 23 * 86_400 : 0.9 * 86_400);
      expect(Math.sign(seconds)).toBe(offset === '+24d' ? 1 : -1);
      for (const sane of [a!, b!]) expect((await sane.get<Health>('/actor-ts/health')).body.status).toBe('ok');
      // Every node, the skewed one too, lists the sane nodes' pins and nothing of the refused one.
      const listed = async () =>
        (await Promise.all(nodes.map((node) => node.placements()))).map((l) => l.map((p) => p.shardId).sort());
      await waitFor(
        "the sane nodes' pins, and only those, on every node",
        async () => (await listed()).every((ids) => JSON.stringify(ids) === JSON.stringify([...pinned].sort())),
        10_000,
      );
      report[name] = await outcome(nodes, writes);
      // The next run's skewed node takes this one's place.
      skewed.signal('SIGTERM');
      await skewed.exited;
      await waitFor(
        'the skewed node gone',
        async () => (await a!.get<{ members: unknown[] }>('/actor-ts/cluster/members')).body.members.length === 2,
        30_000,
      );
    }
    writeFileSync(REPORT, `${JSON.stringify(report, null, 2)}\n`);
  }, 180_000);
});
