// Seeded randomness for tests and simulations: the runtime's one PRNG (src/cluster/random.ts) and the two
// things every randomised test does with it, so a seed fully determines a run.
import { seededRandom } from '../../src/cluster/random.js';

export { seededRandom };

/** One element chosen by `random`; an empty list is a bug in the caller, not a value. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.min(items.length - 1, Math.floor(random() * items.length))];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

/** A uniformly shuffled copy (Fisher-Yates). */
export function shuffled<T>(random: () => number, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
