// How a running node stops: a graceful leave then its parts closed in order, or (downed or removed by the
// cluster) its parts closed at once; `stopped` says which, once all is closed.
import type { Cluster } from '../cluster/membership/cluster.js';
import type { Logger } from '../logging.js';
import type { StopReason } from './running-node.js';

/**
 * How a node stops: `stop` leaves the cluster gracefully, then closes its parts in order (`closers`, each awaited);
 * downed or removed, it closes them at once. `stopped` resolves with why, once everything is closed.
 */
export function lifecycleOf(
  logger: Logger,
  cluster: Cluster,
  closers: ReadonlyArray<() => unknown>,
): { stop: () => Promise<void>; stopped: Promise<StopReason>; closeAll: () => Promise<void> } {
  let resolveStopped!: (how: StopReason) => void;
  const stopped = new Promise<StopReason>((resolve) => (resolveStopped = resolve));
  let stopping: Promise<void> | undefined;
  const closeAll = async (): Promise<void> => {
    for (const close of closers) await close();
  };
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      logger.info('leaving the cluster');
      await cluster.leave().catch((error: unknown) => logger.warn({ err: String(error) }, 'leave did not complete'));
      await closeAll();
      resolveStopped('left');
    })();
    return stopping;
  };
  // Downed or removed, the node is outside the cluster: it must stop hosting at once (its shards run
  // elsewhere) and stop taking requests. Both take the same path; a graceful leave, which also ends in
  // removal, is already under way in stop() and is left to finish there.
  const putOut = (how: 'downed' | 'removed', why: string): void => {
    if (stopping !== undefined) return;
    logger.error({ stoppedBecause: how }, `${why}; stopping`);
    stopping = closeAll().then(() => resolveStopped(how));
  };
  cluster.onSelfDown((cause) =>
    putOut(
      'downed',
      cause === 'minority-side'
        ? 'this node downed itself: it was on the minority side of a partition'
        : 'this node was downed by the cluster',
    ),
  );
  cluster.onSelfRemoved(() => putOut('removed', 'this node was removed from the cluster by the other members'));
  return { stop, stopped, closeAll };
}
