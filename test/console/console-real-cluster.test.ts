// The console against a real cluster: `local-cluster --nodes 3` as a child process (needs `npm run build`), its
// node 1 page in Debian's Chromium through playwright-core. The page lists the three nodes; an entity request
// makes its shard appear on the map; a pin through the form moves the shard (the map shows it on the target);
// unpinning clears the mark. Leaves test-results/console-real-cluster.png. Without Chromium it fails saying so.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, closeBrowser, openConsole, screenshotPath } from './browser.js';
import {
  COUNTER,
  http,
  startLocalCluster,
  useProcessSet,
  waitFor,
  type CounterValue,
  type ShardLocations,
} from '../e2e/harness.js';

const procs = useProcessSet();
afterAll(() => closeBrowser());

/** How long the page may take to show what the cluster did: it polls every 2 s, hand-offs take a few more. */
const SEEN_WITHIN_MS = 15_000;

async function increment(url: string, entityId: string): Promise<CounterValue> {
  const answer = await http<CounterValue>('POST', `${url}/counters/${encodeURIComponent(entityId)}/increment`);
  if (answer.status !== 200)
    throw new Error(`increment of ${entityId} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** The map cell of a Counter shard. */
const cell = (page: Page, shardId: number) =>
  page.locator(`#maps .cell[data-type="${COUNTER}"][data-shard="${shardId}"]`);

describe('console on a real local-cluster', () => {
  it('lists three nodes, shows a requested shard, moves a shard pinned through the form, clears the pin', async () => {
    const built = join(ROOT, 'dist', 'src', 'management', 'console', 'static', 'main.js');
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` before this test`);
    const { urls, addresses } = await startLocalCluster(procs, 'nodes');
    const [url1, url2] = urls as [string, string, string];
    const { page, errors } = await openConsole(`${url1}/`, { width: 1280, height: 800 });

    // Three nodes, node 1 marked as this node and (oldest Up member, upNumber 1) as the coordinator.
    const rows = page.locator('#nodes-table tbody tr');
    await rows.nth(2).waitFor({ timeout: SEEN_WITHIN_MS });
    expect(await rows.count()).toBe(3);
    const nodesText = await page.locator('#nodes-table').innerText();
    for (const address of addresses) expect(nodesText).toContain(address);
    const coordinator = await http<{ members: Array<{ address: string; upNumber: number }> }>(
      'GET',
      `${url1}/actor-ts/cluster/members`,
    );
    const oldest = [...coordinator.body.members].sort((a, b) => a.upNumber - b.upNumber)[0]?.address;
    expect(
      await page
        .locator('#nodes-table tbody tr', { hasText: oldest ?? '?' })
        .locator('.badge.coordinator')
        .count(),
    ).toBe(1);
    expect(await page.locator('#nodes-table .badge.coordinator').count()).toBe(1);
    expect(
      await page
        .locator('#nodes-table tbody tr', { hasText: addresses[0] ?? '?' })
        .locator('.badge.self')
        .count(),
    ).toBe(1);

    // An entity request allocates its shard: the map shows it on the node the answer names.
    const alice = await increment(url2, 'alice');
    await page
      .locator(`#maps .cell[data-shard="${alice.shardId}"][data-host="${alice.node}"]`)
      .waitFor({ timeout: SEEN_WITHIN_MS });
    for (const entity of ['bob', 'carol', 'dave', 'erin']) await increment(url2, entity);
    // The map's summary says how many of the type's entities are active on the node serving the console, and that
    // local-cluster's Counter is durable (its nodes share an entity store).
    await page
      .locator('#maps .summary', { hasText: /\d+ entities active here · durable/ })
      .waitFor({ timeout: SEEN_WITHIN_MS });

    // Pin alice's shard through the form to a node that does not host it: dry run first, then the pin.
    const target = addresses.find((address) => address !== alice.node) ?? '?';
    await page.selectOption('#pin-type', COUNTER);
    await cell(page, alice.shardId).click();
    expect(await page.inputValue('#pin-shard')).toBe(String(alice.shardId));
    await page.fill('#pin-target', target);
    await page.fill('#pin-reason', 'keep alice near her data');
    await page.click('#pin-preview');
    await page
      .locator('#dry-run-lines', { hasText: `Shard ${alice.shardId} of ${COUNTER} is on ${alice.node}.` })
      .waitFor();
    await page.click('#pin-confirm');
    // A node whose API predates pin reasons refuses the field and writes nothing; the page says so and asks.
    const refused = page.locator('#dry-run-lines', { hasText: 'does not take a reason' });
    const pinned = page.locator(`#pins-table tbody tr`, { hasText: target });
    await refused.or(pinned).first().waitFor({ timeout: SEEN_WITHIN_MS });
    if (await refused.isVisible()) {
      expect(
        (await http<{ placements: unknown[] }>('GET', `${url1}/actor-ts/cluster/shards/${COUNTER}/placements`)).body
          .placements,
      ).toEqual([]);
      await page.click('#pin-confirm');
    } else {
      expect(await page.locator('#pins-table').innerText()).toContain('keep alice near her data');
    }
    await pinned.waitFor({ timeout: SEEN_WITHIN_MS });

    // The pin alone moves the shard: the map shows it on the target, marked pinned and in place.
    await page
      .locator(`#maps .cell[data-shard="${alice.shardId}"][data-host="${target}"][data-pinned]:not(.misplaced)`)
      .waitFor({ timeout: SEEN_WITHIN_MS });
    const locations = await http<ShardLocations>('GET', `${url1}/actor-ts/cluster/shards/${COUNTER}`);
    expect(locations.body.regions.find((region) => region.shards.includes(alice.shardId))?.address).toBe(target);
    expect((await increment(url1, 'alice')).node).toBe(target);
    // A pin with an expiry shows it (the page read a field the API never sent, so it never did: issue 39).
    const bob = await increment(url2, 'bob');
    const expiring = await http<{ placements: Array<{ expiresAt: string }> }>(
      'POST',
      `${url1}/actor-ts/cluster/shards/${COUNTER}/placements`,
      { shardId: bob.shardId, target: bob.node, ttlMs: 3_600_000 },
    );
    expect(expiring.status).toBe(202);
    const expiresAt = expiring.body.placements[0]!.expiresAt;
    // By the row's own Unpin button: a shard id as text also matches another row's shard or time (479 has 49).
    const bobRow = page.locator('#pins-table tbody tr', {
      has: page.locator(`[data-unpin="${COUNTER}/${bob.shardId}"]`),
    });
    await bobRow.waitFor({ timeout: SEEN_WITHIN_MS });
    expect(await page.locator('#pins-table thead').innerText()).toContain('expires');
    const shown = new Date(Date.parse(expiresAt)).toLocaleTimeString('en-US');
    expect(await bobRow.innerText()).toContain(shown);
    const removed = await http('DELETE', `${url1}/actor-ts/cluster/shards/${COUNTER}/placements/${bob.shardId}`);
    expect(removed.status).toBeLessThan(300);
    await bobRow.waitFor({ state: 'detached', timeout: SEEN_WITHIN_MS });
    await page.screenshot({ path: screenshotPath('console-real-cluster.png'), fullPage: true });

    // Unpinning clears the mark (the shard stays where it is until a rebalance moves it).
    await page.click(`[data-unpin="${COUNTER}/${alice.shardId}"]`);
    await page
      .locator(`#maps .cell[data-shard="${alice.shardId}"][data-host]:not([data-pinned])`)
      .waitFor({ timeout: SEEN_WITHIN_MS });
    await page.locator('#pins', { hasText: 'No pins.' }).waitFor({ timeout: SEEN_WITHIN_MS });
    expect(
      (await http<{ placements: unknown[] }>('GET', `${url2}/actor-ts/cluster/shards/${COUNTER}/placements`)).body
        .placements,
    ).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});
