// The consistent-hash ring the ring strategy places by: every node at `virtualNodes` points of a 32-bit
// circle, a shard at one point, its ring home the owner of the first node point at or after it. Pure
// arithmetic on the node keys (`system@host:port`, no incarnation), so every process, in every run, builds
// the same ring from the same member set, whatever order the members come in.
import { compareStrings } from './allocation-strategy.js';
/** Memoised shard starts per ring at most (more shards than this are looked up again, never kept). */
const MAX_MEMO = 1 << 20;
export function buildRing(keys, virtualNodes) {
    const sorted = [...new Set(keys)].sort(compareStrings);
    const count = sorted.length * virtualNodes;
    const order = new Array(count);
    const positions = new Uint32Array(count);
    for (let owner = 0; owner < sorted.length; owner++) {
        const key = sorted[owner];
        for (let v = 0; v < virtualNodes; v++) {
            const i = owner * virtualNodes + v;
            positions[i] = hashString(`${key}#${v}`);
            order[i] = i;
        }
    }
    // Equal positions (rare) are ordered by owner, i.e. by key: still a function of the member set alone.
    order.sort((a, b) => positions[a] - positions[b] || a - b);
    const points = new Uint32Array(count);
    const owners = new Uint32Array(count);
    for (let i = 0; i < count; i++) {
        const at = order[i];
        points[i] = positions[at];
        owners[i] = Math.floor(at / virtualNodes);
    }
    return {
        keys: sorted,
        indexOf: new Map(sorted.map((key, i) => [key, i])),
        points,
        owners,
        starts: new Map(),
        asked: new Uint32Array(sorted.length),
        walks: 0,
    };
}
/** Index of the first point at or after `position`, wrapping to 0 past the last. The ring must not be empty. */
export function firstPointFrom(ring, position) {
    const { points } = ring;
    let lo = 0;
    let hi = points.length;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (points[mid] < position)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo === points.length ? 0 : lo;
}
/** The index of the shard's first point (memoised). */
export function startPoint(ring, shardId) {
    let start = ring.starts.get(shardId);
    if (start === undefined) {
        start = firstPointFrom(ring, shardPosition(shardId));
        if (ring.starts.size < MAX_MEMO)
            ring.starts.set(shardId, start);
    }
    return start;
}
/** The owner number of the shard's ring home (no load considered). */
export function ringHome(ring, shardId) {
    return ring.owners[startPoint(ring, shardId)];
}
/**
 * Walks the ring clockwise from the shard's point and returns the first owner `open` accepts, each owner
 * asked once; undefined when none does.
 */
export function firstOpenOwner(ring, shardId, open) {
    const { owners, keys, asked } = ring;
    const total = owners.length;
    if (total === 0)
        return undefined;
    if (ring.walks === 0xffffffff) {
        asked.fill(0);
        ring.walks = 0;
    }
    const walk = ++ring.walks;
    let left = keys.length;
    let at = startPoint(ring, shardId);
    for (let step = 0; step < total && left > 0; step++, at = at + 1 === total ? 0 : at + 1) {
        const owner = owners[at];
        if (asked[owner] === walk)
            continue;
        if (open(owner))
            return owner;
        asked[owner] = walk;
        left--;
    }
    return undefined;
}
/** A shard's point: its id (a safe integer) mixed as two 32-bit halves. */
export function shardPosition(shardId) {
    const low = shardId >>> 0;
    const high = Math.floor(shardId / 0x1_0000_0000) >>> 0;
    return mix32((low ^ mix32(high + 0x9e3779b9)) >>> 0);
}
/** FNV-1a over UTF-16 code units, then murmur3's finalizer: FNV alone clusters short similar keys. */
export function hashString(text) {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) {
        h ^= text.charCodeAt(i);
        h = Math.imul(h, 0x01000193);
    }
    return mix32(h >>> 0);
}
function mix32(value) {
    let h = value;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
}
//# sourceMappingURL=hash-ring.js.map