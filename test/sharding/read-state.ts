// Reads one entity's packed state the way a new host does (its outline at the shard's start, its value when
// the entity wakes), for tests that check what packSnapshots and reshipState wrote.
import type { ProcessedSends } from '../../src/sharding/region/dedup-table.js';
import { HeldStates, skimState } from '../../src/sharding/region/held-state.js';

export type ReadState =
  | {
      readonly ok: true;
      /** The state carried a value (else only the sends its entity processed). */
      readonly restored: boolean;
      readonly value: unknown;
      readonly sends: ReadonlyArray<ProcessedSends>;
    }
  | { readonly ok: false; readonly reason: string };

export function readState(bytes: Uint8Array): ReadState {
  const skimmed = skimState(bytes);
  if (!skimmed.ok) return skimmed;
  const { held } = skimmed;
  let unreadable: string | undefined;
  const woken = new HeldStates(new Map([['e', held]]), (_entityId, reason) => (unreadable = reason)).wake('e');
  if (unreadable !== undefined) return { ok: false, reason: unreadable };
  return { ok: true, restored: held.value !== undefined, value: woken?.value, sends: held.sends };
}
