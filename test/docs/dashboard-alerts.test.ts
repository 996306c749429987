// Issue 25: the Grafana dashboard and the Prometheus alert rules shipped in docs/ are checked, not just
// written: the rules (and every dashboard query, as recording rules) pass `promtool check rules` (Debian's
// prometheus package; .ci/run installs it), the rules' unit tests pass `promtool test rules`, and every
// metric they name exists in a live scrape of a node's GET /metrics.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { startTestNode } from '../management/node-fixture.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RULES = join(ROOT, 'docs', 'prometheus-alerts.yml');
const RULE_TESTS = join(ROOT, 'docs', 'prometheus-alerts.test.yml');
const DASHBOARD = join(ROOT, 'docs', 'grafana-dashboard.json');
const work = mkdtempSync(join(tmpdir(), 'dashboard-alerts-'));
let node: RunningNode | undefined;
afterAll(async () => {
  await node?.stop();
  rmSync(work, { recursive: true, force: true });
});

interface Dashboard {
  panels: Array<{ id: number; title: string; gridPos: { x: number; w: number }; targets: Array<{ expr: string }> }>;
}

const dashboard = (): Dashboard => JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
const dashboardExprs = (): string[] =>
  dashboard().panels.flatMap((panel) => panel.targets.map((target) => target.expr));
const ruleExprs = (): string[] =>
  [...readFileSync(RULES, 'utf8').matchAll(/^\s+expr: (.+)$/gm)].map((match) => match[1] as string);

/** Runs promtool (failing, never skipping, when it is not installed) and returns its output. */
function promtool(...args: string[]): string {
  const path = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((candidate) => existsSync(candidate));
  if (path === undefined)
    throw new Error('promtool is not installed: apt-get install -y prometheus (npm test does as root)');
  try {
    return execFileSync(path, args, { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Metric names a PromQL expression reads (label names and functions are not prefixed actor_ts_). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\bactor_ts_[a-z0-9_]+/g)].map((match) => match[0]);
}

describe('docs/prometheus-alerts.yml', () => {
  it('passes promtool check rules, and its unit tests pass promtool test rules', () => {
    expect(promtool('check', 'rules', RULES)).toMatch(/SUCCESS: 9 rules found/);
    expect(promtool('test', 'rules', RULE_TESTS)).toContain('SUCCESS');
  });
});

describe('docs/grafana-dashboard.json', () => {
  it('is a dashboard whose panels have unique ids, fit the 24-column grid, and whose every query is valid PromQL', () => {
    const { panels } = dashboard();
    expect(panels.length).toBeGreaterThanOrEqual(15);
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length);
    for (const panel of panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
    }
    // Every query as a recording rule: promtool parses each expression the way Prometheus will.
    const rules = dashboardExprs()
      .map((expr, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(expr)}`)
      .join('\n');
    const file = join(work, 'dashboard-queries.yml');
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules}\n`);
    expect(promtool('check', 'rules', file)).toContain(`SUCCESS: ${dashboardExprs().length} rules found`);
  });
});

describe('the metrics the dashboard and the alerts name', () => {
  it('all exist in a live scrape of a node with durable storage, before anything happened', async () => {
    node = await startTestNode({ dataDir: join(work, 'data') });
    const text = (await node.http.inject({ method: 'GET', url: '/metrics' })).body;
    const scraped = new Set([...text.matchAll(/^([a-z_:][a-z0-9_:]*)(?:\{| )/gm)].map((match) => match[1] as string));
    const named = new Set([...dashboardExprs(), ...ruleExprs()].flatMap(metricNames));
    expect(named.size).toBeGreaterThanOrEqual(18);
    // A certificate's expiry exists only on a node with TLS (test/e2e/cluster-tls.test.ts scrapes it there).
    const withTlsOnly = new Set(['actor_ts_tls_certificate_expiry_days']);
    const missing = [...named].filter((name) => !scraped.has(name) && !withTlsOnly.has(name)).sort();
    expect(missing).toEqual([]);
    // And what they divide by type, code or status is there at 0 already (no series appears later).
    expect(text).toMatch(/^actor_ts_handoffs_total\{type="Counter"\} 0$/m);
    expect(text).toMatch(/^actor_ts_shards_waiting\{type="Counter"\} 0$/m);
    expect(text).toMatch(/^actor_ts_placement_writes_refused_total\{code="storage_unavailable"\} 0$/m);
  });
});
