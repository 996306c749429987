// A closed-loop load: `total` operations with at most `window` in flight, each timed on its own.

/** Runs `op(0..total-1)` with at most `window` in flight; returns the latency of each in ms. */
export async function windowed(total: number, window: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      const t0 = performance.now();
      await op(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: window }, () => worker()));
  return latencies;
}
