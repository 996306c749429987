// Browser side of the console: the layout of a type's shard map as pure data. Every shard id is one cell of a
// grid 50 wide (1000 shards make 20 rows, which a laptop screen shows whole), coloured by the node hosting it.

import { isWaiting } from './insight.js';
import { compareAddresses, hostSatisfies, hosts, type MemberJson, type PinRecord, type TypeView } from './model.js';

export const GRID_COLUMNS = 50;
/** Beyond this many cells the map stops drawing: the page must stay responsive for any type. */
export const MAX_GRID_CELLS = 10_000;
/** Distinct node colours in the stylesheet (`.host-0` ... `.host-9`); more nodes reuse them in order. */
export const NODE_COLOURS = 10;

export interface GridCell {
  readonly shardId: number;
  /** The node hosting it, absent when it is not allocated. */
  readonly host?: string;
  readonly pin?: PinRecord;
  readonly handingOff: boolean;
  /** Pinned and hosted, but not on a node its pin's target names or (a selector) matches. */
  readonly misplaced: boolean;
  /** A require pin no live member satisfies and no home: the shard waits (asks to it fail). */
  readonly waiting: boolean;
}

export interface GridLayout {
  /** Rows of at most GRID_COLUMNS cells, shard ids in order from 0. */
  readonly rows: ReadonlyArray<readonly GridCell[]>;
  /** How many shard ids the grid covers. */
  readonly extent: number;
  /** Whether `extent` is the type's declared shard count (else: the rows up to the highest shard id seen). */
  readonly declared: boolean;
  /** Allocated or pinned shards past MAX_GRID_CELLS, not drawn. */
  readonly beyond: number;
  readonly allocated: number;
  readonly pinned: number;
}

/**
 * The cells of a type's map. Without a declared shard count the grid covers whole rows up to the highest id
 * allocated or pinned, so it grows as shards are allocated.
 */
export function gridLayout(
  view: TypeView,
  declaredShards: number | undefined,
  members: readonly MemberJson[] = [],
): GridLayout {
  const hostOf = hosts(view.locations);
  const pins = new Map((view.placements ?? []).map((pin) => [pin.shardId, pin] as const));
  const handingOff = new Set(view.locations?.handingOff ?? []);
  let highest = -1;
  for (const id of [...hostOf.keys(), ...pins.keys()]) highest = Math.max(highest, id);
  // Up to a whole row: the ids that could exist past the highest one seen are part of the picture.
  const wanted = declaredShards ?? Math.ceil((highest + 1) / GRID_COLUMNS) * GRID_COLUMNS;
  const extent = Math.min(wanted, MAX_GRID_CELLS);
  let beyond = 0;
  for (const id of new Set([...hostOf.keys(), ...pins.keys()])) if (id >= extent) beyond += 1;
  const rows: GridCell[][] = [];
  for (let start = 0; start < extent; start += GRID_COLUMNS) {
    const row: GridCell[] = [];
    for (let shardId = start; shardId < Math.min(start + GRID_COLUMNS, extent); shardId += 1) {
      const host = hostOf.get(shardId);
      const pin = pins.get(shardId);
      row.push({
        shardId,
        ...(host !== undefined ? { host } : {}),
        ...(pin !== undefined ? { pin } : {}),
        handingOff: handingOff.has(shardId),
        misplaced: pin !== undefined && host !== undefined && !hostSatisfies(pin, host, members),
        waiting: pin !== undefined && isWaiting(pin, hostOf, members),
      });
    }
    rows.push(row);
  }
  return { rows, extent, declared: declaredShards !== undefined, beyond, allocated: hostOf.size, pinned: pins.size };
}

/**
 * A colour index per node address: members and hosting regions together in address order, so every node keeps
 * its colour across refreshes and across the nodes table and the maps.
 */
export function nodeColours(addresses: Iterable<string>): Map<string, number> {
  const sorted = [...new Set(addresses)].sort(compareAddresses);
  return new Map(sorted.map((address, index) => [address, index % NODE_COLOURS] as const));
}
