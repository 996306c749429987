// Scenario 15, passivation (issue 37): one node's shards of one type in this process (100 shards sharing one
// PassivationTracker, as a region's do; a manual scheduler, no network). Memory: distinct entities (a counter
// each) touched at full speed with maxActiveEntities 10,000, heap growth from start to end, beside the same
// run without passivation (today's ~1.08 KB per entity, never released); and with idleMs 1,000, heap after
// 100,000 entities and 4 s of quiet (scheduler time). Cost: asks per second over 20,000 ids round-robin with
// the limit at 10,000 (every ask past the first round evicts one and starts one) vs passivation off.
import { NodeAddress } from '../../src/cluster/address.js';
import { silentLogger } from '../../src/logging.js';
import type { EntityBehavior, EntityRef } from '../../src/sharding/core/entity-api.js';
import type { PassivationSettings } from '../../src/sharding/core/passivation.js';
import { PassivationTracker } from '../../src/sharding/region/passivation.js';
import { Shard } from '../../src/sharding/region/shard.js';
import { ManualScheduler } from '../../test/support/schedulers.js';
import { heapUsed } from '../lib/heap.js';
import { startDeliveryNodes, type DeliveryNode } from '../lib/delivery-cluster.js';
import { IDS } from './s10-delivery.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { fmt, fmtRatio, ratio } from '../lib/stats.js';

const SHARDS = 100;
const MB = 1024 * 1024;

const counter: EntityBehavior = () => {
  let count = 0;
  return { receive: () => ++count };
};

interface Node {
  readonly shards: Shard[];
  readonly scheduler: ManualScheduler;
}

function node(settings: PassivationSettings): Node {
  const scheduler = new ManualScheduler();
  const tracker = new PassivationTracker(settings, scheduler);
  const entityRef = (): EntityRef => {
    throw new Error('no routing in this bench');
  };
  const address = NodeAddress.parse('bench@127.0.0.1:1');
  const shards = Array.from(
    { length: SHARDS },
    (_, id) => new Shard('Bench', id, counter, address, silentLogger(), { entityRef, scheduler, passivation: tracker }),
  );
  return { shards, scheduler };
}

/** Asks `count` messages, `batch` at a time, to ids `id(i)`; resolves once all were answered. */
async function askAll(target: Node, count: number, id: (i: number) => number, batch = 1000): Promise<void> {
  for (let start = 0; start < count; start += batch) {
    const answers: Array<Promise<unknown>> = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const entityId = id(i);
      const shard = target.shards[entityId % SHARDS] as Shard;
      answers.push(new Promise((resolve) => shard.deliver(`e${entityId}`, 'n', resolve)));
    }
    await Promise.all(answers);
  }
}

function activeCount(target: Node): number {
  return target.shards.reduce((sum, shard) => sum + shard.entityCount, 0);
}

async function heapGrowth(entities: number, settings: PassivationSettings): Promise<{ mb: number; active: number }> {
  const before = heapUsed();
  const target = node(settings);
  await askAll(target, entities, (i) => i);
  const mb = (heapUsed() - before) / MB;
  return { mb, active: activeCount(target) };
}

async function idleReturn(entities: number): Promise<{ peakMb: number; afterMb: number; active: number }> {
  const before = heapUsed();
  const target = node({ idleMs: 1000 });
  await askAll(target, entities, (i) => i);
  const peakMb = (heapUsed() - before) / MB;
  for (let ms = 0; ms < 4000; ms += 500) {
    target.scheduler.advance(500);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { peakMb, afterMb: (heapUsed() - before) / MB, active: activeCount(target) };
}

async function asksPerSecond(settings: PassivationSettings, asks: number): Promise<number> {
  const target = node(settings);
  const ids = 20_000;
  await askAll(target, ids, (i) => i); // warm: every id once
  const start = process.hrtime.bigint();
  await askAll(target, asks, (i) => i % ids);
  return asks / (Number(process.hrtime.bigint() - start) / 1e9);
}

export async function passivation(options: BenchOptions): Promise<ScenarioResult> {
  const million = options.quick ? 200_000 : 1_000_000;
  const offCount = options.quick ? 50_000 : 200_000;
  const limited = await heapGrowth(million, { maxActiveEntities: 10_000 });
  const unlimited = await heapGrowth(offCount, {});
  const idle = await idleReturn(100_000);
  const asks = options.quick ? 200_000 : 1_000_000;
  let on = 0;
  let off = 0;
  // Alternating rounds, best of each: the first pays the JIT's warm-up.
  for (let round = 0; round < 3; round++) {
    off = Math.max(off, await asksPerSecond({}, asks));
    on = Math.max(on, await asksPerSecond({ maxActiveEntities: 10_000 }, asks));
  }
  const validation = await validationCost(options.quick ? 5_000 : 20_000);
  return report({ million, limited, offCount, unlimited, idle, on, off, asks, validation });
}

/**
 * Asks per second from one node process to entities on another: a type whose messages its host checks against a
 * small zod schema (`Typed`) against the same entities unchecked (`Remote`), best of 3 alternating rounds.
 */
async function validationCost(asks: number): Promise<{ checked: number; unchecked: number }> {
  const nodes = await startDeliveryNodes(2);
  const [a, b] = nodes as [DeliveryNode, DeliveryNode];
  try {
    await Promise.all(nodes.map((n) => n.call('setHomes', { Remote: b.address, Typed: b.address })));
    const rate = async (type: string): Promise<number> => {
      const started = performance.now();
      await a.call('windowedAsk', type, asks, IDS, 64);
      return asks / ((performance.now() - started) / 1000);
    };
    for (const type of ['Remote', 'Typed']) await a.call('windowedAsk', type, 1_000, IDS, 64); // warm-up
    let checked = 0;
    let unchecked = 0;
    for (let round = 0; round < 3; round++) {
      unchecked = Math.max(unchecked, await rate('Remote'));
      checked = Math.max(checked, await rate('Typed'));
    }
    return { checked, unchecked };
  } finally {
    for (const node of nodes) node.kill();
  }
}

interface Figures {
  readonly million: number;
  readonly limited: { mb: number; active: number };
  readonly offCount: number;
  readonly unlimited: { mb: number; active: number };
  readonly idle: { peakMb: number; afterMb: number; active: number };
  readonly on: number;
  readonly off: number;
  readonly asks: number;
  readonly validation: { readonly checked: number; readonly unchecked: number };
}

function report(f: Figures): ScenarioResult {
  const perEntityKb = (f.unlimited.mb * 1024) / f.offCount;
  const rows = [
    [`${f.million} entities, maxActiveEntities 10,000`, `${fmt(f.limited.mb)} MB growth`, `${f.limited.active} active`],
    [
      `${f.offCount} entities, no passivation`,
      `${fmt(f.unlimited.mb)} MB (${fmt(perEntityKb)} KB/entity)`,
      `${f.unlimited.active} active`,
    ],
    ['100,000 entities, idleMs 1,000: at peak', `${fmt(f.idle.peakMb)} MB`, ''],
    ['  after 4 s quiet', `${fmt(f.idle.afterMb)} MB`, `${f.idle.active} active`],
    [`asks/s, limit 10,000 over 20,000 ids (churn)`, fmt(f.on), fmtRatio(ratio(f.on, f.off))],
    ['asks/s, passivation off', fmt(f.off), '1x'],
    [
      'asks/s across 2 processes, messages checked by a small zod schema',
      fmt(f.validation.checked),
      fmtRatio(ratio(f.validation.checked, f.validation.unchecked)),
    ],
    ['asks/s across 2 processes, unchecked', fmt(f.validation.unchecked), '1x'],
  ];
  return {
    id: '15',
    title: 'Passivation',
    tables: [
      {
        title: `Scenario 15: passivation (${SHARDS} shards of one type, in one process)`,
        headers: ['run', 'figure', 'note'],
        rows,
        note:
          'Heap after a full GC, from before the node was made. Goals (issue 37): < 60 MB growth at 1M with the ' +
          'limit; within 15 MB of start after idle passivation; churning asks >= 0.8x of passivation off; checked ' +
          'asks >= 0.9x of unchecked.',
      },
    ],
    data: f,
    headlines: [
      `S15: ${f.million} entities with maxActiveEntities 10,000: heap +${fmt(f.limited.mb)} MB; without passivation ${fmt(perEntityKb)} KB per entity`,
      `S15: idleMs 1,000 after 100,000 entities and 4 s quiet: heap ${fmt(f.idle.afterMb)} MB above start`,
      `S15: churning asks at the limit ${fmtRatio(ratio(f.on, f.off))} of passivation off`,
      `S15: asks checked by a small schema on their host ${fmtRatio(ratio(f.validation.checked, f.validation.unchecked))} of unchecked, across processes (goal >= 0.9x)`,
    ],
    panels: [],
  };
}
