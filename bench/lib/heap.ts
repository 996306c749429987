// Heap measurements need a full GC before reading heapUsed; `npm run bench` starts node without
// --expose-gc, so the flag is switched on at run time and gc() is fetched from a fresh context.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gcFn: (() => void) | undefined;

export function fullGc(): void {
  if (gcFn === undefined) {
    setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc') as () => void;
  }
  gcFn();
  gcFn();
}

export function heapUsed(): number {
  fullGc();
  return process.memoryUsage().heapUsed;
}

/** Wall-clock milliseconds of `fn`, from the high-resolution clock. */
export function timeMs(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}
