// The management routes about nodes rather than shards: cordon (POST), uncordon (DELETE .../cordon) and
// drain (POST) a member, and this node's audit trail. Each write is audited once, after it was applied;
// refusals about the cluster (not a member, nothing to uncordon, no capacity) get their own status codes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CordonError, cordonAddress, type CordonProvenance } from '../sharding/placements/cordons.js';
import type { AccessControl } from './access.js';
import type { AuditLog } from './audit.js';
import type { ManagementBackend } from './backend.js';
import { HttpError, statusOf } from './errors.js';
import {
  AddressParams,
  ProvenanceBody,
  ProvenanceQuery,
  type AuditAnswer,
  type CordonAnswer,
  type DrainAnswer,
} from './api-shapes.js';

type Hook = (request: FastifyRequest) => Promise<void>;

export interface MemberRoutesOptions {
  readonly prefix: string;
  readonly backend: ManagementBackend;
  readonly audit: AuditLog;
  /** Who may call which route, and whose token a request came with. */
  readonly access: AccessControl;
  /** Refuses writes on a node that may not take them (503). */
  readonly memberOnly: Hook;
}

interface AddressRoute {
  Params: AddressParams;
}

/** Cordon and drain: the member's address in the path, who and why in an optional body. */
type ProvenanceRoute = AddressRoute & { Body: ProvenanceBody | undefined };

export function registerMemberRoutes(app: FastifyInstance, options: MemberRoutesOptions): void {
  const { prefix, backend, audit, access, memberOnly } = options;
  const [guardRead, guardWrite, byOf] = [access.guard('read'), access.guard('operate'), access.authorOf];
  /** A cordon or drain request's input, parsed once: the address checked, who asked (the token's name if unsaid). */
  const addressed = (
    request: FastifyRequest & { readonly params: AddressParams; readonly body: ProvenanceBody | undefined },
  ) => {
    const given = request.body ?? {};
    const by = byOf(request, given.by);
    const provenance: CordonProvenance = by === undefined ? given : { ...given, by };
    return { address: cordonAddress(request.params.address), provenance };
  };
  const path = `${prefix}/cluster/members/:address`;
  const write = { onRequest: guardWrite, preHandler: memberOnly };
  const provenanceWrite = { ...write, schema: { params: AddressParams, body: ProvenanceBody } };

  app.post<ProvenanceRoute>(`${path}/cordon`, provenanceWrite, async (request, reply) => {
    const { address, provenance } = addressed(request);
    const written = await refusals(() => backend.cordon(address, provenance));
    audit.record({
      action: 'cordon',
      typeName: null,
      target: address,
      by: written.by,
      reason: written.reason,
      hlc: written.hlc,
    });
    const answer: CordonAnswer = written;
    return reply.code(202).send(answer);
  });

  app.delete<AddressRoute & { Querystring: ProvenanceQuery }>(
    `${path}/cordon`,
    { ...write, schema: { params: AddressParams, querystring: ProvenanceQuery } },
    async (request, reply) => {
      const address = cordonAddress(request.params.address);
      const hlc = await refusals(() => backend.uncordon(address));
      audit.record({
        action: 'uncordon',
        typeName: null,
        target: address,
        by: byOf(request, request.query.by),
        reason: request.query.reason,
        hlc,
      });
      return reply.code(204).send();
    },
  );

  app.post<ProvenanceRoute>(`${path}/drain`, provenanceWrite, async (request, reply) => {
    const { address, provenance } = addressed(request);
    const outcome = await refusals(() => backend.drain(address, provenance));
    const shardIds = Object.values(outcome.moves).flatMap((moves) => moves.map((move) => move.shardId));
    const types = Object.keys(outcome.moves);
    audit.record({
      action: 'drain',
      typeName: types.length === 1 ? (types[0] as string) : null,
      shardIds,
      target: address,
      by: outcome.cordon.by,
      reason: outcome.cordon.reason,
      hlc: outcome.cordon.hlc,
    });
    const answer: DrainAnswer = outcome;
    return reply.code(202).send(answer);
  });

  app.get(`${prefix}/audit`, { onRequest: guardRead }, async (): Promise<AuditAnswer> => ({
    entries: audit.entries(),
  }));
}

/** Runs a backend call, answering its CordonError with the status that refusal has. */
async function refusals<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof CordonError) throw new HttpError(statusOf(error.code), error.code, error.message);
    throw error;
  }
}
