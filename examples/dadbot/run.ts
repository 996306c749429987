// `npm run dadbot`: the seed article's scripted run on three nodes in this process. Messages go through
// different nodes; the oldest node leaves while it hosts #engineering; a message follows the move; the node
// hosting #random is cut off (killed, as far as the cluster can tell) and the next message finds a new Dad.
// Flags (all optional): --base-port P (cluster ports P..P+2, default 25520), --http-base-port H (default 8080),
// --quiet-ms, --think-ms, --down-after-ms (how long a dead node stays a member; default 5000).
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNode, type RunningNode } from '@actor-ts/placement';
import { DAD_ROLE, dadbot, type Accepted, type DadbotApplication } from './app.js';
import { DAD_TYPE, type DadEvent } from './dad.js';
import { Timeline } from './timeline.js';

interface Flags {
  readonly basePort: number;
  readonly httpBasePort: number;
  readonly quietMs: number;
  readonly thinkMs: number;
  readonly downAfterMs: number;
}

function flags(): Flags {
  const { values } = parseArgs({
    options: {
      'base-port': { type: 'string' },
      'http-base-port': { type: 'string' },
      'quiet-ms': { type: 'string' },
      'think-ms': { type: 'string' },
      'down-after-ms': { type: 'string' },
    },
  });
  const int = (name: keyof typeof values, fallback: number): number => {
    const text = values[name];
    const value = text === undefined ? fallback : Number(text);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
    return value;
  };
  return {
    basePort: int('base-port', 25_520),
    httpBasePort: int('http-base-port', 8_080),
    quietMs: int('quiet-ms', 2_500),
    thinkMs: int('think-ms', 2_000),
    downAfterMs: int('down-after-ms', 5_000),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await Promise.resolve()
        .then(condition)
        .catch(() => false)
    )
      return true;
    await sleep(50);
  }
  return false;
}

/**
 * The three nodes of the run, each with the Dad's role, sharing one lmdb entity store (a Dad's memory is committed
 * after every message); `names` learns node-0..node-2.
 */
async function startNodes(f: Flags, app: DadbotApplication, names: Map<string, string>): Promise<RunningNode[]> {
  const entities = mkdtempSync(join(tmpdir(), 'dadbot-entities-'));
  process.once('exit', () => rmSync(entities, { recursive: true, force: true }));
  const nodes: RunningNode[] = [];
  for (let i = 0; i < 3; i++) {
    const seed = nodes[0]?.address.toString();
    const node = await startNode({
      port: f.basePort + i,
      http: { port: f.httpBasePort + i },
      seeds: seed === undefined ? [] : [seed],
      roles: [DAD_ROLE],
      logLevel: 'silent',
      cluster: { downAfterMs: f.downAfterMs },
      entityStore: { kind: 'lmdb', dir: entities },
      ...app,
    });
    names.set(node.address.toString(), `node-${i}`);
    nodes.push(node);
  }
  return nodes;
}

/** What the script's scenes share: the nodes by name, the timeline, and the jokes Dad told so far. */
interface Stage {
  readonly f: Flags;
  readonly timeline: Timeline;
  readonly events: DadEvent[];
  readonly nameOf: (address: string) => string;
  readonly shardOf: (chatId: string) => number;
}

async function play(f: Flags): Promise<void> {
  const names = new Map<string, string>();
  const nameOf = (address: string): string => names.get(address) ?? address;
  const timeline = new Timeline((line) => process.stdout.write(`${line}\n`), nameOf);
  const events: DadEvent[] = [];
  const app = dadbot({
    quietMs: f.quietMs,
    thinkMs: f.thinkMs,
    onEvent: (event) => {
      events.push(event);
      timeline.event(event);
    },
  });
  const nodes = await startNodes(f, app, names);
  const [node0, node1, node2] = nodes as [RunningNode, RunningNode, RunningNode];
  await until('three nodes up', () => upEverywhere(nodes), 30_000);
  timeline.line('three nodes up: node-0 (the oldest: it runs the coordinator), node-1, node-2');
  const stage: Stage = {
    f,
    timeline,
    events,
    nameOf,
    shardOf: (chatId) => node1.sharding.entityRefFor(DAD_TYPE, chatId).shardId,
  };
  await pinChats(stage, node0, node2);
  const chat = chatActions(stage);

  await chat.post(node0, '#engineering', 'Sebastian', 'Why is this test flaky?');
  await sleep(1_000);
  await chat.post(node1, '#engineering', 'Mattia', "It's flaky for me too");
  await chat.post(node1, '#random', 'Tim', 'Is CI down?');
  await chat.waitJoke('#engineering', 1);
  await chat.waitJoke('#random', 1);
  await chat.whereIs(node1, '#engineering');
  await chat.whereIs(node1, '#random');

  timeline.line('--- node-0 leaves the cluster ---');
  await node0.stop();
  timeline.line('node-0 left');
  await chat.post(node1, '#engineering', 'Sebastian', 'Still flaky?');
  await chat.waitJoke('#engineering', 2);
  await chat.whereIs(node2, '#engineering');

  await killScene(stage, chat, node1, node2);
  await node1.stop();
  await Promise.race([node2.stopped, sleep(f.downAfterMs * 2)]);
  timeline.line('done');
}

async function upEverywhere(nodes: readonly RunningNode[]): Promise<boolean> {
  for (const node of nodes) {
    const body = (await (await fetch(`${node.httpUrl}/actor-ts/cluster/members`)).json()) as {
      members: Array<{ status: string }>;
    };
    if (body.members.length !== 3 || body.members.some((member) => member.status !== 'up')) return false;
  }
  return true;
}

/** Where each chat lives is ours to say: pins (placements), written through any node, replicated to all. */
async function pinChats({ timeline, shardOf }: Stage, node0: RunningNode, node2: RunningNode): Promise<void> {
  await node0.placements(DAD_TYPE).setPlacement(shardOf('#engineering'), node0.address, {
    by: 'dadbot',
    reason: 'the oldest node hosts #engineering',
  });
  await node0
    .placements(DAD_TYPE)
    .setPlacement(shardOf('#random'), node2.address, { by: 'dadbot', reason: '#random on node-2' });
  timeline.line(
    `pinned #engineering (shard ${shardOf('#engineering')}) to node-0, #random (shard ${shardOf('#random')}) to node-2`,
  );
}

type ChatActions = ReturnType<typeof chatActions>;

/** Posting to a chat through a node's HTTP route, waiting for Dad's joke, and asking where a chat lives. */
function chatActions({ f, timeline, events, nameOf, shardOf }: Stage) {
  const post = async (via: RunningNode, chatId: string, from: string, text: string): Promise<void> => {
    const response = await fetch(`${via.httpUrl}/chats/${encodeURIComponent(chatId)}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from, text }),
    });
    const accepted = (await response.json()) as Accepted;
    timeline.line(
      `${chatId} · ${from}: ${text}  (via ${nameOf(via.address.toString())}, shard ${accepted.shardId}) → ${response.status}`,
    );
  };
  const jokes = (chatId: string): number =>
    events.filter((event) => event.kind !== 'entered' && event.chatId === chatId).length;
  const waitJoke = async (chatId: string, count: number): Promise<void> => {
    const budget = (f.quietMs + f.thinkMs) * 2 + f.downAfterMs * 4 + 10_000;
    if (!(await until(`a joke in ${chatId}`, () => jokes(chatId) >= count, budget)))
      timeline.line(`...no joke in ${chatId} (the message was lost)`);
  };
  const whereIs = async (via: RunningNode, chatId: string): Promise<void> => {
    const status = (await (await fetch(`${via.httpUrl}/chats/${encodeURIComponent(chatId)}`)).json()) as {
      node: string;
      told: string[];
    };
    timeline.line(`${chatId} → shard ${shardOf(chatId)} → ${nameOf(status.node)} (told ${status.told.length})`);
  };
  return { post, waitJoke, whereIs };
}

/** A kill, as the others see it: node-2's cluster port goes silent at once. Cut off, it downs itself. */
async function killScene({ f, timeline }: Stage, chat: ChatActions, node1: RunningNode, node2: RunningNode) {
  timeline.line('--- node-2 is killed (it hosts #random) ---');
  await node2.transport.close();
  await chat.post(node1, '#random', 'Tim', 'Anyone?');
  const memberStatus = async (): Promise<string> => {
    const body = (await (await fetch(`${node1.httpUrl}/actor-ts/cluster/members`)).json()) as {
      members: Array<{ address: string; status: string; reachable: boolean }>;
    };
    const member = body.members.find((m) => m.address === node2.address.toString());
    return member === undefined ? 'removed' : member.reachable ? member.status : `${member.status}, unreachable`;
  };
  let seen = await memberStatus();
  timeline.line(`node-1 sees node-2: ${seen}`);
  await until(
    'node-2 out of the cluster',
    async () => {
      const now = await memberStatus();
      if (now !== seen) timeline.line(`node-1 sees node-2: ${(seen = now)}`);
      return now === 'removed' || now.startsWith('down');
    },
    f.downAfterMs * 6 + 20_000,
  );
  await chat.post(node1, '#random', 'Tim', 'Is CI down?');
  await chat.waitJoke('#random', 2);
  await chat.whereIs(node1, '#random');
}

play(flags()).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
