// Issue 23, multi-process: three node processes on loopback; 20 entities hosted on one node receive reliable
// increments (`POST /counters/:id/increment?reliable=true`, EntityRef.send) through the oldest node while
// their host is SIGKILLed. Every send answered `processed` after the kill was applied on the new host (at
// least once); none failed; the figures are printed. And a graceful leave (SIGTERM) of the oldest node while it
// hosts 20 entities: their counts move with them.
import { describe, expect, it } from 'vitest';
import { useProcessSet, waitFor, type CounterValue, type NodeProc } from './harness.js';
import { inBatches } from './traffic.js';

const DOWN_AFTER_MS = 3000;
const CANDIDATES = Array.from({ length: 150 }, (_, i) => `rs-${i}`);

const procs = useProcessSet();

interface SendRecord {
  readonly entityId: string;
  readonly sentAt: number;
  status?: number;
  error?: string;
}

function reliableIncrement(via: NodeProc, entityId: string): Promise<{ status: number; error?: string }> {
  return via
    .post<{ error?: string; message?: string }>(
      `/counters/${encodeURIComponent(entityId)}/increment?reliable=true`,
      undefined,
      30_000,
    )
    .then(
      (r) => (r.status === 200 ? { status: 200 } : { status: r.status, error: `${r.body.error}: ${r.body.message}` }),
      (error: unknown) => ({ status: 0, error: String(error) }),
    );
}

describe('reliable send across a crash, state across a leave (issue 23)', () => {
  it('SIGKILL of the host of 20 entities: every send answered after the kill is applied, none fails', async () => {
    const nodes = await procs.startCluster(3, { downAfterMs: DOWN_AFTER_MS });
    const via = nodes[0]!;
    const victim = nodes[2]!;
    // Where each candidate lives: the first 20 on the victim are the test's entities.
    const homes = await inBatches(CANDIDATES, 12, async (entityId) => (await via.increment(entityId)).body.node);
    const entities = CANDIDATES.filter((_, i) => homes[i] === victim.address).slice(0, 20);
    expect(entities.length).toBe(20);

    const records: SendRecord[] = [];
    const inFlight: Array<Promise<void>> = [];
    let running = true;
    const pump = (async () => {
      for (let round = 0; running; round++) {
        const entityId = entities[round % entities.length]!;
        const record: SendRecord = { entityId, sentAt: Date.now() };
        records.push(record);
        inFlight.push(
          reliableIncrement(via, entityId).then((outcome) => {
            record.status = outcome.status;
            if (outcome.error !== undefined) record.error = outcome.error;
          }),
        );
        // 5 sends/s: those waiting out the re-homing hold one HTTP connection each (the server takes 128).
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    await waitFor('sends answered', () => records.filter((r) => r.status === 200).length >= 10, 15_000, 50);
    const killAt = Date.now();
    victim.signal('SIGKILL');
    await victim.exited;
    // Until every entity answers from a survivor, then a little longer.
    await waitFor(
      'entities re-homed',
      async () => {
        const answers = await Promise.all(entities.map((id) => via.counter(id, 3000)));
        return answers.every((a) => a.status === 200 && (a.body as CounterValue).node !== victim.address)
          ? true
          : undefined;
      },
      60_000,
      250,
    );
    const rehomedMs = Date.now() - killAt;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    running = false;
    await pump;
    await Promise.all(inFlight);

    const afterKill = records.filter((r) => r.sentAt > killAt);
    const failed = records.filter((r) => r.status !== 200);
    let applied = 0;
    for (const entityId of entities) {
      const answer = await via.counter(entityId);
      expect(answer.status).toBe(200);
      const value = (answer.body as CounterValue).value;
      applied += value;
      // The dead host's state is gone; everything sent after the kill can only have been applied on the new one.
      const resolvedAfter = afterKill.filter((r) => r.entityId === entityId && r.status === 200).length;
      const issued = records.filter((r) => r.entityId === entityId).length;
      expect(value, `${entityId}: ${resolvedAfter} sends answered after the kill`).toBeGreaterThanOrEqual(
        resolvedAfter,
      );
      expect(value).toBeLessThanOrEqual(issued);
    }
    console.log(
      `[e2e figures] reliable send, SIGKILL of the host of 20 entities (down-after-ms ${DOWN_AFTER_MS}): ${records.length} sends, ` +
        `${afterKill.length} after the kill, ${failed.length} failed; re-homed after ${rehomedMs} ms; ` +
        `the new incarnations hold ${applied} increments for ${afterKill.filter((r) => r.status === 200).length} answered after the kill`,
    );
    expect(failed.map((r) => `${r.entityId} +${r.sentAt - killAt} ms: ${r.status} ${r.error ?? ''}`)).toEqual([]);
  }, 150_000);

  it('SIGTERM of the oldest node while it hosts 20 entities: their values move with them', async () => {
    const nodes = await procs.startCluster(3, { downAfterMs: DOWN_AFTER_MS });
    const leaver = nodes[0]!;
    const via = nodes[1]!;
    const homes = await inBatches(CANDIDATES, 12, async (entityId) => (await via.increment(entityId)).body.node);
    const entities = CANDIDATES.filter((_, i) => homes[i] === leaver.address).slice(0, 20);
    expect(entities.length).toBe(20);
    // Each at 3 (one increment above, two here).
    for (let round = 0; round < 2; round++) await inBatches(entities, 10, (entityId) => via.increment(entityId));
    const termAt = Date.now();
    leaver.signal('SIGTERM');
    await leaver.exited;
    const exitMs = Date.now() - termAt;
    const values = await inBatches(entities, 10, async (entityId) => (await via.increment(entityId, 10_000)).body);
    console.log(
      `[e2e figures] SIGTERM of the oldest node hosting 20 entities: exit after ${exitMs} ms; values after: ${[...new Set(values.map((v) => v.value))].join(',')}`,
    );
    for (const value of values) {
      expect(value.node).not.toBe(leaver.address);
      expect(value.value, `${value.entityId} kept its count`).toBe(4);
    }
  }, 150_000);
});
