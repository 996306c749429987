// A throwaway PostgreSQL server for the durable entity tests and S16: Debian's server binaries (postgresql-15,
// installed by `npm test`'s provisioning when missing), a cluster made with initdb in a temporary directory,
// run as the unprivileged `postgres` user (the server refuses root) on a free loopback port with trust
// authentication. It can be stopped and started again on the same data (an outage under load). Nothing here
// imports vitest: bench/ uses it too.
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './ports.js';

const PG_ROOT = '/usr/lib/postgresql';

/** The server binaries' directory; throws saying how to install them when they are missing. */
export function postgresBin(): string {
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const bin = join(PG_ROOT, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  throw new Error(
    `PostgreSQL server binaries not found under ${PG_ROOT}: the durable entity tests need a real server ` +
      '(npm test installs postgresql-15 as root; by hand: apt-get install -y postgresql-15)',
  );
}

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly port: number;
  /** Stops the server (`fast`: sessions ended, a clean shutdown; `immediate`: as a crash). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again on the same data and port. */
  start(): void;
  /** Stops it and removes its directory. */
  destroy(): void;
}

/** Makes and starts a fresh server; throws naming the step that failed (with its output). */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin();
  const root = mkdtempSync(join(tmpdir(), 'actor-ts-pg-'));
  const data = join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const owner = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (owner.status !== 0) throw new Error('the postgres system user is missing (it comes with postgresql-15)');
    chownSync(root, Number(owner.stdout.trim()), Number(group.stdout.trim()));
  }
  const run = (command: string, args: string[]): void => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]]
      : [join(bin, command), args];
    const result = spawnSync(file, argv, { encoding: 'utf8', cwd: root });
    if (result.status !== 0)
      throw new Error(`${command} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`);
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const [port] = (await freePorts(1)) as [number];
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  const start = (): void => run('pg_ctl', ['-D', data, '-o', options, '-l', join(root, 'server.log'), '-w', 'start']);
  const stop = (mode: 'fast' | 'immediate' = 'fast'): void => run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  start();
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: (mode) => {
      stop(mode);
      running = false;
    },
    start: () => {
      start();
      running = true;
    },
    destroy: () => {
      if (running) stop('immediate');
      running = false;
      rmSync(root, { recursive: true, force: true });
    },
  };
}
