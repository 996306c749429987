// A small seeded pseudo-random generator (mulberry32) so fault injection and gossip peer choice are
// reproducible in tests: the same seed gives the same drops, duplicates and delays on every run.
/** Returns a function yielding floats in [0, 1), fully determined by `seed`. */
export function seededRandom(seed) {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
//# sourceMappingURL=random.js.map