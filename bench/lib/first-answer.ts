// The dark window after a host is stopped, as a client sees it: an ask every 100 ms, each on its own (one that went
// to the dead host waits out its ask timeout), until one is answered by another host. Shared by the real-process
// failover benches.

/** Milliseconds from the call until `hostOf()` first names a host other than `victim`; undefined past `limitMs`. */
export async function firstAnswerElsewhere(hostOf: () => Promise<string | undefined>, victim: string, limitMs: number): Promise<number | undefined> {
  const start = performance.now();
  let answered: number | undefined;
  const asks: Array<Promise<void>> = [];
  while (answered === undefined && performance.now() - start < limitMs) {
    asks.push(
      hostOf()
        .catch(() => undefined)
        .then((host) => {
          if (host !== undefined && host !== victim) answered = Math.min(answered ?? Infinity, performance.now() - start);
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await Promise.all(asks);
  return answered;
}
