// Browser side of the console: the pure derivations it renders (coordinator, shards per node, pin state) from the
// API's answers, whose shapes come from the server's own declaration (api-shapes.ts): the page is served by the node
// whose API it reads, so both are always of one release.

import type { HealthAnswer, MemberJson, MembersAnswer, PinRecord, ShardLocationsAnswer } from '../../api-shapes.js';

export type { HealthAnswer, MemberJson, MembersAnswer, PinRecord, ShardLocationsAnswer };

/** What the page knows of one entity type after a refresh. */
export interface TypeView {
  readonly typeName: string;
  readonly locations?: ShardLocationsAnswer;
  readonly placements?: readonly PinRecord[];
  /** Why this type could not be read (unknown type, ...). */
  readonly problem?: string;
}

export const DEFAULT_TYPE = 'Counter';

/** Types to show: the query string's `type` (repeatable, comma-separated), plus what health or members list. */
export function typesToShow(search: string, health: HealthAnswer | undefined): string[] {
  const types = new Set<string>();
  for (const value of new URLSearchParams(search).getAll('type')) {
    for (const part of value.split(',')) if (part.trim() !== '') types.add(part.trim());
  }
  for (const name of listedTypes(health?.entityTypes)) types.add(name);
  if (types.size === 0) types.add(DEFAULT_TYPE);
  return [...types];
}

function listedTypes(listed: HealthAnswer['entityTypes']): string[] {
  return (listed ?? []).map((entry) => entry.typeName);
}

/** The type's entities active on the node serving the console, and whether it is durable (health lists them). */
export function typeOnNode(
  health: HealthAnswer | undefined,
  typeName: string,
): { readonly activeEntities?: number; readonly durable?: boolean } | undefined {
  return health?.entityTypes?.find((entry) => entry.typeName === typeName);
}

/** How many shards the node declares for a type (health lists every initialised type). */
export function declaredShards(health: HealthAnswer | undefined, typeName: string): number | undefined {
  return health?.entityTypes?.find((entry) => entry.typeName === typeName)?.numberOfShards;
}

/** [system, host, port] of `system@host:port`, for the cluster's address order. */
function addressKey(address: string): [string, string, number] {
  const at = address.indexOf('@');
  const colon = address.lastIndexOf(':');
  return [address.slice(0, at), address.slice(at + 1, colon), Number(address.slice(colon + 1))];
}

export function compareAddresses(a: string, b: string): number {
  const [sa, ha, pa] = addressKey(a);
  const [sb, hb, pb] = addressKey(b);
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (ha !== hb) return ha < hb ? -1 : 1;
  return pa - pb;
}

/**
 * Where the coordinators run: the oldest Up member (lowest upNumber, ties by address), which is where the cluster
 * places them when no role narrows the choice.
 */
export function coordinatorOf(members: readonly MemberJson[]): string | undefined {
  let oldest: MemberJson | undefined;
  for (const member of members) {
    if (member.status !== 'up') continue;
    const age = (m: MemberJson) => (m.upNumber > 0 ? m.upNumber : Number.MAX_SAFE_INTEGER);
    if (
      !oldest ||
      age(member) < age(oldest) ||
      (age(member) === age(oldest) && compareAddresses(member.address, oldest.address) < 0)
    ) {
      oldest = member;
    }
  }
  return oldest?.address;
}

/** Shards hosted per node address, over every type shown. */
export function shardCounts(views: readonly TypeView[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const view of views) {
    for (const region of view.locations?.regions ?? []) {
      counts.set(region.address, (counts.get(region.address) ?? 0) + region.shards.length);
    }
  }
  return counts;
}

/** Which node hosts each shard of a type. */
export function hosts(locations: ShardLocationsAnswer | undefined): Map<number, string> {
  const map = new Map<number, string>();
  for (const region of locations?.regions ?? []) for (const shard of region.shards) map.set(shard, region.address);
  return map;
}

export type PinState = 'on-target' | 'elsewhere' | 'not-allocated';

/**
 * Where a pinned shard is now, relative to its pin: on a node the pin names or (a selector) whose attributes match,
 * given `members`; elsewhere; or nowhere yet.
 */
export function pinState(
  pin: PinRecord,
  hostOf: ReadonlyMap<number, string>,
  members: readonly MemberJson[] = [],
): PinState {
  const host = hostOf.get(pin.shardId);
  if (host === undefined) return 'not-allocated';
  return hostSatisfies(pin, host, members) ? 'on-target' : 'elsewhere';
}

/** Whether `host` satisfies a pin: it is the pin's address, or a member in `members` that its selector matches. */
export function hostSatisfies(pin: PinRecord, host: string, members: readonly MemberJson[]): boolean {
  if (host === pin.target) return true;
  const member = members.find((candidate) => candidate.address === host);
  return member !== undefined && !pin.target.includes('@') && matchesTarget(member, pin.target);
}

/** Whether a member satisfies a pin's target: its address, or every KEY=VALUE of a selector among its attributes. */
export function matchesTarget(member: MemberJson, target: string): boolean {
  if (target.includes('@')) return member.address === target.replace(/^actor-ts:\/\//, '');
  const attributes = member.attributes ?? {};
  return target.split(',').every((term) => {
    const [key, value] = term.split('=');
    return key !== undefined && value !== undefined && attributes[key.trim()] === value.trim();
  });
}

/** Members a pin may target without a warning: the API warns for any that is down or removed. */
export function isCurrentMember(members: readonly MemberJson[], address: string): boolean {
  return members.some(
    (member) => member.address === address && member.status !== 'down' && member.status !== 'removed',
  );
}
