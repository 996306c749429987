// The console page, the CLI's client and the routes read one declaration of the API's shapes (api-shapes.ts), so
// the page cannot read a field the API does not send (it once read `expiry` while the API sent `expiresAt`, and no
// pin's expiry was ever shown, issue 39). The compiler holds the page and the routes to the shapes; this test holds
// a real node's answers to the schemas, both ways: every declared field as declared, and no undeclared field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as shapes from '../../src/management/api-shapes.js';
import type { PinRecord } from '../../src/management/console/page/model.js';
import { checkedAnswer } from '../support/api-answers.js';
import { healthAnswer } from './answers.js';
import type { RunningNode } from '../../src/node/node.js';
import { useTestCluster } from '../support/test-cluster.js';
import { API, COUNTER, increment } from '../management/node-fixture.js';

/** Compile-time: the page's pin type is the API's (a page-side copy would make this fail to compile). */
const samePin: PinRecord extends shapes.PinRecord ? (shapes.PinRecord extends PinRecord ? true : false) : false = true;

describe("the API's answers match their one declaration", () => {
  const cluster = useTestCluster(2);
  let a: RunningNode;
  let b: RunningNode;
  beforeAll(() => ([a, b] = cluster.nodes as [RunningNode, RunningNode]));
  afterAll(async () => {
    await a?.http.inject({
      method: 'DELETE',
      url: `${API}/cluster/members/${encodeURIComponent(b.address.toString())}/cordon`,
    });
  });

  const send = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => {
    const response = await a.http.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
    return { status: response.statusCode, body: response.body === '' ? undefined : (response.json() as unknown) };
  };

  it('reads: health, members, shard locations, placements, explain', async () => {
    expect(samePin).toBe(true);
    const used = await increment(a, 'shape-check');
    const health = checkedAnswer(shapes.HealthAnswer, (await send('GET', `${API}/health`)).body);
    expect(health.entityTypes?.map((type) => type.typeName)).toContain('Counter');
    const members = checkedAnswer(shapes.MembersAnswer, (await send('GET', `${API}/cluster/members`)).body);
    expect(members.members).toHaveLength(2);
    const locations = checkedAnswer(shapes.ShardLocationsAnswer, (await send('GET', COUNTER)).body);
    expect(locations.regions.flatMap((region) => region.shards)).toContain(used.shardId);
    const explained = checkedAnswer(
      shapes.ExplainAnswer,
      (await send('GET', `${COUNTER}/explain/${used.shardId}`)).body,
    );
    expect(explained.home).toBe(used.node);
    checkedAnswer(shapes.PlacementsAnswer, (await send('GET', `${COUNTER}/placements?includeExpired=true`)).body);
  });

  it('writes and their dry runs: pin, rebalance, cordon, drain, audit, and an error', async () => {
    const target = b.address.toString();
    const pin = { shardId: 7, target, ttlMs: 60_000, reason: 'shape check', by: 'tester' };
    const dry = await send('POST', `${COUNTER}/placements?dryRun=true`, pin);
    expect(dry.status).toBe(200);
    checkedAnswer(shapes.PlacementsDryRunAnswer, dry.body);
    const written = await send('POST', `${COUNTER}/placements`, pin);
    expect(written.status).toBe(202);
    expect(checkedAnswer(shapes.PinsWritten, written.body).placements[0]?.expiresAt).toMatch(/Z$/);
    const used = await increment(a, 'shape-check');
    checkedAnswer(
      shapes.RebalanceDryRun,
      (await send('POST', `${COUNTER}/rebalance?dryRun=true`, { shardIds: [used.shardId] })).body,
    );
    const rebalanced = await send('POST', `${COUNTER}/rebalance`, { shardIds: [used.shardId] });
    expect(rebalanced.status).toBe(202);
    checkedAnswer(shapes.RebalanceAnswer, rebalanced.body);
    const cordoned = await send('POST', `${API}/cluster/members/${encodeURIComponent(target)}/cordon`, {
      by: 'tester',
    });
    expect(cordoned.status).toBe(202);
    checkedAnswer(shapes.CordonAnswer, cordoned.body);
    const drained = await send('POST', `${API}/cluster/members/${encodeURIComponent(target)}/drain`, { by: 'tester' });
    expect(drained.status).toBe(202);
    checkedAnswer(shapes.DrainAnswer, drained.body);
    const audit = checkedAnswer(shapes.AuditAnswer, (await send('GET', `${API}/audit`)).body);
    expect(audit.entries.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['pin', 'rebalance', 'cordon', 'drain']),
    );
    const refused = await send('POST', `${COUNTER}/placements`, { shardId: 7 });
    expect(refused.status).toBe(400);
    checkedAnswer(shapes.ErrorAnswer, refused.body);
  });

  it('catches a drift: an undeclared field, a missing one, a wrong type', () => {
    const health = healthAnswer({});
    expect(() => checkedAnswer(shapes.HealthAnswer, { ...health, coordinator: 'x' })).toThrow(/does not declare/);
    const { reasons: _reasons, ...withoutReasons } = health;
    expect(() => checkedAnswer(shapes.HealthAnswer, withoutReasons)).toThrow(/reasons/);
    expect(() => checkedAnswer(shapes.HealthAnswer, { ...health, pid: 'one' })).toThrow(/pid/);
  });
});
