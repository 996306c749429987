// The seam explain and dry runs read a pin-honouring strategy through: the pins, cluster view and clock it
// decides by right now, and the same strategy over other pins. Explain and dry runs call the matching code
// of pin-matching.ts with exactly these, so their answers cannot drift from what allocation does.
import type { AllocationStrategy } from './allocation-strategy.js';
import type { WarningSink } from './external-warnings.js';
import type { ClusterReading } from './pin-matching.js';
import type { PinLike } from '../placements/placement-pin.js';

/** What a pin-honouring strategy decides by, read once. */
export interface PinContext {
  readonly pins: ReadonlyMap<number, PinLike>;
  readonly view: ClusterReading;
  /** The strategy's clock reading (epoch ms): pins expire by it. */
  readonly now: number;
}

export interface PinAwareStrategy extends AllocationStrategy {
  pinContext(): PinContext;
  /**
   * The same strategy (same fallback, view and clock) deciding by `pins` instead, its warnings going to
   * `onWarning` only: a dry run writes nothing, logs nothing, and leaves this strategy's state alone.
   */
  withPins(pins: ReadonlyMap<number, PinLike>, onWarning: WarningSink): AllocationStrategy;
}

export function isPinAware(strategy: AllocationStrategy): strategy is PinAwareStrategy {
  const candidate = strategy as Partial<PinAwareStrategy>;
  return typeof candidate.pinContext === 'function' && typeof candidate.withPins === 'function';
}
