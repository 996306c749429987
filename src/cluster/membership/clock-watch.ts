// This node's clock against its peers', measured on the heartbeats it already exchanges (issue 41): each heartbeat
// carries the sender's wall clock, each ack echoes it with the answerer's, and the arrival closes one NTP-style
// sample per monitored member. The offset is the median over members (clock-offset.ts), so one lying or delayed peer
// cannot move it; a member that reports an extreme offset of its own is no reference. Beyond `maxClockOffsetMs` the
// node is in skew: it says so once per change (a log line and the listeners), and `skewReason` is what write
// routes refuse with, until it is back within the bound.
import type { Logger } from '../../logging.js';
import { ClockOffsetTracker, estimateOffset, skewReason } from './clock-offset.js';

export interface ClockWatchOptions {
  readonly maxClockOffsetMs: number;
  /** The wall clock compared with the peers' (ms since the epoch). */
  readonly wallClock: () => number;
  readonly logger?: Logger;
}

/** The clock fields of an ack, as the answering side fills them in. */
export interface AckClock {
  readonly echoMs?: number;
  readonly atMs?: number;
  readonly offsetMs?: number;
}

export class ClockWatch {
  private readonly tracker: ClockOffsetTracker;
  private readonly listeners = new Set<(skewed: boolean) => void>();

  constructor(private readonly options: ClockWatchOptions) {
    this.tracker = new ClockOffsetTracker(options.maxClockOffsetMs);
  }

  /** The wall clock a heartbeat carries. */
  stamp(): { readonly sentAtMs: number } {
    return { sentAtMs: this.options.wallClock() };
  }

  /** The clock fields of the ack to a heartbeat that carried `sentAtMs` (none for a heartbeat that carried none). */
  answer(sentAtMs: number | undefined): AckClock {
    if (sentAtMs === undefined) return {};
    const offsetMs = this.tracker.offsetMs();
    return { echoMs: sentAtMs, atMs: this.options.wallClock(), ...(offsetMs === undefined ? {} : { offsetMs }) };
  }

  /** An ack from a member this node monitors: one sample, when the ack carries the clock fields and they make one. */
  acked(member: string, ack: AckClock): void {
    if (ack.echoMs === undefined || ack.atMs === undefined) return;
    const sample = estimateOffset({ t0: ack.echoMs, t1: ack.atMs, t2: ack.atMs, t3: this.options.wallClock() });
    if (sample === undefined) return;
    this.changed(
      this.tracker.record({
        member,
        sample,
        ...(ack.offsetMs === undefined ? {} : { reportedOwnOffsetMs: ack.offsetMs }),
      }),
    );
  }

  /** A member no longer monitored (left, removed, out of this node's ring segment) stops counting. */
  forget(member: string): void {
    this.changed(this.tracker.forget(member));
  }

  /** This node's offset against its peers' median in ms (positive: ahead), or undefined before any sample. */
  offsetMs(): number | undefined {
    return this.tracker.offsetMs();
  }

  /** Why this node refuses timestamped writes now (its clock is beyond the bound), or undefined. */
  skewReason(): string | undefined {
    return this.tracker.isSkewed() ? skewReason(this.tracker.offsetMs(), this.options.maxClockOffsetMs) : undefined;
  }

  /** Called with true when the node goes into skew and false when it comes back. */
  onSkewChange(listener: (skewed: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(change: 'entered' | 'left' | undefined): void {
    if (change === undefined) return;
    const offsetMs = this.tracker.offsetMs();
    if (change === 'entered') this.options.logger?.warn({ offsetMs }, this.skewReason() ?? 'clock skew');
    else
      this.options.logger?.info(
        { offsetMs },
        "this node's clock is back within maxClockOffsetMs of its peers: writes are accepted again",
      );
    for (const listener of this.listeners) listener(change === 'entered');
  }
}
