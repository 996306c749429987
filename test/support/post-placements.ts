// Test helper for the management API tests: a placements write (one pin or a bulk body) sent to one node through
// Fastify's inject, answered as the route answers it.
import type { RunningNode } from '../../src/node/node.js';
import { COUNTER } from '../management/node-fixture.js';

/** POSTs `payload` to the Counter type's placements route of `node`. */
export function postPlacements(node: RunningNode, payload: Record<string, unknown>) {
  return node.http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload });
}
