// Test set-up for the management route tests on one in-process node: the node, started once for the enclosing
// describe block; a baseline pin written before each test, so "nothing changed" is checked against a non-empty
// store; and the request helpers, among them the check that a rejected request left the placements as they were.
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { InjectOptions } from 'fastify';
import type { RunningNode } from '../../src/node/node.js';
import {
  COUNTER,
  clearPlacements,
  expectError,
  getPlacements,
  startTestNode,
  stopAll,
} from '../management/node-fixture.js';

/** Registers the node's hooks in the enclosing describe block; the node and its address exist from beforeAll. */
export function useOneNodeRoutes() {
  let node: RunningNode | undefined;
  const running = (): RunningNode => {
    if (node === undefined) throw new Error('the test node did not start');
    return node;
  };
  const inject = (options: InjectOptions) => running().http.inject(options);
  const post = (url: string, payload: unknown) =>
    inject({ method: 'POST', url, payload: payload as Record<string, unknown> });
  const setPlacements = (payload: unknown) => post(`${COUNTER}/placements`, payload);

  /** Runs a request that must be rejected, and checks it left the placements (HLCs included) as they were. */
  async function expectRejected(
    options: InjectOptions,
    status: number,
    code: string,
  ): Promise<{ error: string; message: string }> {
    const before = await getPlacements(running());
    const body = expectError(await inject(options), status, code);
    expect(await getPlacements(running())).toEqual(before);
    return body;
  }
  const rejectedPlacement = (payload: unknown, status: number, code: string) =>
    expectRejected(
      { method: 'POST', url: `${COUNTER}/placements`, payload: payload as Record<string, unknown> },
      status,
      code,
    );

  beforeAll(async () => {
    node = await startTestNode();
  });
  afterAll(() => stopAll([node]));

  beforeEach(async () => {
    await clearPlacements(running());
    // A baseline pin, so "nothing changed" is checked against a non-empty store.
    expect((await setPlacements({ shardId: 500, target: running().address.toString() })).statusCode).toBe(202);
  });

  return { node: running, inject, post, setPlacements, expectRejected, rejectedPlacement };
}
