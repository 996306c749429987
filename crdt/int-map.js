// A persistent (immutable) map from non-negative safe integers to values: a 32-way trie whose updates copy
// only the path to the changed key, so a new snapshot costs O(changed keys), not O(size), and the old
// snapshot stays valid. Iterates in ascending key order.
const BITS = 5;
const WIDTH = 1 << BITS;
export class IntMap {
    root;
    height;
    size;
    constructor(root, 
    // The root covers keys below WIDTH ** (height + 1).
    height, size) {
        this.root = root;
        this.height = height;
        this.size = size;
    }
    static empty() {
        return new IntMap(undefined, 0, 0);
    }
    get(key) {
        if (!isKey(key) || key >= capacity(this.height))
            return undefined;
        let node = this.root;
        for (let level = this.height; level > 0 && node !== undefined; level--) {
            node = node[digit(key, level)];
        }
        return node === undefined ? undefined : node[digit(key, 0)];
    }
    has(key) {
        return this.get(key) !== undefined;
    }
    /** A map with `key` set to `value` (or without `key` when `value` is undefined); `this` when nothing changes. */
    with(key, value) {
        if (!isKey(key))
            throw new RangeError(`IntMap keys are non-negative safe integers, got ${String(key)}`);
        const previous = this.get(key);
        if (previous === value)
            return this;
        if (value === undefined) {
            const root = remove(this.root, key, this.height);
            return new IntMap(root, root === undefined ? 0 : this.height, this.size - 1);
        }
        let root = this.root;
        let height = this.height;
        while (key >= capacity(height)) {
            if (root !== undefined)
                root = placed([], 0, root);
            height++;
        }
        return new IntMap(insert(root, key, height, value), height, previous === undefined ? this.size + 1 : this.size);
    }
    forEach(callback, thisArg) {
        for (const [key, value] of this.entries())
            callback.call(thisArg, value, key, this);
    }
    *entries() {
        if (this.root !== undefined)
            yield* walk(this.root, this.height, 0);
    }
    *keys() {
        for (const [key] of this.entries())
            yield key;
    }
    *values() {
        for (const [, value] of this.entries())
            yield value;
    }
    [Symbol.iterator]() {
        return this.entries();
    }
}
function isKey(key) {
    return Number.isSafeInteger(key) && key >= 0;
}
function capacity(height) {
    return WIDTH ** (height + 1);
}
// Shard ids are small: bit operators for keys below 2^31 (the hot path of every lookup), and division by a
// power of two, exact in doubles, above that where bit operators would truncate.
function digit(key, level) {
    if (key <= 0x7fffffff) {
        const shift = level * BITS;
        // A shift count of 32 or more wraps in JavaScript; such a level's digit of a small key is 0.
        return shift > 30 ? 0 : (key >>> shift) & (WIDTH - 1);
    }
    return Math.floor(key / WIDTH ** level) % WIDTH;
}
function placed(node, index, value) {
    const copy = node.slice();
    while (copy.length < WIDTH)
        copy.push(undefined);
    copy[index] = value;
    return copy;
}
function insert(node, key, level, value) {
    const here = node ?? [];
    const index = digit(key, level);
    if (level === 0)
        return placed(here, index, value);
    return placed(here, index, insert(here[index], key, level - 1, value));
}
function remove(node, key, level) {
    const index = digit(key, level);
    const child = level === 0 ? undefined : remove(node[index], key, level - 1);
    const copy = placed(node, index, child);
    return copy.every((slot) => slot === undefined) ? undefined : copy;
}
function* walk(node, level, base) {
    const step = WIDTH ** level;
    for (let i = 0; i < node.length; i++) {
        const slot = node[i];
        if (slot === undefined)
            continue;
        if (level === 0)
            yield [base + i, slot];
        else
            yield* walk(slot, level - 1, base + i * step);
    }
    return undefined;
}
//# sourceMappingURL=int-map.js.map