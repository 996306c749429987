// A transfer's states sorted out part by part as the parts arrive in order (incoming-states.ts folds each one in
// once every part before it is in): each entity's entry in the latest part wins. Done as the chunks come, not
// when the shard starts: the new home reads chunk k while chunk k+1 is on its way, and the start that waits for
// the last chunk then sorts out only that one (S10: a thousand entries sorted at the start were 0.1 ms of it).
import type { ProcessedSends } from './dedup-table.js';
import { isEntryOf, type ArrivedChunk, type ArrivedState, type HeldEntry, type IntactChunks } from './held-state.js';
import type { ArrivedPart, PartsFold } from './incoming-states.js';
import type { EntityState } from './shard-state.js';

/** A transfer's states sorted out: what a shard starting with them restores (state-transfer.ts). */
export interface SortedOut {
  /** The held states with a value (a plain one as the entry it arrived as), by entity. */
  readonly held: Map<string, HeldEntry>;
  /** The sends each entity processed. */
  readonly sends: Map<string, ReadonlyArray<ProcessedSends>>;
  /** The entities whose state could not be read (they start fresh), with why. */
  readonly unread: Map<string, string>;
  /** The packed chunks in the order of their parts. */
  readonly chunks: ArrivedChunk[];
  /** Those intact: every entry of theirs held but the listed ones (HeldLeft's `intact`). */
  readonly intact: IntactChunks;
}

/** Entities with a replaced entry a start looks for in the chunks; past this many, no chunk is known intact. */
const REPLACED_LOOKUPS = 8;

/**
 * One transfer's states, sorted out as its parts are added in part order. Each map is changed entry by entry: a
 * map of every entry first cost as much again (S10, in process).
 */
export class SortedStates {
  private readonly held = new Map<string, HeldEntry>();
  private readonly sends = new Map<string, ReadonlyArray<ProcessedSends>>();
  private readonly unread = new Map<string, string>();
  private readonly chunks: ArrivedChunk[] = [];
  /** Chunks an entry of which held nothing (not intact). */
  private readonly spoiled = new Set<ArrivedChunk | undefined>();
  /** Entities whose entry a later part replaced. */
  private readonly replaced: string[] = [];

  /** The next part, after every part before it. */
  add({ entities, read, chunk }: ArrivedPart<ArrivedState>): void {
    if (chunk !== undefined) this.chunks.push(chunk);
    const { unread, sends } = this;
    for (let i = 0; i < entities.length; i++) {
      const entry = entities[i] as EntityState;
      const { entityId } = entry;
      const state = read[i] as ArrivedState;
      // An entry that replaces an earlier one of its entity (few: a superseded entry stated again) undoes it.
      if (unread.size > 0) unread.delete(entityId);
      if (state === 'plain') {
        this.hold(entityId, entry, chunk);
        if (sends.size > 0) sends.delete(entityId);
      } else if (!state.ok) {
        this.hold(entityId, undefined, chunk);
        sends.delete(entityId);
        unread.set(entityId, state.reason);
      } else {
        this.hold(entityId, state.held.value === undefined ? undefined : state.held, chunk);
        if (state.held.sends.length > 0) sends.set(entityId, state.held.sends);
        else if (sends.size > 0) sends.delete(entityId);
      }
    }
  }

  /** The transfer sorted out, once its last part is added. */
  finish(): SortedOut {
    const { held, sends, unread, chunks } = this;
    return { held, sends, unread, chunks, intact: this.intact() };
  }

  /** Holds an entry, or drops the entity's (its chunk is then not intact); notes the entities whose entry is replaced. */
  private hold(entityId: string, entry: HeldEntry | undefined, chunk: ArrivedChunk | undefined): void {
    const before = this.held.size;
    if (entry === undefined) {
      if (this.held.delete(entityId)) this.replaced.push(entityId);
      this.spoiled.add(chunk);
    } else if (this.held.set(entityId, entry).size === before) this.replaced.push(entityId);
  }

  /**
   * The chunks whose entries are known: those not spoiled, each with the indexes of the earlier entries of
   * entities whose entry was replaced by a later one (few: a state restated after a chunk that went as it came;
   * each is looked for in every chunk, the ids compared).
   */
  private intact(): Map<ArrivedChunk, number[]> {
    const intact = new Map<ArrivedChunk, number[]>();
    if (this.replaced.length > REPLACED_LOOKUPS) return intact;
    for (const chunk of this.chunks) if (!this.spoiled.has(chunk)) intact.set(chunk, []);
    for (const entityId of this.replaced) {
      const current = this.held.get(entityId);
      for (const [chunk, superseded] of intact)
        chunk.entities.forEach((entry, at) => {
          if (entry.entityId === entityId && !isEntryOf(current, entry)) superseded.push(at);
        });
    }
    return intact;
  }
}

/** IncomingStates' fold for a start: each transfer's states sorted out as its parts arrive. */
export const SORTING: PartsFold<ArrivedState, SortedStates> = {
  begin: () => new SortedStates(),
  add: (into, part) => into.add(part),
};
