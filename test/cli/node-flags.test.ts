// The `node` command's cluster flags, parsed in-process: what reaches the node config, and that a bad value or
// a combination the cluster would refuse is a usage error (exit 2, one clear line) before any node starts.
import { describe, expect, it } from 'vitest';
import { resolveClusterConfig } from '../../src/cluster/config.js';
import { clusterFlags, main } from '../../src/cli/main.js';
import type { NodeConfig } from '../../src/node/config.js';

interface NodeRun {
  readonly code: number;
  readonly err: string[];
  /** What the node would have been started with; undefined when none was started. */
  readonly input: Partial<NodeConfig> | undefined;
}

/** Runs `node <args>` through main() with a node runner that records its input instead of starting a node. */
async function runNodeCommand(...args: string[]): Promise<NodeRun> {
  const err: string[] = [];
  let input: Partial<NodeConfig> | undefined;
  const code = await main(
    ['node', 'actor-ts-placement', 'node', ...args],
    { out: () => undefined, err: (line) => err.push(...line.split('\n')) },
    {
      runNode: (given) => {
        input = given;
        return Promise.resolve(0);
      },
    },
  );
  return { code, err, input };
}

describe('node command cluster flags', () => {
  it('passes --down-after-ms, --stable-after-ms and --monitored-by-nr-of-members into the cluster config', async () => {
    const run = await runNodeCommand('--down-after-ms', '3000', '--stable-after-ms', '5000', '--monitored-by-nr-of-members', '4');
    expect(run.code).toBe(0);
    expect(run.input?.cluster).toEqual({ downAfterMs: 3000, stableAfterMs: 5000, monitoredByNrOfMembers: 4 });
    const resolved = resolveClusterConfig(run.input?.cluster);
    expect(resolved).toMatchObject({ downAfterMs: 3000, stableAfterMs: 5000, minorityDownAfterMs: 3750, monitoredByNrOfMembers: 4 });
  });

  it('leaves every cluster setting to its default when no flag is given', async () => {
    const run = await runNodeCommand();
    expect(run.code).toBe(0);
    expect(run.input?.cluster).toEqual({});
    // stableAfterMs follows downAfterMs when only that is given.
    const only = await runNodeCommand('--down-after-ms', '2000');
    expect(only.input?.cluster).toEqual({ downAfterMs: 2000 });
    expect(resolveClusterConfig(only.input?.cluster)).toMatchObject({ stableAfterMs: 2000, monitoredByNrOfMembers: 9 });
  });

  it.each([
    ['--stable-after-ms', 'soon'],
    ['--stable-after-ms', '0'],
    ['--stable-after-ms', '-5'],
    ['--stable-after-ms', '1.5'],
    ['--stable-after-ms', '9'.repeat(400)],
    ['--monitored-by-nr-of-members', '0'],
    ['--monitored-by-nr-of-members', 'nine'],
    ['--monitored-by-nr-of-members', '2.5'],
    ['--down-after-ms', '99999999999999999999'],
  ])('refuses %s %s as a usage error naming the flag, starting no node', async (flag, value) => {
    const run = await runNodeCommand(flag, value);
    expect(run.code).toBe(2);
    expect(run.input).toBeUndefined();
    expect(run.err.join('\n')).toContain(flag);
    expect(run.err.join('\n')).toContain('expected a positive integer');
  });

  it('turns a setting the cluster refuses into a usage error naming the flags, not a stack trace', () => {
    // Values the flag parsers let through never make the cluster refuse today; what the cluster check adds
    // later must still surface this way, so the translation is exercised with a value only it refuses.
    let error: unknown;
    try {
      clusterFlags({ downAfterMs: 1000, stableAfterMs: Number.POSITIVE_INFINITY });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'commander.invalidArgument' });
    const message = (error as Error).message;
    expect(message).toContain('stableAfterMs must be a finite number > 0');
    expect(message).toContain('--down-after-ms 1000 --stable-after-ms Infinity');
    expect(message).not.toContain('\n    at ');
  });
});

describe('node command: secure by default', () => {
  it.each([['10.1.2.3'], ['0.0.0.0'], ['::'], ['node-1.example']])('refuses a cluster port on %s without --cluster-secret, starting no node', async (host) => {
    const run = await runNodeCommand('--host', host);
    expect(run.code).toBe(2);
    expect(run.input).toBeUndefined();
    const err = run.err.join('\n');
    expect(err).toContain(`refusing to start: the cluster port binds to ${host}, not loopback`);
    expect(err).toContain('--cluster-secret');
    expect(err).toContain('--insecure-cluster-port');
  });

  it('starts beyond loopback with --cluster-secret, or when --insecure-cluster-port says so', async () => {
    const secured = await runNodeCommand('--host', '10.1.2.3', '--cluster-secret', 's3cret');
    expect(secured.code).toBe(0);
    expect(secured.input).toMatchObject({ host: '10.1.2.3', clusterSecret: 's3cret' });
    const insecure = await runNodeCommand('--host', '10.1.2.3', '--insecure-cluster-port');
    expect(insecure.code).toBe(0);
    expect(insecure.input).toMatchObject({ host: '10.1.2.3', insecureClusterPort: true });
  });

  it.each([['127.0.0.1'], ['127.3.4.5'], ['localhost'], ['::1']])('starts on loopback %s without a secret', async (host) => {
    const run = await runNodeCommand('--host', host);
    expect(run.code).toBe(0);
    expect(run.input?.clusterSecret).toBeUndefined();
  });
});
