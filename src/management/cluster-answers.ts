// The answers of the two routes about the node and its cluster rather than about shards: GET /actor-ts/health
// (liveness, and every reason the node is not ok) and GET /actor-ts/cluster/members (each member with its release,
// protocol and cordon), built from the backend in the shapes api-shapes.ts declares.
import type { HealthAnswer, MembersAnswer } from './api-shapes.js';
import type { ManagementBackend, MemberProtocol } from './backend.js';

/** A member's `release` and `protocol` fields: null while this node has no handshake with it to tell. */
function protocolFields(known: MemberProtocol | undefined): { release: string | null; protocol: number | null } {
  return { release: known?.release ?? null, protocol: known?.protocol ?? null };
}

/** GET /actor-ts/health: liveness, and why the node is not ok when it is not (`accessProblems`: the tokens file's). */
export function healthOf(backend: ManagementBackend, accessProblems: readonly string[]): HealthAnswer {
  const health = backend.health();
  const replication = backend.replication();
  const storage = backend.storage();
  const access = backend.writeAccess();
  // A member that refuses writes, cannot replicate placements or store them is not ok: its writes and its
  // view may not be the cluster's. `reasons` says why, one line each.
  const reasons = [
    ...(access.writable ? [] : [`placement writes are refused (${access.code}): ${access.reason}`]),
    ...replication.problems,
    ...(storage.failure === null ? [] : [`storage: ${storage.failure}`]),
    ...[backend.entityStoreProblem?.()].filter((problem) => problem !== undefined),
    ...accessProblems,
  ];
  const status = health.status === 'ok' && reasons.length > 0 ? 'degraded' : health.status;
  // Every initialised type, so the console lists them all without being told their names; pid: a tool that
  // started this node (local-cluster) tells it apart from another process on the same port.
  const entityTypes = [...backend.entityTypes()].map(([typeName, facts]) => ({
    typeName,
    numberOfShards: facts.numberOfShards,
    ...(facts.shardIdFunction === undefined ? {} : { shardIdFunction: facts.shardIdFunction }),
    ...(facts.activeEntities === undefined ? {} : { activeEntities: facts.activeEntities }),
    ...(facts.durable === undefined ? {} : { durable: facts.durable }),
  }));
  return {
    ...health,
    status,
    reasons,
    self: backend.self.toString(),
    pid: process.pid,
    entityTypes,
    placementStore: backend.placementStore(),
    replication,
    storage,
  };
}

/** GET /actor-ts/cluster/members: every member as this node sees it, with its release and cordon. */
export function membersOf(backend: ManagementBackend): MembersAnswer {
  const cordoned = new Set(backend.cordons().map((cordon) => cordon.address));
  const members = backend.members().map((member) => ({
    address: member.address.toString(),
    status: member.status,
    appVersion: member.appVersion,
    ...protocolFields(backend.protocolOf?.(member.address)),
    upNumber: member.upNumber,
    reachable: member.reachable,
    roles: member.roles ?? [],
    attributes: member.attributes ?? {},
    cordoned: cordoned.has(member.address.toString()),
  }));
  return { self: backend.self.toString(), members };
}
