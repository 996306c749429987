// Cordons in the replicated placement store: one last-writer-wins slot per node address under a reserved
// namespace, so they converge, survive the coordinator moving and (with a data directory) a restart, exactly
// like pins. The namespace starts with '@', which no entity type name may (TYPE_NAME_PATTERN), so it never
// collides with a type; everything that lists entity types from the store skips it (isInternalNamespace).
// The slot number is a 48-bit digest of the address and the slot's target is the address itself: a read
// checks both, and a write refuses to reuse a slot another address holds (a digest collision).
import { createHash } from 'node:crypto';
import {
  CodedError,
  MAX_TARGET_LENGTH,
  type Hlc,
  type PlacementSnapshot,
  type PlacementStore,
  type SlotMeta,
} from '../../../crdt/index.js';
import { NodeAddress } from '../../cluster/address.js';
import { ActorTsError } from '../../errors.js';
import type { CordonRecord, CordonView } from './cordon-view.js';
import { validateBy, validateReason } from './placement-options.js';

/** The store namespace the cordons live in. */
export const CORDON_NAMESPACE = '@cordons';

/** True for store namespaces that are not entity types (cordons); every listing of types must skip them. */
export function isInternalNamespace(name: string): boolean {
  return name.startsWith('@');
}

/** The entity types the store holds placements for, without the internal namespaces. */
export function entityTypeNames(store: Pick<PlacementStore, 'typeNames'>): string[] {
  return store.typeNames().filter((name) => !isInternalNamespace(name));
}

export type CordonErrorCode = 'cordon_conflict' | 'unknown_member' | 'not_cordoned' | 'no_capacity';

/** A cordon or drain refused for a reason about the cluster, not the input's shape; nothing was changed. */
export class CordonError extends CodedError<CordonErrorCode> {
  constructor(code: CordonErrorCode, message: string) {
    super(code, message);
    this.name = 'CordonError';
  }
}

/** Who cordons and why; both optional, bounded like a pin's. */
export interface CordonProvenance {
  readonly by?: string;
  readonly reason?: string;
}

/** The slot of an address: the first 48 bits of its SHA-256, a safe integer the same on every node. */
export function cordonSlot(address: string): number {
  return createHash('sha256').update(address, 'utf8').digest().readUIntBE(0, 6);
}

/**
 * The canonical form of a node address to cordon (`system@host:port`; `actor-ts://` accepted). Throws
 * `invalid_address` for anything else, or an address too long to store.
 */
export function cordonAddress(input: unknown): string {
  if (typeof input !== 'string') throw new ActorTsError('invalid_address', 'the address must be a string');
  const address = NodeAddress.parse(input).toString();
  if (address.length > MAX_TARGET_LENGTH) {
    throw new ActorTsError(
      'invalid_address',
      `node address is ${address.length} characters long; a cordon can name at most ${MAX_TARGET_LENGTH}`,
    );
  }
  return address;
}

/** The store-backed CordonView: rebuilt only when the namespace's snapshot changed, so a lookup is O(1). */
export class StoreCordons implements CordonView {
  private source: PlacementSnapshot | undefined;
  private records = new Map<string, CordonRecord & { readonly hlc: Hlc }>();

  constructor(private readonly store: PlacementStore) {}

  isCordoned(address: string): boolean {
    return this.current().has(address);
  }

  list(): readonly CordonRecord[] {
    return [...this.current().values()].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  }

  /** The cordon of one address with the timestamp that decides it, or undefined. */
  get(address: string): (CordonRecord & { readonly hlc: Hlc }) | undefined {
    return this.current().get(address);
  }

  /**
   * Cordons `address` on this replica (it replicates from here). Validates everything first: `invalid_address`,
   * `invalid_placement` for a bad by/reason, `cordon_conflict` when another address holds the slot. Returns
   * what was written. The caller decides whether the address is a member and waits for the replica to be
   * writable and durable.
   */
  write(input: string, provenance: CordonProvenance = {}): CordonRecord & { readonly hlc: Hlc } {
    const address = cordonAddress(input);
    const meta = provenanceMeta(provenance);
    const slot = cordonSlot(address);
    const holder = this.store.snapshot(CORDON_NAMESPACE).placements.get(slot);
    if (holder !== undefined && holder.target !== address) {
      throw new CordonError(
        'cordon_conflict',
        `the cordon slot of ${address} is held by ${holder.target}: uncordon that node first`,
      );
    }
    const written = this.store.set(CORDON_NAMESPACE, slot, address, meta);
    return { address, ...provenance, hlc: written.hlc };
  }

  /** Removes the cordon of `address` (a tombstone that replicates); undefined when it had none (nothing written). */
  remove(input: string): Hlc | undefined {
    const address = cordonAddress(input);
    if (!this.isCordoned(address)) return undefined;
    return this.store.remove(CORDON_NAMESPACE, cordonSlot(address));
  }

  private current(): Map<string, CordonRecord & { readonly hlc: Hlc }> {
    const snapshot = this.store.snapshot(CORDON_NAMESPACE);
    if (snapshot === this.source) return this.records;
    const records = new Map<string, CordonRecord & { readonly hlc: Hlc }>();
    for (const [slot, placement] of snapshot.placements) {
      // A slot whose target does not digest to it was not written by this module: it cordons nobody.
      if (cordonSlot(placement.target) !== slot) continue;
      const by = placement.meta?.['by'];
      const reason = placement.meta?.['reason'];
      records.set(placement.target, {
        address: placement.target,
        ...(typeof by === 'string' ? { by } : {}),
        ...(typeof reason === 'string' ? { reason } : {}),
        hlc: placement.hlc,
      });
    }
    this.source = snapshot;
    this.records = records;
    return records;
  }
}

function provenanceMeta(provenance: CordonProvenance): SlotMeta | undefined {
  if (typeof provenance !== 'object' || provenance === null)
    throw new ActorTsError('invalid_argument', 'cordon options must be { by?, reason? }');
  const meta: Record<string, string> = {};
  if (provenance.by !== undefined) meta['by'] = validateBy(provenance.by);
  if (provenance.reason !== undefined) meta['reason'] = validateReason(provenance.reason);
  return Object.keys(meta).length === 0 ? undefined : meta;
}
