// The plain placement map both gossip baselines carry: shard -> [target, wallMs, node], merged per key by
// wall-clock timestamp then node name (last writer wins, no HLC), serialised as compact JSON.
import type { Stamp } from './types.js';

export type Entry = readonly [target: string, wallMs: number, node: string];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class LwwMap {
  readonly entries = new Map<number, Entry>();
  private cached: Uint8Array | undefined;

  /** A local write; it loses (locally too) to a stored entry with a later timestamp, as LWW must. */
  write(shardId: number, target: string, wallMs: number, node: string): Entry {
    const entry: Entry = [target, wallMs, node];
    this.mergeEntry(shardId, entry);
    return entry;
  }

  /** Merges one entry; true when it replaced what was stored. */
  mergeEntry(shardId: number, entry: Entry): boolean {
    const current = this.entries.get(shardId);
    if (current !== undefined && !newer(entry, current)) return false;
    this.entries.set(shardId, entry);
    this.cached = undefined;
    return true;
  }

  /** Merges a whole remote map: the changed shards, and whether the remote lacked something we hold. */
  mergeAll(remote: ReadonlyMap<number, Entry>): { changed: number[]; remoteIsBehind: boolean } {
    const changed: number[] = [];
    for (const [shardId, entry] of remote) if (this.mergeEntry(shardId, entry)) changed.push(shardId);
    let remoteIsBehind = false;
    for (const [shardId, entry] of this.entries) {
      const theirs = remote.get(shardId);
      if (theirs === undefined || newer(entry, theirs)) {
        remoteIsBehind = true;
        break;
      }
    }
    return { changed, remoteIsBehind };
  }

  /**
   * The full state as JSON bytes in shard order (canonical, so equal maps hash equal), re-serialised only
   * after a change: a fair implementation caches it.
   */
  serialize(): Uint8Array {
    this.cached ??= encoder.encode(JSON.stringify([...this.entries].sort((a, b) => a[0] - b[0])));
    return this.cached;
  }

  read(shardId: number): string | undefined {
    return this.entries.get(shardId)?.[0];
  }

  stamp(shardId: number): Stamp | undefined {
    const entry = this.entries.get(shardId);
    return entry === undefined ? undefined : { wallMs: entry[1], counter: 0, node: entry[2] };
  }
}

export function parseEntries(bytes: Uint8Array): Map<number, Entry> {
  return new Map(JSON.parse(decoder.decode(bytes)) as Array<[number, Entry]>);
}

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(decoder.decode(bytes));
}

function newer(a: Entry, b: Entry): boolean {
  return a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2];
}

/** One byte of message kind in front of a payload, so a baseline can ride on PlacementUpdate messages. */
export function frame(kind: number, payload: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(payload.length + 1);
  bytes[0] = kind;
  bytes.set(payload, 1);
  return bytes;
}
