// Received frames, handled in order without holding the event loop for long: a frame larger than
// `yieldAboveBytes` is handled in a macrotask of its own (with the frames queued behind it), so a full sync of
// many megabytes no longer runs in the same turn as the frames before and after it, and timers (heartbeats,
// failure detection) get their turn between them. Small frames arriving while nothing waits are handled at once.
export type Defer = (run: () => void) => void;

export const DEFAULT_YIELD_ABOVE_BYTES = 1024 * 1024;

export class FrameInbox {
  private readonly queue: Array<{ readonly bytes: number; readonly run: () => void }> = [];
  private scheduled = false;

  constructor(
    private readonly yieldAboveBytes: number,
    private readonly defer: Defer = (run) => void setImmediate(run),
  ) {}

  /** Handles `run` (a frame of `bytes` bytes) now, or after the frames already waiting. */
  add(bytes: number, run: () => void): void {
    if (this.queue.length === 0 && !this.scheduled && bytes <= this.yieldAboveBytes) return run();
    this.queue.push({ bytes, run });
    this.schedule();
  }

  /** Frames waiting for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Drops what waits (the replicator closed). */
  clear(): void {
    this.queue.length = 0;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.defer(() => this.drain());
  }

  // One turn: frames up to the byte budget (at least one), then the rest in a later turn.
  private drain(): void {
    this.scheduled = false;
    let budget = this.yieldAboveBytes;
    while (this.queue.length > 0) {
      const next = this.queue[0] as { readonly bytes: number; readonly run: () => void };
      if (budget < this.yieldAboveBytes && next.bytes > budget) break;
      this.queue.shift();
      budget -= next.bytes;
      next.run();
    }
    if (this.queue.length > 0) this.schedule();
  }
}
