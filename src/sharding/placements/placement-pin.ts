// One shard's pin as the external strategy reads it: a parsed target, the mode and the expiry. Built once
// per stored placement (explicit-placement-state.ts), so allocate looks a shard's pin up in O(1) and never
// parses. A bare NodeAddress still reads as a pin: a prefer pin to that node, never expiring.
import { NodeAddress } from '../../cluster/address.js';
import type { PlacementMode } from './placement-options.js';
import { parsePlacementTarget, type PlacementTarget } from './placement-target.js';

/** One shard's pin as the external strategy reads it: a parsed target, the mode and the expiry. */
export class PlacementPin {
  constructor(
    readonly target: PlacementTarget,
    readonly mode: PlacementMode = 'prefer',
    /** Epoch milliseconds from which the pin no longer steers allocation; null for never. */
    readonly expiresAt: number | null = null,
  ) {}

  /** A pin from a target in any accepted form; throws as parsePlacementTarget. */
  static of(
    target: string | NodeAddress,
    options: { mode?: PlacementMode; expiresAt?: number | null } = {},
  ): PlacementPin {
    return new PlacementPin(parsePlacementTarget(target), options.mode ?? 'prefer', options.expiresAt ?? null);
  }

  isActive(now: number): boolean {
    return this.expiresAt === null || now < this.expiresAt;
  }

  /** The canonical target, as stored and listed. */
  toString(): string {
    return this.target.canonical;
  }

  toJSON(): string {
    return this.target.canonical;
  }
}

/** What ExternalAllocationState may hold per shard. */
export type PinLike = PlacementPin | NodeAddress;

/**
 * What externalAllocationStrategy reads on every call: the pins in force (`ClusterSharding.placementState(type)`
 * provides it).
 */
export interface ExternalAllocationState {
  /**
   * Pins by shard, looked up in O(1) per allocate. A PlacementPin carries target, mode and expiry; a bare
   * NodeAddress is a prefer pin to that node that never expires.
   */
  readonly explicitPlacements: ReadonlyMap<number, PinLike>;
}

// NodeAddress values are immutable, so their pin can be shared.
const addressPins = new WeakMap<NodeAddress, PlacementPin>();

/** The pin a PinLike stands for; a bare NodeAddress becomes a prefer pin to it (shared, as addresses are immutable). */
export function asPin(value: PinLike): PlacementPin {
  if (value instanceof PlacementPin) return value;
  let pin = addressPins.get(value);
  if (pin === undefined) {
    pin = new PlacementPin(parsePlacementTarget(value));
    addressPins.set(value, pin);
  }
  return pin;
}

/** The pin in force at `now`, or undefined (none, or expired). */
export function activePin(value: PinLike | undefined, now: number): PlacementPin | undefined {
  if (value === undefined) return undefined;
  const pin = asPin(value);
  return pin.isActive(now) ? pin : undefined;
}
