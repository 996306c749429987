// Deterministic randomness for simulated runs. The replicator picks anti-entropy peers with Math.random and
// PlacementReplication offers no way to pass another source, so simulated runs swap Math.random for a seeded one.
import { pick as pickOne, seededRandom, shuffled as shuffledCopy } from '../../test/support/random.js';

export { seededRandom };

export async function withSeededMathRandom<T>(seed: number, run: () => Promise<T> | T): Promise<T> {
  const original = Math.random;
  Math.random = seededRandom(seed);
  try {
    return await run();
  } finally {
    Math.random = original;
  }
}

/** One of `items` (the shared test helper, arguments in the bench's order). */
export function pick<T>(items: readonly T[], random: () => number): T {
  return pickOne(random, items);
}

/** A uniformly shuffled copy (Fisher-Yates). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  return shuffledCopy(random, items);
}
