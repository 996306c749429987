// A discrete-event clock for simulated-time runs: callbacks fire in (time, insertion) order and no wall time
// passes between them, so figures measured in its milliseconds repeat exactly from run to run.

interface Event {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  readonly network: boolean;
}

export class VirtualClock {
  private heap: Event[] = [];
  private seq = 0;
  private time = 0;
  private pendingNetwork = 0;

  now(): number {
    return this.time;
  }

  /** Runs `fn` after `delayMs` of simulated time; `network` marks deliveries (see `networkIdle`). */
  schedule(fn: () => void, delayMs: number, network = false): void {
    const event = { at: this.time + Math.max(0, delayMs), seq: this.seq++, fn, network };
    if (network) this.pendingNetwork++;
    this.push(event);
  }

  /** Repeats `fn` every `periodMs`, first after `phaseMs`; stops once `alive()` turns false. */
  every(periodMs: number, phaseMs: number, fn: () => void, alive: () => boolean): void {
    const tick = (): void => {
      if (!alive()) return;
      fn();
      this.schedule(tick, periodMs);
    };
    this.schedule(tick, phaseMs);
  }

  /** No message is in flight: only periodic timers remain. */
  networkIdle(): boolean {
    return this.pendingNetwork === 0;
  }

  /**
   * Processes events until `done()` holds (checked after every instant, i.e. once all events of one
   * simulated millisecond ran) or the clock would pass `limit`. Returns whether `done()` held.
   */
  runUntil(done: () => boolean, limit: number): boolean {
    if (done()) return true;
    while (this.heap.length > 0) {
      const next = this.heap[0] as Event;
      if (next.at > limit) break;
      this.time = next.at;
      while (this.heap.length > 0 && (this.heap[0] as Event).at === this.time) this.fire(this.pop());
      if (done()) return true;
    }
    this.time = Math.max(this.time, limit);
    return done();
  }

  /** Advances to `time`, running everything due on the way. */
  advanceTo(time: number): void {
    this.runUntil(() => false, time);
  }

  private fire(event: Event): void {
    if (event.network) this.pendingNetwork--;
    event.fn();
  }

  private push(event: Event): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(event, heap[parent] as Event)) break;
      heap[i] = heap[parent] as Event;
      i = parent;
    }
    heap[i] = event;
  }

  private pop(): Event {
    const heap = this.heap;
    const top = heap[0] as Event;
    const last = heap.pop() as Event;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        let candidate = last;
        if (left < heap.length && before(heap[left] as Event, candidate)) {
          smallest = left;
          candidate = heap[left] as Event;
        }
        if (right < heap.length && before(heap[right] as Event, candidate)) smallest = right;
        if (smallest === i) break;
        heap[i] = heap[smallest] as Event;
        i = smallest;
      }
      heap[i] = last;
    }
    return top;
  }
}

function before(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
