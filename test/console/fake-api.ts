// Fake management routes for the console's browser test over an in-memory cluster of three nodes, so the page can
// be driven without the node wiring. Every answer is typed by the API's own shapes (api-shapes.ts), so the fake
// cannot send what the real API does not (test/console/shapes.test.ts holds the real API to the same shapes). Its
// `later` switch only decides which requests it takes (pin reasons, audit, explain), to drive the page's handling
// of refusals. Writes are recorded so the test can see which REST calls the page made.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {
  AuditEntryJson,
  CordonAnswer,
  DrainAnswer,
  ExplainAnswer,
  HealthAnswer,
  MembersAnswer,
  PinRecord,
  PinsWritten,
  PlacementsAnswer,
  PlacementsDryRunAnswer,
  RebalanceAnswer,
  ShardLocationsAnswer,
} from '../../src/management/api-shapes.js';
import { healthAnswer, pinRecord } from './answers.js';

export const NODES = ['app@127.0.0.1:25520', 'app@127.0.0.1:25521', 'app@127.0.0.1:25522'] as const;
export const TYPE = 'Counter';
export const SHARDS = 12;

export interface FakeCluster {
  readonly hosts: Map<number, string>;
  readonly placements: Map<number, PinRecord>;
  /** Shards reported as handing off (still listed under the region they leave). */
  readonly handingOff: Set<number>;
  readonly writes: Array<{ method: string; url: string; body: unknown }>;
  /** Cordoned members (served only with the member routes). */
  readonly cordoned: Set<string>;
  /** Every placements dry run the page asked for, with the Authorization header it sent. */
  readonly dryRuns: Array<{ body: unknown; authorization: string | undefined }>;
  /** What GET /actor-ts/audit answers (newest first), later API only. */
  readonly audit: AuditEntryJson[];
  /** The next unpin is refused with this error (once), as a node without a majority would. */
  refuseNextUnpin?: { readonly status: number; readonly code: string; readonly message: string };
}

export function fakeCluster(): FakeCluster {
  const hosts = new Map<number, string>();
  for (let shard = 0; shard < SHARDS; shard += 1) hosts.set(shard, NODES[shard % NODES.length] ?? NODES[0]);
  return {
    hosts,
    placements: new Map(),
    handingOff: new Set(),
    writes: [],
    cordoned: new Set(),
    dryRuns: [],
    audit: [],
  };
}

class FakeHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Registers the fake routes; `readGuard` plays --auth-reads, `writeGuard` --auth-token. */
export function registerFakeApi(
  app: FastifyInstance,
  cluster: FakeCluster,
  guards: {
    readGuard?: (request: FastifyRequest) => Promise<void>;
    writeGuard?: (request: FastifyRequest) => Promise<void>;
  } = {},
  /** Answer like a later API: members with attributes and `cordoned`, pins with reason, mode, by and explain. */
  later = false,
  /** Serve the cordon, uncordon and drain routes (issue 12): POST/DELETE .../cordon, POST .../drain. */
  memberRoutes = false,
): void {
  const read = guards.readGuard ? { onRequest: guards.readGuard } : {};
  const write = guards.writeGuard ? { onRequest: guards.writeGuard } : {};
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, _request, reply) => {
    const status = error.statusCode ?? 500;
    return reply
      .code(status)
      .send({ error: error instanceof FakeHttpError ? error.code : 'internal', message: error.message });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url}` }),
  );
  const typePath = `/actor-ts/cluster/shards/:typeName`;
  const known = (typeName: string) => {
    if (typeName !== TYPE)
      throw new FakeHttpError(404, 'unknown_type', `entity type "${typeName}" is not initialised on this node`);
  };

  app.get('/actor-ts/health', read, async (): Promise<HealthAnswer> =>
    healthAnswer({
      memberStatus: 'up',
      self: NODES[0],
      placementStore: {
        generation: 0,
        slots: cluster.placements.size,
        baseSlots: 0,
        documentItems: cluster.writes.length,
      },
    }),
  );
  app.get('/actor-ts/cluster/members', read, async (): Promise<MembersAnswer> => ({
    self: NODES[0],
    members: NODES.map((address, index) => ({
      address,
      status: 'up',
      appVersion: '0.1.0',
      upNumber: index + 1,
      reachable: true,
      roles: [],
      ...(later ? { attributes: { zone: `z${index}` }, cordoned: cluster.cordoned.has(address) } : {}),
    })),
  }));
  app.get<{ Params: { typeName: string } }>(typePath, read, async (request): Promise<ShardLocationsAnswer> => {
    known(request.params.typeName);
    const regions = NODES.map((address) => ({
      address,
      shards: [...cluster.hosts].filter(([, host]) => host === address).map(([shard]) => shard),
    }));
    return { regions, handingOff: [...cluster.handingOff] };
  });
  app.get<{ Params: { typeName: string } }>(
    `${typePath}/placements`,
    read,
    async (request): Promise<PlacementsAnswer> => {
      known(request.params.typeName);
      return { placements: [...cluster.placements.values()].sort((a, b) => a.shardId - b.shardId) };
    },
  );
  if (later) {
    app.get('/actor-ts/audit', read, async () => ({ entries: cluster.audit }));
    app.get<{ Params: { typeName: string; shardId: string } }>(
      `${typePath}/explain/:shardId`,
      read,
      async (request): Promise<ExplainAnswer> => explainAnswer(cluster, Number(request.params.shardId)),
    );
  }
  app.post<{ Params: { typeName: string }; Body: Record<string, unknown>; Querystring: { dryRun?: string } }>(
    `${typePath}/placements`,
    write,
    async (request, reply) => {
      known(request.params.typeName);
      const body = request.body;
      const dry = request.query.dryRun === 'true';
      if (!dry) cluster.writes.push({ method: 'POST', url: request.url, body });
      // Today's schema: exactly shardId and target; anything else is rejected before anything is written.
      const extra = Object.keys(body).find(
        (key) =>
          key !== 'shardId' &&
          key !== 'target' &&
          !(later && (key === 'reason' || key === 'mode' || key === 'allowUnknownTarget')),
      );
      if (extra !== undefined)
        throw new FakeHttpError(400, 'invalid_request', `body must NOT have additional properties (${extra})`);
      if (
        later &&
        !(NODES as readonly string[]).includes(String(body['target'])) &&
        body['allowUnknownTarget'] !== true
      ) {
        throw new FakeHttpError(
          409,
          'unknown_target',
          `no current member matches target ${String(body['target'])}; nothing was written`,
        );
      }
      if (dry) {
        cluster.dryRuns.push({ body, authorization: request.headers.authorization });
        const shardId = Number(body['shardId']);
        const from = cluster.hosts.get(shardId);
        const to = (NODES as readonly string[]).includes(String(body['target'])) ? String(body['target']) : null;
        const moves = from !== undefined && from !== to ? [{ shardId, from, to }] : [];
        const waiting = moves.filter((move) => move.to === null).map((move) => move.shardId);
        const answer: PlacementsDryRunAnswer = {
          dryRun: true,
          placements: [],
          moves,
          waiting,
          withoutHome: waiting,
          warnings: [],
        };
        return answer;
      }
      const shardId = body['shardId'];
      const target = body['target'];
      if (typeof shardId !== 'number' || typeof target !== 'string' || shardId < 0 || shardId >= SHARDS) {
        throw new FakeHttpError(400, 'invalid_request', 'body must have shardId and target');
      }
      const placement = pinRecord({
        shardId,
        target,
        writer: NODES[0],
        hlc: { wallMs: Date.now(), counter: 0, node: NODES[0] },
        reason: typeof body['reason'] === 'string' ? body['reason'] : null,
        mode: body['mode'] === 'require' ? 'require' : 'prefer',
        by: 'console',
      });
      cluster.placements.set(shardId, placement);
      const answer: PinsWritten = { placements: [placement], warnings: [] };
      return reply.code(202).send(answer);
    },
  );
  app.delete<{ Params: { typeName: string; shardId: string } }>(
    `${typePath}/placements/:shardId`,
    write,
    async (request, reply) => {
      known(request.params.typeName);
      const refusal = cluster.refuseNextUnpin;
      if (refusal !== undefined) {
        cluster.refuseNextUnpin = undefined;
        throw new FakeHttpError(refusal.status, refusal.code, refusal.message);
      }
      cluster.writes.push({ method: 'DELETE', url: request.url, body: undefined });
      if (!cluster.placements.delete(Number(request.params.shardId))) {
        throw new FakeHttpError(
          404,
          'not_found',
          `shard ${request.params.shardId} of ${TYPE} has no explicit placement`,
        );
      }
      return reply.code(204).send();
    },
  );
  if (memberRoutes) registerFakeMemberRoutes(app, cluster, write);
  app.post<{ Params: { typeName: string }; Body: { shardIds: number[] } }>(
    `${typePath}/rebalance`,
    write,
    async (request, reply) => {
      known(request.params.typeName);
      cluster.writes.push({ method: 'POST', url: request.url, body: request.body });
      // The hand-off completes at once here: the shard lands where its pin says.
      const accepted = request.body.shardIds.filter((shard) => cluster.hosts.has(shard));
      for (const shard of accepted) {
        const pin = cluster.placements.get(shard);
        if (pin) cluster.hosts.set(shard, pin.target);
      }
      const unallocated = request.body.shardIds.filter((shard) => !cluster.hosts.has(shard));
      const answer: RebalanceAnswer = { accepted, unallocated, homeless: unallocated };
      return reply.code(202).send(answer);
    },
  );
}

/** Cordon, uncordon and drain as the real API answers them; a drain moves the node's shards to the next node. */
function registerFakeMemberRoutes(app: FastifyInstance, cluster: FakeCluster, write: object): void {
  const path = '/actor-ts/cluster/members/:address';
  const member = (address: string): string => {
    if (!(NODES as readonly string[]).includes(address))
      throw new FakeHttpError(404, 'unknown_member', `${address} is not a member of this cluster`);
    return address;
  };
  app.post<{ Params: { address: string } }>(`${path}/cordon`, write, async (request, reply) => {
    const address = member(request.params.address);
    cluster.writes.push({ method: 'POST', url: request.url, body: request.body });
    cluster.cordoned.add(address);
    return reply.code(202).send(cordonAnswer(address));
  });
  app.delete<{ Params: { address: string } }>(`${path}/cordon`, write, async (request, reply) => {
    const address = member(request.params.address);
    cluster.writes.push({ method: 'DELETE', url: request.url, body: undefined });
    if (!cluster.cordoned.delete(address)) throw new FakeHttpError(404, 'not_cordoned', `${address} is not cordoned`);
    return reply.code(204).send();
  });
  app.post<{ Params: { address: string }; Body: { by?: string; reason?: string } | undefined }>(
    `${path}/drain`,
    write,
    async (request, reply) => {
      const address = member(request.params.address);
      cluster.writes.push({ method: 'POST', url: request.url, body: request.body });
      cluster.audit.unshift({
        at: new Date().toISOString(),
        action: 'drain',
        typeName: null,
        shardIds: [],
        target: address,
        by: request.body?.by ?? null,
        reason: request.body?.reason ?? null,
        hlc: null,
      });
      cluster.cordoned.add(address);
      const to = NODES.find((node) => !cluster.cordoned.has(node)) ?? null;
      const moves = [...cluster.hosts]
        .filter(([, host]) => host === address)
        .map(([shardId]) => ({ shardId, from: address, to }));
      for (const move of moves) if (to !== null) cluster.hosts.set(move.shardId, to);
      const answer: DrainAnswer = { address, cordon: cordonAnswer(address), moves: { [TYPE]: moves }, warnings: [] };
      return reply.code(202).send(answer);
    },
  );
}

function cordonAnswer(address: string): CordonAnswer {
  return { address, cordoned: true, by: null, reason: null, hlc: { wallMs: Date.now(), counter: 0, node: NODES[0] } };
}

/** Explain as the coordinator words it, from the fake's hosts and pins. */
function explainAnswer(cluster: FakeCluster, shardId: number): ExplainAnswer {
  const home = cluster.hosts.get(shardId) ?? null;
  const pin = cluster.placements.get(shardId) ?? null;
  return {
    shardId,
    home,
    handingOff: cluster.handingOff.has(shardId),
    placement: pin,
    decision: pin === null ? (home === null ? 'unallocated' : 'fallback') : 'placement',
    message: `shard ${shardId} is on ${home ?? 'no node'}: ${pin ? `pinned to ${pin.target}` : 'the fallback strategy placed it'}`,
    nodes: NODES.map((address) => ({
      address,
      shards: [...cluster.hosts.values()].filter((host) => host === address).length,
      reachable: true,
      status: 'up',
      cordoned: cluster.cordoned.has(address),
      matches: pin === null ? null : pin.target === address,
    })),
    history: [],
  };
}

/** A bearer check like the management server's: 401 `{ error: 'unauthorized' }`. */
export function bearer(token: string) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.headers.authorization !== `Bearer ${token}`)
      throw new FakeHttpError(401, 'unauthorized', 'missing or wrong bearer token');
  };
}
