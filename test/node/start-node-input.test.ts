// What startNode takes (issue 39): a key no setting has is refused with `invalid_argument` naming it and the
// nearest known setting, before anything is opened; `handleSignals: true` leaves the cluster on SIGTERM in a real
// child process, which then exits by itself.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNode, type StartNodeInput } from '../../src/node/node.js';
import { ROOT, requireBuild } from '../e2e/harness.js';
import { poll } from '../support/poll.js';

async function refusal(input: Record<string, unknown>): Promise<{ code?: string; message: string }> {
  const start = startNode({ port: 0, http: { port: 0 }, logLevel: 'silent', ...input } as StartNodeInput);
  return start.then(
    async (node) => {
      await node.stop();
      throw new Error(`started with ${JSON.stringify(input)}`);
    },
    (error: { code?: string; message: string }) => error,
  );
}

describe('startNode input', () => {
  it('refuses a key no setting has, naming the nearest known one', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ httpPort: 9000 }, /no setting "httpPort"; did you mean "http\.port"\?/],
      [{ http: { prot: 9000 } }, /no setting "http\.prot"; did you mean "http\.port"\?/],
      [{ entityType: [] }, /no setting "entityType"; did you mean "entityTypes"\?/],
      [{ dataDirectory: '/tmp/x' }, /no setting "dataDirectory"; did you mean "dataDir"\?/],
      [{ zzzzzzzzzzzz: 1 }, /no setting "zzzzzzzzzzzz"$/],
    ];
    for (const [input, message] of cases) {
      const error = await refusal(input);
      expect([error.code, error.message], JSON.stringify(input)).toEqual([
        'invalid_argument',
        expect.stringMatching(message),
      ]);
    }
  });

  it('with handleSignals, SIGTERM makes the node leave and the process exit by itself', async () => {
    requireBuild();
    const child = spawn(process.execPath, [join(ROOT, 'test', 'node', 'fixtures', 'signal-node.mjs')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = once(child, 'exit');
    await poll('the embedded node to start', () => out.includes('started '), { timeoutMs: 20_000 });
    child.kill('SIGTERM');
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect({ code, signal, out: out.trim().split('\n').at(-1) }).toEqual({
      code: 0,
      signal: null,
      out: 'stopped: left',
    });
  });
});
