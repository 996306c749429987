// The crash case of issue 23 on three real CLI nodes: 20 entities hosted on one node receive reliable sends at
// 50/s through a surviving node while their host is SIGKILLed; every send must be answered `processed`, none
// lost, and only sends unconfirmed at the kill may be applied twice (once by the dead host, once by the new
// one). The counts are printed as `[e2e figures]` lines.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { NodeProc, ProcessSet } from './harness.js';
import { ProcessingLog, tally, type SendRecord } from './processing-log.js';
import { SendLoad } from './send-load.js';
import { inBatches, watchRehoming } from './traffic.js';
import { sleep } from '../support/poll.js';

export const SENDS_PER_SECOND = 50;
export const ENTITIES = 20;
/**
 * The management API's connection cap for these nodes: each send waiting out the re-homing holds one HTTP
 * connection, up to 50/s times about 20 s of them (the CLI's default cap, 128, would refuse most).
 */
export const HTTP_MAX_CONNECTIONS = 4096;

export interface CrashCase {
  /** `host`: a plain member (the youngest); `coordinator`: the oldest node, which runs the coordinator. */
  readonly victim: 'host' | 'coordinator';
  /** `--down-after-ms`; undefined for the CLI's default. */
  readonly downAfterMs?: number;
  /**
   * SIGSTOP the host first and SIGKILL it only once its entities answer elsewhere: a host that goes silent
   * without refusing connections (a machine that lost power), whose death no probe can confirm, so the dark
   * window lasts the whole downing path. Without it the SIGKILLed process's port refuses at once on loopback.
   */
  readonly frozenFirst?: boolean;
  /**
   * `--entity-store` of every node (durable demo Counter): the test also reads every entity's value at the end,
   * which must count each send exactly once (a send the dead host processed but never committed was never
   * acknowledged, and is applied once by the new host).
   */
  readonly store?: string;
  /** With frozenFirst: SIGCONT instead of SIGKILL once the entities answer elsewhere (its late commits are fenced). */
  readonly thaw?: boolean;
}

export async function runCrashCase(procs: ProcessSet, crash: CrashCase): Promise<void> {
  const label = `${crash.victim}-${crash.downAfterMs ?? 'default'}${crash.frozenFirst === true ? '-frozen' : ''}${crash.store === undefined ? '' : '-durable'}`;
  const log = new ProcessingLog(join(procs.logDir, label));
  const nodes = await procs.startCluster(3, {
    ...(crash.downAfterMs === undefined ? {} : { downAfterMs: crash.downAfterMs }),
    httpMaxConnections: HTTP_MAX_CONNECTIONS,
    nodeArgs: log.nodeArgs,
    ...(crash.store === undefined ? {} : { argsOf: () => ['--entity-store', crash.store as string] }),
  });
  const victim = crash.victim === 'coordinator' ? nodes[0]! : nodes[2]!;
  const via = nodes[1]!;
  const survivors = new Set(nodes.filter((node) => node !== victim).map((node) => node.address));
  // Where each candidate lives (an ask creates it): the first 20 on the victim are the test's entities.
  const candidates = Array.from({ length: 150 }, (_, i) => `${label}-${i}`);
  const homes = await inBatches(candidates, 12, async (entityId) => (await via.increment(entityId)).body.node);
  const entities = candidates.filter((_, i) => homes[i] === victim.address).slice(0, ENTITIES);
  expect(entities.length).toBe(ENTITIES);

  const load = new SendLoad(entities, () => via, SENDS_PER_SECOND, label).start();
  await (async () => {
    while (load.resolved < SENDS_PER_SECOND) await sleep(50);
  })();
  const killAt = Date.now();
  victim.signal(crash.frozenFirst === true ? 'SIGSTOP' : 'SIGKILL');
  const rehomed = await watchRehoming(entities, [via], survivors, 60_000);
  // Thawed, the victim learns it was downed and stops; meanwhile what it had read is run and its commits refused.
  victim.signal(crash.thaw === true ? 'SIGCONT' : 'SIGKILL');
  if (crash.thaw === true) await Promise.race([victim.exited, sleep(15_000)]);
  victim.signal('SIGKILL');
  await victim.exited;
  const rehomedMs = Math.max(...rehomed.values()) - killAt;
  // One more second of sends to the new homes, then every call is waited for.
  await sleep(1_000);
  const sends = await load.stop();

  const processings = log.read();
  const result = tally(sends, processings);
  const victimPid = victim.pid;
  const twice = sends.filter((send) => processings.filter((p) => p.tag === send.tag).length > 1);
  console.log(
    `[e2e figures] reliable send, ${SENDS_PER_SECOND}/s to ${ENTITIES} entities through ${via.name}, ${crash.frozenFirst === true ? `SIGSTOP then ${crash.thaw === true ? 'SIGCONT' : 'SIGKILL'}` : 'SIGKILL'} of ` +
      `their host (${crash.victim === 'coordinator' ? 'the oldest node, the coordinator' : 'a plain member'}; down-after-ms ` +
      `${crash.downAfterMs ?? 'default'}): sent ${result.sent} (${sends.filter((s) => s.sentAt > killAt).length} after ` +
      `the kill), resolved ${result.resolved}, failed ${result.failed.length}, lost ${result.lost.length}, processed ` +
      `twice ${result.processedTwice}; every entity answered from a survivor ${rehomedMs} ms after the kill, the last ` +
      `send was processed ${result.lastProcessedAt - killAt} ms after it, the longest send took ` +
      `${Math.max(...sends.map((s) => (s.doneAt ?? Infinity) - s.sentAt))} ms`,
  );
  expect(result.failed).toEqual([]);
  expect(result.lost).toEqual([]);
  expect(result.twiceOnOneHost).toEqual([]);
  if (crash.store !== undefined)
    return checkExactlyOnce(via, entities, sends, twice.length, readFileSync(victim.logFile, 'utf8'));
  // Only a send the dead host applied without confirming it can be applied again, so it left before the kill.
  for (const send of twice) {
    expect(send.sentAt, send.tag).toBeLessThanOrEqual(killAt);
    expect(processings.find((p) => p.tag === send.tag)?.pid, send.tag).toBe(victimPid);
  }
}

/**
 * A durable run's state: each entity's value counts its first increment (the ask that placed it) and each of
 * its sends exactly once. Printed with how many sends the processing log shows run twice (the dead host ran
 * them without committing) and how many of the victim's commits were fenced after it thawed.
 */
async function checkExactlyOnce(
  via: NodeProc,
  entities: readonly string[],
  sends: readonly SendRecord[],
  ranTwice: number,
  victimLog: string,
): Promise<void> {
  const wrong: string[] = [];
  for (const entityId of entities) {
    const expected = 1 + sends.filter((send) => send.entityId === entityId).length;
    const { value } = (await via.counter(entityId)).body;
    if (value !== expected) wrong.push(`${entityId}: ${value}, expected ${expected}`);
  }
  const fenced = victimLog.split('durable shard fenced: a later host claimed it; its entities stop here').length - 1;
  console.log(
    `[e2e figures] durable: ${entities.length} entities hold every send exactly once (${wrong.length} wrong); ` +
      `${ranTwice} sends ran twice in the log without being applied twice; the victim logged ${fenced} fenced shards`,
  );
  expect(wrong).toEqual([]);
}
