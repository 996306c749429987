import { parsePlacementTarget } from './placement-target.js';
/** One shard's pin as the external strategy reads it: a parsed target, the mode and the expiry. */
export class PlacementPin {
    target;
    mode;
    expiresAt;
    constructor(target, mode = 'prefer', 
    /** Epoch milliseconds from which the pin no longer steers allocation; null for never. */
    expiresAt = null) {
        this.target = target;
        this.mode = mode;
        this.expiresAt = expiresAt;
    }
    /** A pin from a target in any accepted form; throws as parsePlacementTarget. */
    static of(target, options = {}) {
        return new PlacementPin(parsePlacementTarget(target), options.mode ?? 'prefer', options.expiresAt ?? null);
    }
    isActive(now) {
        return this.expiresAt === null || now < this.expiresAt;
    }
    /** The canonical target, as stored and listed. */
    toString() {
        return this.target.canonical;
    }
    toJSON() {
        return this.target.canonical;
    }
}
// NodeAddress values are immutable, so their pin can be shared.
const addressPins = new WeakMap();
/** The pin a PinLike stands for; a bare NodeAddress becomes a prefer pin to it (shared, as addresses are immutable). */
export function asPin(value) {
    if (value instanceof PlacementPin)
        return value;
    let pin = addressPins.get(value);
    if (pin === undefined) {
        pin = new PlacementPin(parsePlacementTarget(value));
        addressPins.set(value, pin);
    }
    return pin;
}
/** The pin in force at `now`, or undefined (none, or expired). */
export function activePin(value, now) {
    if (value === undefined)
        return undefined;
    const pin = asPin(value);
    return pin.isActive(now) ? pin : undefined;
}
//# sourceMappingURL=placement-pin.js.map