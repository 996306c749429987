// What every replicated-placement implementation under test looks like to a scenario: write on one node,
// read what that node's allocation strategy would see, be told when that changes.
import type { NodeAddress } from '../../src/cluster/address.js';
import type { Transport } from '../../src/cluster/transport/transport.js';
import type { VirtualClock } from '../lib/virtual-clock.js';

/** A write's timestamp as the implementation orders it: wallMs, then counter, then node. */
export interface Stamp {
  readonly wallMs: number;
  readonly counter: number;
  readonly node: string;
}

export interface SimContext {
  readonly clock: VirtualClock;
  readonly transport: Transport;
  readonly self: NodeAddress;
  readonly all: readonly NodeAddress[];
  /** Seeded per node: peer choice and timer phases. */
  readonly random: () => number;
  /** This node's wall clock in ms (simulated time plus an epoch and the node's skew). */
  readonly now: () => number;
}

export interface SimNode {
  write(shardId: number, target: string): Stamp;
  /** The shard's target as this node's allocation strategy sees it now. */
  read(shardId: number): string | undefined;
  /** The timestamp of the value `read` returns. */
  stamp(shardId: number): Stamp | undefined;
  onChange(listener: (shardIds: readonly number[]) => void): void;
  close(): void;
}

export interface Protocol {
  readonly id: string;
  readonly label: string;
  /** Opaque initial state holding `entries`, loaded into every node before it starts talking. */
  preload(entries: ReadonlyArray<readonly [number, string]>, now: () => number): unknown;
  create(context: SimContext, preloaded: unknown): SimNode;
}

export const TYPE_NAME = 'Counter';

export function compareStamps(a: Stamp, b: Stamp): number {
  if (a.wallMs !== b.wallMs) return a.wallMs < b.wallMs ? -1 : 1;
  if (a.counter !== b.counter) return a.counter < b.counter ? -1 : 1;
  return a.node === b.node ? 0 : a.node < b.node ? -1 : 1;
}
