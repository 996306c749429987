// What the operator commands share: the output sink, the connection options, argument checks that fail as
// usage errors (exit code 2), and waiting for a manual hand-off to land.
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_NODE_CONFIG } from '../node/config.js';
import { FALLBACK_STRATEGIES } from '../sharding/strategies/fallback-choice.js';
import { ActorTsError } from '../errors.js';
import { NodeAddress } from '../cluster/address.js';
import {
  targetMatches,
  tryParsePlacementTarget,
  type PlacementTarget,
} from '../sharding/placements/placement-target.js';
import { ManagementClient, type MemberRow, type Provenance } from './client.js';

export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export function connect(command: Command): { client: ManagementClient; type: string } {
  const options = command.optsWithGlobals<{ url: string; type: string; token?: string; ca?: string }>();
  const url = usage(command, () => urlArg(options.url));
  const ca = options.ca === undefined ? undefined : usage(command, () => caArg(options.ca as string));
  const client = new ManagementClient(url, {
    ...(options.token ? { token: options.token } : {}),
    ...(ca ? { ca } : {}),
  });
  return { client, type: options.type };
}

/** The text of a `--ca` file; a file that cannot be read or holds no certificate is a usage error naming it. */
function caArg(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(
      `--ca ${file} cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    throw new InvalidArgumentError(`--ca ${file} holds no PEM certificate`);
  return text;
}

/** A node's API URL: http(s)://host:port; anything else (a missing scheme above all) is a usage error. */
export function urlArg(value: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  // "127.0.0.1:8551" parses as a URL of scheme "127.0.0.1:": only http and https name an API.
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.host === '') {
    const hint = /^[^/:]+:\d+/.test(value) ? `; did you mean http://${value}?` : '';
    throw new InvalidArgumentError(
      `--url "${value}" is not an http:// or https:// URL of a node's management API${hint}`,
    );
  }
  return value;
}

/**
 * Checks an argument inside an action: a bad value is a usage error reported like commander's own (message
 * on stderr, exit code 2), not an unexplained failure. `check` signals a bad value with InvalidArgumentError.
 */
export function usage<T>(command: Command, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    return command.error(`error: ${error.message}`, { exitCode: 2, code: 'commander.invalidArgument' });
  }
}

/** A node address argument; a usage error that says what is wrong with it (a port out of range, a bad host...). */
export function addressArg(value: string): string {
  try {
    return NodeAddress.parse(value).toString();
  } catch (error) {
    if (!(error instanceof ActorTsError)) throw error;
    throw new InvalidArgumentError(error.message);
  }
}

export function shardIdArg(value: string): number {
  if (!/^\d{1,15}$/.test(value))
    throw new InvalidArgumentError(`"${value}" is not a shard id (a non-negative integer)`);
  return Number(value);
}

export function hlcText(hlc: { wallMs: number; counter: number; node: string }): string {
  return `${new Date(hlc.wallMs).toISOString()}#${hlc.counter}@${hlc.node}`;
}

export async function rebalanceAndWait(
  client: ManagementClient,
  type: string,
  shardIds: number[],
  io: CliIo,
  provenance: Provenance = {},
): Promise<void> {
  const outcome = await client.rebalance(type, shardIds, provenance);
  // A node of an earlier release answers only the old name.
  const unallocated = outcome.unallocated ?? outcome.homeless;
  if (unallocated.length > 0) io.err(`not allocated yet (nothing to move): ${unallocated.join(', ')}`);
  if (outcome.accepted.length === 0) return;
  io.out(`hand-off started for ${outcome.accepted.join(', ')}; waiting for the new homes...`);
  const [{ placements: pinned }, { members }] = await Promise.all([client.placements(type), client.members()]);
  // A pin no live member satisfies cannot be honoured yet: such a shard lands wherever the fallback puts it.
  const live = members.filter((m) => m.status !== 'down' && m.status !== 'removed');
  const byAddress = new Map(live.map((m) => [m.address, m]));
  const pins = new Map<number, PlacementTarget>();
  for (const p of pinned) {
    const target = tryParsePlacementTarget(p.target);
    if (target !== undefined && live.some((m) => targetMatches(target, nodeOf(m)))) pins.set(p.shardId, target);
  }
  const deadline = Date.now() + 30_000;
  const pending = new Set(outcome.accepted);
  let nextProgress = Date.now() + 2_000;
  while (pending.size > 0 && Date.now() < deadline) {
    const { regions, handingOff } = await client.shards(type);
    // A shard still handing off is listed under the region it is leaving: not its new home yet.
    const moving = new Set(handingOff ?? []);
    for (const region of regions) {
      const member = byAddress.get(region.address);
      for (const shard of region.shards) {
        if (!pending.has(shard) || moving.has(shard)) continue;
        const pin = pins.get(shard);
        if (pin === undefined || (member !== undefined && targetMatches(pin, nodeOf(member)))) {
          pending.delete(shard);
          io.out(`  shard ${shard} now on ${region.address}`);
        }
      }
    }
    if (pending.size > 0 && Date.now() >= nextProgress) {
      io.out(`  still moving: ${[...pending].join(', ')}`);
      nextProgress = Date.now() + 2_000;
    }
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (pending.size > 0)
    io.err(`still moving after 30 s: ${[...pending].join(', ')} (shards are re-allocated on their next message)`);
}

function nodeOf(member: MemberRow): {
  address: NodeAddress;
  roles: readonly string[];
  attributes?: Readonly<Record<string, string>>;
} {
  return {
    address: NodeAddress.parse(member.address),
    roles: member.roles,
    ...(member.attributes ? { attributes: member.attributes } : {}),
  };
}

export function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('expected a port number 0..65535');
  return n;
}

export function positiveInt(value: string): number {
  const n = Number(value);
  // Past 2^53 digits stop meaning what they say (and 400 of them make Infinity).
  if (!/^\d+$/.test(value) || n < 1 || !Number.isSafeInteger(n))
    throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** `--fallback <strategy>`, as the node and local-cluster commands take it. */
export function fallbackOption(): Option {
  return new Option(
    '--fallback <strategy>',
    `strategy for shards without a pin (default ${DEFAULT_NODE_CONFIG.fallback}; see README "Which fallback")`,
  ).choices(FALLBACK_STRATEGIES);
}
