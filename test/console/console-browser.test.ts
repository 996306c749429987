// The console in a real browser: Debian's Chromium, driven by playwright-core, against a real Fastify server
// with the console plugin and fake management routes (test/console/fake-api.ts). It checks the nodes, the shard
// map, pinning through the form (dry run, then the POST) and unpinning, the token prompt with --auth-reads, and
// leaves a screenshot in test-results/. Without a launchable Chromium it fails saying so.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { consolePlugin } from '../../src/management/console/plugin.js';
import { ROOT as root, closeBrowser, openConsole, screenshotPath } from './browser.js';
import { NODES, SHARDS, TYPE, bearer, fakeCluster, registerFakeApi, type FakeCluster } from './fake-api.js';
import { pinRecord } from './answers.js';

let assetsDir: string | undefined;
const servers: FastifyInstance[] = [];

/** Builds the page with build:console's own script, into a directory of this test's own. */
function buildPage(): string {
  const out = mkdtempSync(join(tmpdir(), 'console-page-'));
  execFileSync(process.execPath, [join(root, 'scripts', 'build-console.mjs'), out], { stdio: 'pipe' });
  return out;
}

function pageAssets(): string {
  assetsDir ??= buildPage();
  return assetsDir;
}

async function serve(cluster: FakeCluster, token?: string, later = false, memberRoutes = false): Promise<string> {
  const app = Fastify();
  servers.push(app);
  registerFakeApi(
    app,
    cluster,
    token === undefined ? {} : { readGuard: bearer(token), writeGuard: bearer(token) },
    later,
    memberRoutes,
  );
  await app.register(consolePlugin, { assetsDir: pageAssets() });
  return app.listen({ host: '127.0.0.1', port: 0 });
}

afterAll(async () => {
  await closeBrowser();
  await Promise.all(servers.map((app) => app.close()));
  if (assetsDir !== undefined) rmSync(assetsDir, { recursive: true, force: true });
});

/** Answers the confirmation a member action asks for: its reason and who asks. */
async function confirmMember(page: Page, reason: string, by = 'ann@laptop'): Promise<void> {
  await page.locator('#member-confirm').waitFor({ state: 'visible' });
  await page.fill('#member-reason', reason);
  await page.fill('#member-by', by);
  await page.click('#member-ok');
}

const chip = (page: Page, shard: number) =>
  page.locator(`#maps .cell[data-type="${TYPE}"][data-shard="${shard}"]`).first();
/** The map cells of TYPE's shards that a node hosts. */
const hosted = (page: Page) => page.locator(`#maps .cell[data-type="${TYPE}"][data-host]`);

describe('console in Chromium', () => {
  it('lists the nodes and the shard map, pins a shard through the form and unpins it', async () => {
    const cluster = fakeCluster();
    const base = await serve(cluster);
    const { page, errors, failed } = await openConsole(`${base}/?type=${TYPE}`);

    await page.locator('#nodes-table tbody tr').nth(2).waitFor();
    expect(await page.locator('#nodes-table tbody tr').count()).toBe(3);
    const nodesText = await page.locator('#nodes-table').innerText();
    for (const address of NODES) expect(nodesText).toContain(address);
    // The oldest Up member is marked as the coordinator.
    expect(
      await page.locator('#nodes-table tbody tr', { hasText: NODES[0] }).locator('.badge.coordinator').count(),
    ).toBe(1);
    expect(await hosted(page).count()).toBe(SHARDS);
    expect(await chip(page, 4).getAttribute('data-host')).toBe(NODES[1]);
    expect(await chip(page, 4).getAttribute('data-pinned')).toBeNull();

    // The page is live: a hand-off and a move made behind its back show up without a reload.
    cluster.handingOff.add(1);
    cluster.hosts.set(0, NODES[1]);
    await page.locator('#maps .cell.handoff[data-shard="1"][data-handoff]').waitFor();
    await page.locator(`#maps .cell[data-shard="0"][data-host="${NODES[1]}"]`).waitFor();
    cluster.handingOff.clear();
    await page.locator('#maps .cell[data-shard="1"]:not(.handoff)').waitFor();

    // Shard 4 lives on NODES[1]: pin it to NODES[2]. The dry run comes first; nothing is written until confirmed.
    await page.selectOption('#pin-type', TYPE);
    await page.fill('#pin-shard', '4');
    await page.fill('#pin-target', NODES[2]);
    await page.fill('#pin-reason', 'canary for the new build');
    await page.click('#pin-preview');
    await page.locator('#dry-run').waitFor({ state: 'visible' });
    // The server's dry run: this API has no reason field, so the page says so and judges the pin without it.
    await page.locator('#dry-run-lines', { hasText: 'does not take a reason' }).waitFor();
    const lines = await page.locator('#dry-run-lines').innerText();
    expect(lines).toContain(`Shard 4 of ${TYPE} is on ${NODES[1]}.`);
    expect(lines).toContain(`Shard 4 moves now from ${NODES[1]} to ${NODES[2]}.`);
    expect(cluster.writes).toEqual([]);
    expect(cluster.dryRuns.map((run) => run.body)).toEqual([{ shardId: 4, target: NODES[2] }]);
    expect(await page.locator('#pin-confirm').innerText()).toBe('Pin without the reason');
    expect(cluster.placements.size).toBe(0);
    await page.click('#pin-confirm');
    await page.locator(`#maps .cell[data-shard="4"][data-pinned]`).waitFor();
    const posts = cluster.writes.filter((write) => write.method === 'POST');
    expect(posts).toEqual([
      { method: 'POST', url: `/actor-ts/cluster/shards/${TYPE}/placements`, body: { shardId: 4, target: NODES[2] } },
    ]);
    expect(await page.locator('#action-result').innerText()).toContain('without the reason');
    expect(cluster.placements.get(4)?.target).toBe(NODES[2]);
    expect(await chip(page, 4).getAttribute('class')).toContain('misplaced');
    expect(await page.locator('#pins-table').innerText()).toContain(NODES[2]);
    expect(await page.locator('#dry-run').isVisible()).toBe(false);

    // Move now: the shard hands off to its pin's target and shows there, pinned and in place.
    await page.locator('#pins-table button', { hasText: 'Move now' }).click();
    await page.locator(`#maps .cell[data-shard="4"][data-host="${NODES[2]}"][data-pinned]:not(.misplaced)`).waitFor();
    expect(cluster.writes.at(-1)).toEqual({
      method: 'POST',
      url: `/actor-ts/cluster/shards/${TYPE}/rebalance`,
      body: { shardIds: [4] },
    });

    await page.click(`[data-unpin="${TYPE}/4"]`);
    await page.locator(`#maps .cell[data-shard="4"]:not([data-pinned])`).waitFor();
    expect(cluster.writes.at(-1)).toEqual({
      method: 'DELETE',
      url: `/actor-ts/cluster/shards/${TYPE}/placements/4`,
      body: undefined,
    });
    expect(cluster.placements.size).toBe(0);
    expect(await page.locator('#pins').innerText()).toContain('No pins.');
    expect(errors).toEqual([]);
    // The audit route is asked once (this API has none), the dry run with a reason is refused once.
    expect(failed).toEqual([`404 GET /actor-ts/audit`, `400 POST /actor-ts/cluster/shards/${TYPE}/placements`]);
    await page.close();
  }, 60_000);

  it('shows nothing without the token when reads need it, then everything with it', async () => {
    const cluster = fakeCluster();
    const base = await serve(cluster, 's3cret');
    const { page } = await openConsole(`${base}/`);

    await page.locator('#auth').waitFor({ state: 'visible' });
    expect(await page.locator('#nodes-table').count()).toBe(0);
    expect(await page.locator('#maps .cell').count()).toBe(0);

    await page.fill('#auth-token', 'wrong');
    await page.click('#auth-form button');
    await page.locator('#auth-message', { hasText: 'refused' }).waitFor();
    expect(await page.locator('#nodes-table').count()).toBe(0);

    await page.fill('#auth-token', 's3cret');
    await page.click('#auth-form button');
    await page.locator('#nodes-table tbody tr').nth(2).waitFor();
    expect(await page.locator('#auth').isVisible()).toBe(false);
    expect(await hosted(page).count()).toBe(SHARDS);
    await page.close();
  }, 60_000);

  it('shows the fields of a later API when present, sends the reason, and hides member actions the node lacks', async () => {
    const cluster = fakeCluster();
    const base = await serve(cluster, undefined, true);
    const { page, errors, failed } = await openConsole(`${base}/`);

    await page.locator('#nodes-table tbody tr').nth(2).waitFor();
    const nodes = await page.locator('#nodes-table').innerText();
    expect(nodes).toContain('zone=z1');
    expect(nodes).toContain('cordoned');

    await page.fill('#pin-shard', '4');
    await page.fill('#pin-target', NODES[1]);
    await page.fill('#pin-reason', 'keep it near its data');
    await page.click('#pin-preview');
    await page.locator('#dry-run-lines', { hasText: 'Nothing moves' }).waitFor();
    await page.click('#pin-confirm');
    await page.locator('#pins-table', { hasText: 'keep it near its data' }).waitFor();
    expect(cluster.writes.filter((write) => write.method === 'POST')).toEqual([
      {
        method: 'POST',
        url: `/actor-ts/cluster/shards/${TYPE}/placements`,
        body: { shardId: 4, target: NODES[1], reason: 'keep it near its data' },
      },
    ]);
    const headers = await page.locator('#pins-table thead').innerText();
    for (const column of ['mode', 'expires', 'reason', 'by', 'where now']) expect(headers).toContain(column);
    expect(await page.locator('#pins-table tbody').innerText()).toContain('console');

    // This node has no cordon route: the first use answers 404 and the controls go away.
    await page.locator('#nodes-table button', { hasText: 'Cordon' }).first().click();
    await confirmMember(page, 'maintenance');
    await page.locator('#action-result', { hasText: 'no cordon route' }).waitFor();
    await page.locator('#nodes-table button').first().waitFor({ state: 'detached' });
    expect(failed).toEqual([`404 POST /actor-ts/cluster/members/${encodeURIComponent(NODES[0])}/cordon`]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('cordons, uncordons and drains a member through the contract routes (uncordon is DELETE .../cordon)', async () => {
    const cluster = fakeCluster();
    const base = await serve(cluster, undefined, true, true);
    const { page, errors, failed } = await openConsole(`${base}/`);
    const row = (address: string) => page.locator('#nodes-table tbody tr', { hasText: address });
    const member = `/actor-ts/cluster/members/${encodeURIComponent(NODES[1])}`;

    await page.locator('#nodes-table tbody tr').nth(2).waitFor();
    await row(NODES[1]).locator('button', { hasText: 'Cordon' }).click();
    await confirmMember(page, 'disk check');
    await row(NODES[1]).locator('button', { hasText: 'Uncordon' }).waitFor();
    expect(await row(NODES[1]).innerText()).toContain('cordoned');
    await row(NODES[1]).locator('button', { hasText: 'Uncordon' }).click();
    await confirmMember(page, 'disk fine');
    await row(NODES[1]).locator('button', { hasText: 'Cordon' }).waitFor();
    // Drain asks first: nothing is sent without a reason, Cancel sends nothing.
    await row(NODES[1]).locator('button', { hasText: 'Drain' }).click();
    await page.locator('#member-confirm-title', { hasText: `Drain ${NODES[1]}?` }).waitFor();
    await page.fill('#member-reason', '');
    await page.click('#member-ok');
    await page.locator('#action-result', { hasText: 'needs a reason' }).waitFor();
    await page.click('#member-cancel');
    expect(cluster.writes).toHaveLength(2);
    await row(NODES[1]).locator('button', { hasText: 'Drain' }).click();
    // Who asks is remembered from the last time.
    expect(await page.inputValue('#member-by')).toBe('ann@laptop');
    await page.fill('#member-reason', 'kernel upgrade');
    await page.click('#member-ok');
    await row(NODES[1]).locator('button', { hasText: 'Uncordon' }).waitFor();
    expect([...cluster.hosts.values()]).not.toContain(NODES[1]);
    expect(cluster.writes.map((write) => [`${write.method} ${decodeURIComponent(write.url)}`, write.body])).toEqual([
      [`POST ${decodeURIComponent(member)}/cordon`, { by: 'ann@laptop', reason: 'disk check' }],
      [`DELETE ${decodeURIComponent(member)}/cordon?by=ann@laptop&reason=disk+fine`, undefined],
      [`POST ${decodeURIComponent(member)}/drain`, { by: 'ann@laptop', reason: 'kernel upgrade' }],
    ]);
    // The audit panel shows the drain with its author and reason; the hand-offs it caused are recorded.
    await page.locator('#audit-table', { hasText: 'kernel upgrade' }).waitFor();
    expect(await page.locator('#audit-table').innerText()).toContain('ann@laptop');
    await page.locator('#moves-table tbody tr').first().waitFor();
    expect(await page.locator('#moves-table').innerText()).toContain(NODES[1]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("keeps an action's error on screen across refreshes until dismissed or the next action (issue 39)", async () => {
    const cluster = fakeCluster();
    cluster.placements.set(
      5,
      pinRecord({
        shardId: 5,
        target: NODES[2],
        writer: NODES[0],
        hlc: { wallMs: 1, counter: 0, node: NODES[0] },
      }),
    );
    const base = await serve(cluster);
    const { page } = await openConsole(`${base}/?type=${TYPE}`);
    const unpin = page.locator(`[data-unpin="${TYPE}/5"]`);
    const banner = page.locator('#error');
    const refusal = { status: 503, code: 'no_majority', message: 'this node reaches no majority' };

    cluster.refuseNextUnpin = refusal;
    await unpin.click();
    await page.locator('#error-text', { hasText: 'no_majority: this node reaches no majority' }).waitFor();
    // Two refreshes that work come and go (each rewrites "updated ..."): the banner stays.
    for (let i = 0; i < 2; i++) {
      const before = await page.locator('#refreshed').innerText();
      await page.locator('#refreshed').filter({ hasNotText: before }).waitFor();
    }
    expect(await banner.isVisible()).toBe(true);
    await page.click('#error-dismiss');
    expect(await banner.isVisible()).toBe(false);

    // The next action clears it (and says its own outcome): this unpin works.
    cluster.refuseNextUnpin = refusal;
    await unpin.click();
    await page.locator('#error-text', { hasText: 'no_majority' }).waitFor();
    await unpin.click();
    await unpin.waitFor({ state: 'detached' });
    expect(await banner.isVisible()).toBe(false);
    expect(cluster.placements.has(5)).toBe(false);
    await page.close();
  }, 60_000);

  it('previews with the server (and the token), tells waiting shards from unallocated ones, explains a shard, fits 1280 px', async () => {
    const cluster = fakeCluster();
    // Shard 7: a require pin no member satisfies and no home: it waits. Shard 11: nobody asked for it yet.
    cluster.hosts.delete(7);
    cluster.hosts.delete(11);
    cluster.placements.set(
      7,
      pinRecord({
        shardId: 7,
        target: 'zone=mars',
        mode: 'require',
        reason: 'tenant 17 stays on mars',
        writer: NODES[0],
        hlc: { wallMs: Date.now(), counter: 0, node: NODES[0] },
      }),
    );
    cluster.placements.set(
      3,
      pinRecord({
        shardId: 3,
        target: NODES[0],
        reason: 'hot tenant, keep it near its data store',
        writer: NODES[0],
        hlc: { wallMs: Date.now(), counter: 0, node: NODES[0] },
      }),
    );
    cluster.audit.push({
      at: new Date().toISOString(),
      action: 'pin',
      typeName: TYPE,
      shardIds: [3],
      target: NODES[0],
      by: 'ann@laptop',
      reason: 'hot tenant',
      hlc: null,
    });
    const base = await serve(cluster, 's3cret', true, true);
    const { page, errors } = await openConsole(`${base}/`, { width: 1280, height: 900 });
    await page.fill('#auth-token', 's3cret');
    await page.click('#auth-form button');
    await page.locator('#nodes-table tbody tr').nth(2).waitFor();

    expect(await chip(page, 7).getAttribute('class')).toContain('waiting');
    expect(await chip(page, 11).getAttribute('class')).not.toContain('waiting');
    expect(await page.locator('#pins-table tbody tr', { hasText: 'zone=mars' }).innerText()).toContain(
      'waiting: no home',
    );
    expect(await page.locator('#audit-table').innerText()).toContain('hot tenant');
    // A shard moving behind the page's back is recorded as a recent hand-off.
    cluster.hosts.set(0, NODES[1]);
    await page.locator('#moves-table tbody tr', { hasText: NODES[1] }).waitFor();

    // Preview is the server's dry run, sent with the token.
    await page.fill('#pin-shard', '4');
    await page.fill('#pin-target', NODES[2]);
    await page.fill('#pin-reason', 'canary');
    await page.click('#pin-preview');
    await page.locator('#dry-run-lines', { hasText: `Shard 4 moves now from ${NODES[1]} to ${NODES[2]}.` }).waitFor();
    expect(cluster.dryRuns.at(-1)).toEqual({
      body: { shardId: 4, target: NODES[2], reason: 'canary' },
      authorization: 'Bearer s3cret',
    });
    // A port typo: the server refuses it; the page says so and pinning needs an explicit "anyway".
    await page.fill('#pin-target', 'app@127.0.0.1:25529');
    await page.click('#pin-preview');
    await page.locator('#dry-run-lines', { hasText: 'no current member matches target app@127.0.0.1:25529' }).waitFor();
    expect(await page.locator('#pin-confirm').innerText()).toBe('Pin anyway (a node that has not joined yet)');
    await page.click('#pin-cancel');
    expect(cluster.writes).toEqual([]);

    // A click on a shard explains it (the explain route).
    await chip(page, 3).click();
    await page.locator('#explain-message', { hasText: `shard 3 is on ${NODES[0]}: pinned to ${NODES[0]}` }).waitFor();

    // At 1280 px every pin-row and node-row button is inside the viewport and inside its panel.
    for (const [table, panel] of [
      ['#pins-table', '#pins-section'],
      ['#nodes-table', '#nodes-section'],
    ] as const) {
      const section = await page.locator(panel).boundingBox();
      const buttons = await page.locator(`${table} button`).all();
      expect(buttons.length).toBeGreaterThan(0);
      for (const handle of buttons) {
        const box = await handle.boundingBox();
        expect(box).not.toBeNull();
        expect((box?.x ?? 0) + (box?.width ?? 0), table).toBeLessThanOrEqual(
          Math.min(1280, (section?.x ?? 0) + (section?.width ?? 0)),
        );
      }
    }
    await page.screenshot({ path: screenshotPath('console.png'), fullPage: true });
    // The README's picture (docs/console.png) is taken from a real local cluster: scripts/console-screenshot.mjs.
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
