// A persistent (immutable) map from non-negative safe integers to values: a 32-way trie whose updates copy
// only the path to the changed key, so a new snapshot costs O(changed keys), not O(size), and the old
// snapshot stays valid. Iterates in ascending key order.

const BITS = 5;
const WIDTH = 1 << BITS;

// Level 0 arrays hold values; higher levels hold child arrays. Arrays are never mutated once published.
type Node = ReadonlyArray<unknown>;

export class IntMap<V extends {}> implements ReadonlyMap<number, V> {
  private constructor(
    private readonly root: Node | undefined,
    // The root covers keys below WIDTH ** (height + 1).
    private readonly height: number,
    readonly size: number,
  ) {}

  static empty<V extends {}>(): IntMap<V> {
    return new IntMap<V>(undefined, 0, 0);
  }

  get(key: number): V | undefined {
    if (!isKey(key) || key >= capacity(this.height)) return undefined;
    let node = this.root;
    for (let level = this.height; level > 0 && node !== undefined; level--) {
      node = node[digit(key, level)] as Node | undefined;
    }
    return node === undefined ? undefined : (node[digit(key, 0)] as V | undefined);
  }

  has(key: number): boolean {
    return this.get(key) !== undefined;
  }

  /** A map with `key` set to `value` (or without `key` when `value` is undefined); `this` when nothing changes. */
  with(key: number, value: V | undefined): IntMap<V> {
    if (!isKey(key)) throw new RangeError(`IntMap keys are non-negative safe integers, got ${String(key)}`);
    const previous = this.get(key);
    if (previous === value) return this;
    if (value === undefined) {
      const root = remove(this.root as Node, key, this.height);
      return new IntMap<V>(root, root === undefined ? 0 : this.height, this.size - 1);
    }
    let root = this.root;
    let height = this.height;
    while (key >= capacity(height)) {
      if (root !== undefined) root = placed([], 0, root);
      height++;
    }
    return new IntMap<V>(insert(root, key, height, value), height, previous === undefined ? this.size + 1 : this.size);
  }

  forEach(callback: (value: V, key: number, map: ReadonlyMap<number, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }

  *entries(): MapIterator<[number, V]> {
    if (this.root !== undefined) yield* walk<V>(this.root, this.height, 0);
  }

  *keys(): MapIterator<number> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[number, V]> {
    return this.entries();
  }
}

function isKey(key: number): boolean {
  return Number.isSafeInteger(key) && key >= 0;
}

function capacity(height: number): number {
  return WIDTH ** (height + 1);
}

// Shard ids are small: bit operators for keys below 2^31 (the hot path of every lookup), and division by a
// power of two, exact in doubles, above that where bit operators would truncate.
function digit(key: number, level: number): number {
  if (key <= 0x7fffffff) {
    const shift = level * BITS;
    // A shift count of 32 or more wraps in JavaScript; such a level's digit of a small key is 0.
    return shift > 30 ? 0 : (key >>> shift) & (WIDTH - 1);
  }
  return Math.floor(key / WIDTH ** level) % WIDTH;
}

function placed(node: Node, index: number, value: unknown): Node {
  const copy = node.slice();
  while (copy.length < WIDTH) copy.push(undefined);
  copy[index] = value;
  return copy;
}

function insert(node: Node | undefined, key: number, level: number, value: unknown): Node {
  const here = node ?? [];
  const index = digit(key, level);
  if (level === 0) return placed(here, index, value);
  return placed(here, index, insert(here[index] as Node | undefined, key, level - 1, value));
}

function remove(node: Node, key: number, level: number): Node | undefined {
  const index = digit(key, level);
  const child = level === 0 ? undefined : remove(node[index] as Node, key, level - 1);
  const copy = placed(node, index, child);
  return copy.every((slot) => slot === undefined) ? undefined : copy;
}

function* walk<V>(node: Node, level: number, base: number): Generator<[number, V], undefined, unknown> {
  const step = WIDTH ** level;
  for (let i = 0; i < node.length; i++) {
    const slot = node[i];
    if (slot === undefined) continue;
    if (level === 0) yield [base + i, slot as V];
    else yield* walk<V>(slot as Node, level - 1, base + i * step);
  }
  return undefined;
}
