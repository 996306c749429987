// Real nodes of the CLI (`actor-ts-placement node`): the command line that starts one on loopback, and the
// wait until started nodes have formed one cluster (each answers and sees exactly the others Up and reachable).
// Shared by the e2e harness and the bench's real-network scenario; nothing here imports vitest.
import { http } from './http.js';
import { poll } from './poll.js';

export interface NodeCommandOptions {
  readonly port: number;
  readonly httpPort: number;
  /** Address of the seed node, e.g. `app@127.0.0.1:7001`, or several (none: the node forms a cluster of one). */
  readonly seed: string | readonly string[];
  readonly logLevel?: string;
  readonly downAfterMs?: number;
  readonly rebalanceIntervalMs?: number;
  readonly compactAfterItems?: number;
  /** `--data-dir`: placements kept on disk across restarts. */
  readonly dataDir?: string;
  /** `--cluster-secret` peers must prove. */
  readonly clusterSecret?: string;
  /** More flags of the `node` command, as given (`--tls-cert FILE`, ...). */
  readonly extraArgs?: readonly string[];
  /** The management API's cap on open connections (`--http-max-connections`; the CLI's default 128). */
  readonly httpMaxConnections?: number;
  /** `--app-version` (the CLI's default: this package's release). */
  readonly appVersion?: string;
}

/** The address a node started by `nodeCommandArgs` answers to. */
export function nodeAddress(port: number): string {
  return `app@127.0.0.1:${port}`;
}

/** Arguments after the CLI's path for one `node` command on 127.0.0.1 in system `app`. */
export function nodeCommandArgs(options: NodeCommandOptions): string[] {
  return [
    'node',
    '--system',
    'app',
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--http-port',
    String(options.httpPort),
    ...(typeof options.seed === 'string' ? [options.seed] : options.seed).flatMap((seed) => ['--seed', seed]),
    '--log-level',
    options.logLevel ?? 'info',
    ...(options.downAfterMs !== undefined ? ['--down-after-ms', String(options.downAfterMs)] : []),
    ...(options.rebalanceIntervalMs !== undefined
      ? ['--rebalance-interval-ms', String(options.rebalanceIntervalMs)]
      : []),
    ...(options.compactAfterItems !== undefined ? ['--compact-after-items', String(options.compactAfterItems)] : []),
    ...(options.dataDir !== undefined ? ['--data-dir', options.dataDir] : []),
    ...(options.clusterSecret !== undefined ? ['--cluster-secret', options.clusterSecret] : []),
    ...(options.httpMaxConnections !== undefined ? ['--http-max-connections', String(options.httpMaxConnections)] : []),
    ...(options.appVersion !== undefined ? ['--app-version', options.appVersion] : []),
    ...(options.extraArgs ?? []),
  ];
}

export interface MembersAnswer {
  readonly self: string;
  readonly members: ReadonlyArray<{ readonly address: string; readonly status: string; readonly reachable: boolean }>;
}

export interface FormedClusterOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Why the start failed for good (a process exited), checked before each probe; undefined while all run. */
  readonly failure?: () => string | undefined;
}

/** Waits until every node at `urls` answers and sees exactly `addresses` as Up and reachable members. */
export async function waitForFormedCluster(
  urls: readonly string[],
  addresses: readonly string[],
  options: FormedClusterOptions,
): Promise<void> {
  const expected = JSON.stringify([...addresses].sort());
  await poll(
    `${urls.length} nodes up and agreeing on membership`,
    async () => {
      const views = await Promise.all(
        urls.map((url) => http<MembersAnswer>('GET', `${url}/actor-ts/cluster/members`, undefined, 2000)),
      );
      return views.every(
        (view) =>
          view.status === 200 &&
          JSON.stringify(
            view.body.members
              .filter((member) => member.status === 'up' && member.reachable)
              .map((member) => member.address)
              .sort(),
          ) === expected,
      );
    },
    {
      timeoutMs: options.timeoutMs,
      intervalMs: options.intervalMs ?? 150,
      ...(options.failure === undefined ? {} : { giveUp: options.failure }),
    },
  );
}
