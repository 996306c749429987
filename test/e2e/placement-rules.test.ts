// Issue 11, multi-process: pins to node attributes on real CLI node processes. Five nodes, three with
// `--attribute zone=a` and two with `zone=b`; a prefer pin and a require pin to zone=b (written with the CLI)
// land on zone=b nodes. Both zone=b nodes are SIGKILLed: the prefer shard answers from a zone=a node, the
// require shard answers from nowhere until a new zone=b node starts, then from it (the wait after that node
// is up is printed). A pin with a 2 s TTL disappears from the listing once it expired.
import { describe, expect, it } from 'vitest';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';
import { http, httpOk, type HttpResult } from '../support/http.js';
import { nodeAddress, nodeCommandArgs, waitForFormedCluster, type MembersAnswer } from '../support/node-cli.js';
import { freePorts } from '../support/ports.js';
import { exitWithin, useProcessSet, waitFor, type CounterValue, type Proc, type ProcessSet } from './harness.js';

const DOWN_AFTER_MS = 3000;
const PLACEMENTS = '/actor-ts/cluster/shards/Counter/placements';

const procs = useProcessSet();

interface ZoneNode {
  readonly name: string;
  readonly zone: string;
  readonly address: string;
  readonly url: string;
  readonly proc: Proc;
}

function startZoneNode(
  set: ProcessSet,
  name: string,
  zone: string,
  port: number,
  httpPort: number,
  seed: string,
): ZoneNode {
  const args = [
    ...nodeCommandArgs({ port, httpPort, seed, downAfterMs: DOWN_AFTER_MS, logLevel: 'info' }),
    '--attribute',
    `zone=${zone}`,
  ];
  return {
    name,
    zone,
    address: nodeAddress(port),
    url: `http://127.0.0.1:${httpPort}`,
    proc: set.spawnCli(name, args),
  };
}

/** Runs one CLI command against `url` and returns its exit code (the output goes to its log). */
async function cli(name: string, url: string, ...args: string[]): Promise<number> {
  const proc = procs.spawnCli(name, [...args, '--url', url]);
  const { code } = await exitWithin(proc, 20_000);
  return code ?? -1;
}

/** Increments `entityId` through `via` every `intervalMs` until it answers from a node `accept` takes (60 s at most). */
function answeredFrom(
  via: ZoneNode,
  entityId: string,
  accept: (node: string) => boolean,
  intervalMs: number,
): Promise<CounterValue> {
  return waitFor(
    `${entityId} to answer from an accepted node`,
    async () => {
      const answer = await increment(via, entityId, 6000);
      return answer.status === 200 && accept(answer.body.node) ? answer.body : undefined;
    },
    60_000,
    intervalMs,
  );
}

/** The members `node` lists, as it sees them. */
async function membersOf(node: ZoneNode): Promise<MembersAnswer['members']> {
  return (await httpOk<MembersAnswer>('GET', `${node.url}/actor-ts/cluster/members`, undefined, 3000)).members;
}

function increment(node: ZoneNode, entityId: string, timeoutMs = 8000): Promise<HttpResult<CounterValue>> {
  return http<CounterValue>(
    'POST',
    `${node.url}/counters/${encodeURIComponent(entityId)}/increment`,
    undefined,
    timeoutMs,
  );
}

/** An entity id whose shard is none of `taken`. */
function entityOnFreshShard(prefix: string, taken: ReadonlySet<number>): { entityId: string; shardId: number } {
  for (let i = 0; ; i++) {
    const entityId = `${prefix}-${i}`;
    const shardId = shardIdFor(entityId, 1000);
    if (!taken.has(shardId)) return { entityId, shardId };
  }
}

describe('placement rules across processes', () => {
  it('prefer and require pins to zone=b: where they land, when zone=b is gone, and when it comes back; a TTL pin expires', async () => {
    const ports = await freePorts(12);
    const port = (i: number): number => ports[i] as number;
    const seed = nodeAddress(port(0));
    const zones = ['a', 'a', 'a', 'b', 'b'];
    const nodes = zones.map((zone, i) =>
      startZoneNode(procs, `node${i + 1}-zone-${zone}`, zone, port(2 * i), port(2 * i + 1), seed),
    );
    await waitForFormedCluster(
      nodes.map((n) => n.url),
      nodes.map((n) => n.address),
      { timeoutMs: 45_000, failure: () => nodes.find((n) => n.proc.hasExited)?.name },
    );
    const [entry] = nodes as [ZoneNode, ...ZoneNode[]];
    const zoneA = new Set(nodes.filter((n) => n.zone === 'a').map((n) => n.address));
    const zoneB = new Set(nodes.filter((n) => n.zone === 'b').map((n) => n.address));

    // Every node sees every member's zone.
    const view = await httpOk<{ members: Array<{ address: string; attributes: Record<string, string> }> }>(
      'GET',
      `${entry.url}/actor-ts/cluster/members`,
    );
    expect(Object.fromEntries(view.members.map((m) => [m.address, m.attributes['zone']]))).toEqual(
      Object.fromEntries(nodes.map((n) => [n.address, n.zone])),
    );

    const preferred = entityOnFreshShard('prefer', new Set());
    const required = entityOnFreshShard('require', new Set([preferred.shardId]));
    expect(
      await cli(
        'pin-prefer',
        entry.url,
        'placements',
        'set',
        String(preferred.shardId),
        'zone=b',
        '--reason',
        'prefer test',
        '--by',
        'e2e@test',
      ),
    ).toBe(0);
    expect(
      await cli(
        'pin-require',
        entry.url,
        'placements',
        'set',
        String(required.shardId),
        'zone=b',
        '--require',
        '--reason',
        'GDPR tenant 17',
      ),
    ).toBe(0);
    // The node that took the writes logged them with their reason and author.
    const written = entry.proc
      .log()
      .split('\n')
      .filter((line) => line.includes('explicit placement set'));
    expect(
      written.some(
        (line) =>
          line.includes('"reason":"GDPR tenant 17"') && line.includes('"mode":"require"') && line.includes('"by":"'),
      ),
    ).toBe(true);
    expect(written.some((line) => line.includes('"reason":"prefer test"') && line.includes('"by":"e2e@test"'))).toBe(
      true,
    );
    // Written through node 1, asked through every node: wait until each replica has both pins.
    for (const node of nodes) {
      await waitFor(`${node.name} to hold both pins`, async () => {
        const listed = await httpOk<{ placements: Array<{ shardId: number; mode: string }> }>(
          'GET',
          node.url + PLACEMENTS,
        );
        return (
          listed.placements.filter((p) => p.shardId === preferred.shardId || p.shardId === required.shardId).length ===
          2
        );
      });
    }

    const first = await Promise.all([increment(entry, preferred.entityId), increment(entry, required.entityId)]);
    for (const answer of first) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(zoneB.has(answer.body.node), `${answer.body.entityId} answered from ${answer.body.node}`).toBe(true);
    }

    // Both zone=b nodes die at once.
    for (const node of nodes.filter((n) => n.zone === 'b')) node.proc.signal('SIGKILL');
    const killedAt = Date.now();
    const survivors = nodes.filter((n) => n.zone === 'a');
    await waitFor(
      'the zone=b nodes to be downed',
      async () => {
        const members = await membersOf(entry);
        return (
          members.filter((m) => zoneB.has(m.address)).every((m) => m.status === 'down' || m.status === 'removed') ||
          members.every((m) => !zoneB.has(m.address))
        );
      },
      60_000,
      200,
    );
    // The prefer shard falls back to a zone=a node.
    const preferAfter = await answeredFrom(entry, preferred.entityId, (node) => zoneA.has(node), 200);
    const preferRehomedMs = Date.now() - killedAt;
    expect(zoneA.has(preferAfter.node)).toBe(true);
    // The require shard has no home: asks through every survivor fail.
    for (const node of survivors) {
      const answer = await increment(node, required.entityId);
      expect(answer.status, `${node.name}: ${JSON.stringify(answer.body)}`).not.toBe(200);
    }

    // A new zone=b node joins; the require shard answers from it.
    const newcomer = startZoneNode(procs, 'node6-zone-b', 'b', port(10), port(11), seed);
    let upAt = 0;
    await waitFor(
      "node6 to be up in node1's view",
      async () => {
        const up = (await membersOf(entry)).some((m) => m.address === newcomer.address && m.status === 'up');
        if (up) upAt = Date.now();
        return up;
      },
      45_000,
      50,
    );
    const requireAfter = await answeredFrom(entry, required.entityId, () => true, 50);
    const requireWaitMs = Date.now() - upAt;
    expect(requireAfter.node).toBe(newcomer.address);
    expect((await increment(newcomer, required.entityId)).body.node).toBe(newcomer.address);

    // A pin with a 2 s TTL is listed, then gone once it expired (and listed as expired on request).
    const shortLived = entityOnFreshShard('ttl', new Set([preferred.shardId, required.shardId]));
    expect(
      await cli(
        'pin-ttl',
        entry.url,
        'placements',
        'set',
        String(shortLived.shardId),
        'zone=a',
        '--ttl',
        '2s',
        '--reason',
        'short',
      ),
    ).toBe(0);
    const listedAt = Date.now();
    const listing = async (
      query = '',
    ): Promise<Array<{ shardId: number; expiresAt: string | null; expired?: boolean }>> =>
      (
        await httpOk<{ placements: Array<{ shardId: number; expiresAt: string | null; expired?: boolean }> }>(
          'GET',
          entry.url + PLACEMENTS + query,
        )
      ).placements;
    const ttlPin = (await listing()).find((p) => p.shardId === shortLived.shardId);
    expect(ttlPin?.expiresAt).not.toBeNull();
    await waitFor(
      'the 2 s pin to leave the listing',
      async () => !(await listing()).some((p) => p.shardId === shortLived.shardId),
      20_000,
      100,
    );
    const goneAfterMs = Date.now() - listedAt;
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(ttlPin?.expiresAt ?? ''));
    expect((await listing('?includeExpired=true')).find((p) => p.shardId === shortLived.shardId)).toMatchObject({
      expired: true,
    });
    // The other pins stay.
    expect((await listing()).map((p) => p.shardId).sort((a, b) => a - b)).toEqual(
      [preferred.shardId, required.shardId].sort((a, b) => a - b),
    );

    console.log(
      `[e2e figures] placement rules: down-after-ms ${DOWN_AFTER_MS}; kill of both zone=b nodes -> prefer shard answering from zone=a in ` +
        `${preferRehomedMs} ms; require shard answering from the new zone=b node ${requireWaitMs} ms after it was up in the ` +
        `seed's view; 2 s TTL pin gone from the listing ${goneAfterMs} ms after it was written`,
    );
  }, 240_000);
});
