// Deterministic randomness for simulated runs. The replicator picks anti-entropy peers with Math.random and
// PlacementReplication offers no way to pass another source, so simulated runs swap Math.random for a seeded one.
import { seededRandom } from '../../src/cluster/random.js';

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

export function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.min(items.length - 1, Math.floor(random() * items.length))] as T;
}

/** A uniformly shuffled copy (Fisher-Yates). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
