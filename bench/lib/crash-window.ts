// S10's crash case on 3 real CLI node processes (issue 23): 20 Counter entities hosted on one node receive
// reliable increments (`POST ...increment?reliable=true`, EntityRef.send behind it) at 50/s through a surviving
// node while that host is killed -9; 20 more entities on the same host receive plain increments (ask, at most
// once) at the same rate, the baseline. Counts what was never processed and when the last message sent into
// the dark window was, and reads the survivors' redelivery counters.
import { Agent, request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import { http } from '../../test/support/http.js';
import { entityOn, type VictimKind } from './real-failover.js';
import { byAge, type ClusterNode, type RealCluster } from './real-cluster.js';

export interface Outcome {
  /** ms from the kill (negative: before it). */
  readonly issuedMs: number;
  readonly settledMs: number;
  readonly ok: boolean;
  /** HTTP status and, when not 200, the error code the node answered (or `network`). */
  readonly status: number;
  readonly error?: string;
}

export interface CrashFigures {
  readonly victim: VictimKind;
  readonly sends: readonly Outcome[];
  readonly asks: readonly Outcome[];
  /** Sum over the survivors of actor_ts_messages_redelivered_total / _deduplicated_total after the run. */
  readonly redelivered: number;
  readonly deduplicated: number;
}

const INTERVAL_MS = 20;
const MAX_SOCKETS = 100;

/**
 * A keep-alive client of at most MAX_SOCKETS connections that drops an idle one after 2 s, before the node's
 * keepAliveTimeoutMs (5 s) closes it: otherwise a request written on a connection the server is closing at that
 * instant fails with ECONNRESET in the client, a loss that says nothing about the cluster.
 */
const agent = (): Agent => new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, timeout: 2_000 });

const survivorsOf = (cluster: RealCluster, victim: ClusterNode): ClusterNode[] =>
  cluster.nodes.filter((n) => n !== victim);

/** One POST without a body on a keep-alive agent: the status, and the error code of a failure (`network` when none came). */
function post(agent: Agent, url: string): Promise<{ status: number; error?: string }> {
  return new Promise((resolve) => {
    const request = httpRequest(url, { method: 'POST', agent, timeout: 30_000 }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        if (status === 200) return resolve({ status });
        let error = 'unknown';
        try {
          error = String((JSON.parse(text) as { error?: unknown }).error ?? 'unknown');
        } catch {
          // Not JSON: the status says enough.
        }
        resolve({ status, error });
      });
    });
    request.on('timeout', () => request.destroy(new Error('client timeout')));
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ status: 0, error: `network ${error.code ?? error.message}` }),
    );
    request.end();
  });
}
const ENTITIES = 20;

async function entitiesOn(via: ClusterNode, victim: ClusterNode, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let k = 0; k < ENTITIES; k++) ids.push(await entityOn(via, victim, `${tag}${k}`));
  return ids;
}

async function metricSum(nodes: readonly ClusterNode[], name: string): Promise<number> {
  let sum = 0;
  for (const node of nodes) {
    const answer = await http<string>('GET', `${node.url}/metrics`, undefined, 5_000);
    if (typeof answer.body !== 'string') continue;
    for (const line of answer.body.split('\n'))
      if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Kills the `victim` kind's node -9 `leadMs` into a load that runs `afterMs` past the kill; the victim stays dead. */
export async function crashWindow(
  cluster: RealCluster,
  victimKind: VictimKind,
  leadMs: number,
  afterMs: number,
): Promise<CrashFigures> {
  const ages = await byAge(cluster.nodes);
  const victim = victimKind === 'coordinator' ? ages[0]! : ages[ages.length - 1]!;
  const via = ages.find((n) => n !== victim && n !== ages[0]) ?? ages.find((n) => n !== victim)!;
  const sendIds = await entitiesOn(via, victim, `crash-${victimKind}-send`);
  const askIds = await entitiesOn(via, victim, `crash-${victimKind}-ask`);
  const start = performance.now();
  const killAt = start + leadMs;
  let killed = false;
  const asks: Array<Promise<Outcome>> = [];
  const sends: Array<Promise<Outcome>> = [];
  // Sends through one survivor, asks through the other when there is one, each client keeping at most
  // MAX_SOCKETS requests open (more queue in the client): a node's HTTP server closes connections beyond its
  // maxConnections (128), which a dark window of held requests would otherwise reach, failing them in the client.
  const askVia = survivorsOf(cluster, victim).find((n) => n !== via) ?? via;
  const agents = [agent(), agent()];
  const issue = async (id: string, reliable: boolean): Promise<Outcome> => {
    const issued = performance.now();
    const node = reliable ? via : askVia;
    const path = `/counters/${encodeURIComponent(id)}/increment${reliable ? '?reliable=true' : ''}`;
    const answer = await post(agents[reliable ? 0 : 1]!, `${node.url}${path}`);
    return {
      issuedMs: issued - killAt,
      settledMs: performance.now() - killAt,
      ok: answer.status === 200,
      ...answer,
    };
  };
  for (let i = 0; performance.now() < killAt + afterMs; i++) {
    if (!killed && performance.now() >= killAt) {
      victim.child.kill('SIGKILL');
      killed = true;
    }
    sends.push(issue(sendIds[i % ENTITIES] as string, true));
    asks.push(issue(askIds[i % ENTITIES] as string, false));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + (i + 1) * INTERVAL_MS - performance.now())));
  }
  const survivors = survivorsOf(cluster, victim);
  for (const agent of agents) agent.destroy();
  return {
    victim: victimKind,
    sends: await Promise.all(sends),
    asks: await Promise.all(asks),
    redelivered: await metricSum(survivors, 'actor_ts_messages_redelivered_total'),
    deduplicated: await metricSum(survivors, 'actor_ts_messages_deduplicated_total'),
  };
}

export interface CrashSummary {
  readonly sent: number;
  readonly sentAfterKill: number;
  readonly lost: number;
  /** ms from the kill until the first message sent after it was processed: the dark window's end. */
  readonly darkMs: number;
  /** Messages sent between the kill and the dark window's end, and ms from the kill until the last was processed. */
  readonly sentIntoDark: number;
  readonly lastProcessedMs: number;
  /** Failures by `status error`, e.g. `504 timeout`. */
  readonly failures: Record<string, number>;
}

export function summarizeOutcomes(outcomes: readonly Outcome[]): CrashSummary {
  const after = outcomes.filter((o) => o.issuedMs >= 0);
  const darkMs = Math.min(...after.filter((o) => o.ok).map((o) => o.settledMs));
  const dark = after.filter((o) => o.issuedMs <= darkMs);
  const processed = dark.filter((o) => o.ok);
  const failures: Record<string, number> = {};
  for (const o of outcomes)
    if (!o.ok) failures[`${o.status} ${o.error}`] = (failures[`${o.status} ${o.error}`] ?? 0) + 1;
  return {
    failures,
    sent: outcomes.length,
    sentAfterKill: after.length,
    lost: outcomes.filter((o) => !o.ok).length,
    darkMs,
    sentIntoDark: dark.length,
    lastProcessedMs: processed.length === 0 ? Number.NaN : Math.max(...processed.map((o) => o.settledMs)),
  };
}
