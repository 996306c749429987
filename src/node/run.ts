// Runs one node until it is told to stop: the CLI's `node` command. When the cluster downs or removes the
// node it stops for good, unless `restartOnRemoval` asks for a new incarnation in the same process.
import { createLogger, type Logger } from '../logging.js';
import { resolveNodeConfig } from './config.js';
import { START_NODE_KEYS, startNode, type StartNodeInput } from './node.js';
import type { RunningNode, StopReason } from './running-node.js';

/** Options of runNode. */
export interface RunNodeOptions {
  /** Aborting stops the current node gracefully (leave, then close) and ends the run; no restart follows. */
  readonly signal?: AbortSignal;
  readonly logger?: Logger;
  /** Called with every started incarnation (the first and each restart). */
  readonly onStarted?: (node: RunningNode) => void;
}

/** Resolves with how the last incarnation stopped: 'left' after the signal, else 'downed' or 'removed'. */
export async function runNode(input: StartNodeInput, options: RunNodeOptions = {}): Promise<StopReason> {
  const { entityTypes, httpRoutes, handleSignals: _signals, ...settings } = input;
  const config = resolveNodeConfig(settings, START_NODE_KEYS);
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  for (let incarnation = 1; ; incarnation++) {
    const node = await startNode(
      {
        ...config,
        ...(entityTypes === undefined ? {} : { entityTypes }),
        ...(httpRoutes === undefined ? {} : { httpRoutes }),
      },
      { logger },
    );
    options.onStarted?.(node);
    const onAbort = (): void => void node.stop();
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const how = await node.stopped;
    options.signal?.removeEventListener('abort', onAbort);
    if (how === 'left' || !config.restartOnRemoval || options.signal?.aborted) return how;
    logger.warn(
      { node: node.address.toString(), stoppedBecause: how, incarnation: incarnation + 1 },
      'restarting as a new incarnation (restartOnRemoval)',
    );
  }
}
