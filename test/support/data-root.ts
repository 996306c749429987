// Test set-up for the tests of nodes with a data directory: one temporary root for a file's data directories,
// and the nodes started on them, all stopped and the root removed after the file's tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { startTestNode, stopAll } from '../management/node-fixture.js';

/** Registers the clean-up in the enclosing file or block; `prefix` names the temporary root. */
export function useDataRoot(prefix: string) {
  const root = mkdtempSync(join(tmpdir(), prefix));
  /** Nodes to stop after the tests; a test adds the ones it starts itself. */
  const started: RunningNode[] = [];
  afterAll(async () => {
    await stopAll(started);
    rmSync(root, { recursive: true, force: true });
  });
  /** The data directory `name` under the root. */
  const dir = (name: string): string => join(root, name);
  /** Starts a test node on the data directory `name`; it is stopped after the tests. */
  async function start(name: string): Promise<RunningNode> {
    const node = await startTestNode({ dataDir: dir(name) });
    started.push(node);
    return node;
  }
  return { started, dir, start };
}
