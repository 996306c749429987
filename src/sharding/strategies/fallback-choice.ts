// The fallback strategies a node can be started with under its pins, by name (`node --fallback ring`): one
// place that maps a name from configuration to a strategy, so the CLI, the node config and a future
// per-entity-type setting agree on the names and on what each one builds.
import type { ClusterView } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';
import type { AllocationStrategy } from './allocation-strategy.js';
import { HashAllocationStrategy } from './hash.js';
import { LeastShardAllocationStrategy } from './least-shard.js';
import { RingAllocationStrategy } from './ring.js';

/** The names, the default first. */
export const FALLBACK_STRATEGIES = ['least-shard', 'ring', 'hash'] as const;

/** The name of a built-in fallback strategy, as `node --fallback` and `NodeConfig.fallback` take it. */
export type FallbackStrategyName = (typeof FALLBACK_STRATEGIES)[number];

/** Whether `value` names a built-in fallback strategy (for untyped configuration). */
export function isFallbackStrategyName(value: unknown): value is FallbackStrategyName {
  return typeof value === 'string' && (FALLBACK_STRATEGIES as readonly string[]).includes(value);
}

/** Throws invalid_argument naming the choices: the name may come from untyped configuration (JSON, a caller's object). */
export function requireFallbackStrategyName(value: unknown): asserts value is FallbackStrategyName {
  if (!isFallbackStrategyName(value)) {
    throw new ActorTsError(
      'invalid_argument',
      `fallback must be one of ${FALLBACK_STRATEGIES.join(', ')}, got ${String(value)}`,
    );
  }
}

/**
 * A new strategy of that name with its defaults, reading `cluster` for member facts; throws on another name.
 * `numberOfShards` is the entity type's shard range, which the ring assigns as a whole (default 1000).
 */
export function fallbackStrategy(
  name: FallbackStrategyName,
  cluster: ClusterView | undefined,
  numberOfShards?: number,
): AllocationStrategy {
  requireFallbackStrategyName(name);
  const options = cluster === undefined ? {} : { cluster };
  switch (name) {
    case 'least-shard':
      return new LeastShardAllocationStrategy(options);
    case 'ring':
      return new RingAllocationStrategy(numberOfShards === undefined ? options : { ...options, numberOfShards });
    case 'hash':
      return new HashAllocationStrategy();
  }
}
