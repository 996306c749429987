// Clock-offset estimate of this node against its peers (issue 41): each exchange that carries a peer's wall
// clock gives one NTP-style sample; the node's offset is the median over trusted members, so one lying or
// badly delayed peer cannot talk it into refusing writes, and a node whose own clock is off learns it.

/** One request/response exchange, all in milliseconds of wall clock (t0, t3 local; t1, t2 the peer's). */
export interface ClockExchange {
  /** Local clock when the request was sent. */
  readonly t0: number;
  /** Peer clock when it received the request. */
  readonly t1: number;
  /** Peer clock when it sent the response. */
  readonly t2: number;
  /** Local clock when the response arrived. */
  readonly t3: number;
}

/** A peer's clock relative to ours: positive means the peer is ahead. `uncertaintyMs` is half the round trip. */
export interface OffsetSample {
  readonly offsetMs: number;
  readonly uncertaintyMs: number;
}

/** Bounds on what a network-supplied clock field may be before it is believed at all. */
export interface ClockSampleLimits {
  /** A sample whose round trip exceeds this says nothing useful about offsets and is dropped. */
  readonly maxRoundTripMs: number;
  /** A peer timestamp further than this from ours is corrupt or hostile, not a clock: dropped. */
  readonly maxPlausibleOffsetMs: number;
}

/** Defaults: a 10 s round trip is no estimate; a year of offset is no clock. */
export const defaultClockSampleLimits: ClockSampleLimits = {
  maxRoundTripMs: 10_000,
  maxPlausibleOffsetMs: 366 * 24 * 3_600_000,
};

/** Default `maxClockOffsetMs`: a few seconds, far below the store's hold-back bound. */
export const DEFAULT_MAX_CLOCK_OFFSET_MS = 5_000;

/**
 * The NTP offset estimate: offset = ((t1 - t0) + (t2 - t3)) / 2, uncertainty = rtt / 2 where
 * rtt = (t3 - t0) - (t2 - t1). Returns undefined for an exchange that is not a clock reading (non-finite
 * fields, negative durations, a round trip or offset beyond `limits`): every byte from the network is hostile.
 */
export function estimateOffset(
  exchange: ClockExchange,
  limits: ClockSampleLimits = defaultClockSampleLimits,
): OffsetSample | undefined {
  const { t0, t1, t2, t3 } = exchange;
  if (![t0, t1, t2, t3].every(Number.isFinite)) return undefined;
  const local = t3 - t0;
  const remote = t2 - t1;
  if (local < 0 || remote < 0 || remote > local) return undefined;
  const rtt = local - remote;
  if (rtt > limits.maxRoundTripMs) return undefined;
  const offsetMs = (t1 - t0 + (t2 - t3)) / 2;
  if (Math.abs(offsetMs) > limits.maxPlausibleOffsetMs) return undefined;
  return { offsetMs, uncertaintyMs: rtt / 2 };
}

/**
 * Median of a non-empty list; for an even count the middle value nearer zero, not their mean: with two members
 * the mean of a good clock and a bad one would put both in skew, while neither has a majority to say it is wrong.
 */
function medianTowardZero(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length % 2 === 1) return sorted[mid]!;
  const [low, high] = [sorted[mid - 1]!, sorted[mid]!];
  return Math.abs(low) <= Math.abs(high) ? low : high;
}

/** One member's latest sample plus the offset that member reports for itself (if it gossips one). */
export interface MemberClockReading {
  readonly member: string;
  readonly sample: OffsetSample;
  /** The member's own estimate of its offset against the cluster; an extreme one disqualifies it as a reference. */
  readonly reportedOwnOffsetMs?: number;
}

/**
 * This node's offset against the cluster: the negated median of the offsets of this node (0) and its trusted members
 * (if peers are ahead of us, we are behind). Counting itself, a node is in skew only when a majority disagrees with
 * its clock: one lying peer cannot move it. A member whose self-reported offset exceeds `maxClockOffsetMs` is not a
 * reference. With no trusted reading the offset is unknown (undefined) and the node must not refuse on it.
 */
export function clusterOffset(readings: readonly MemberClockReading[], maxClockOffsetMs: number): number | undefined {
  const trusted = readings.filter(
    (r) => r.reportedOwnOffsetMs === undefined || Math.abs(r.reportedOwnOffsetMs) <= maxClockOffsetMs,
  );
  if (trusted.length === 0) return undefined;
  // Subtract each sample's uncertainty toward zero: a slow link must not be what pushes us over the bound.
  const shrunk = trusted.map(
    (r) => Math.sign(r.sample.offsetMs) * Math.max(0, Math.abs(r.sample.offsetMs) - r.sample.uncertaintyMs),
  );
  const m = -medianTowardZero([0, ...shrunk]);
  return m === 0 ? 0 : m;
}

/** Whether this node is in skew: its known offset is beyond the bound. An unknown offset is not skew. */
export function isSkewed(offsetMs: number | undefined, maxClockOffsetMs: number): boolean {
  return offsetMs !== undefined && Math.abs(offsetMs) > maxClockOffsetMs;
}

/** The `clock_skew` refusal's message, naming this node's offset, or undefined within the bound. */
export function skewReason(offsetMs: number | undefined, maxClockOffsetMs: number): string | undefined {
  if (offsetMs === undefined || !isSkewed(offsetMs, maxClockOffsetMs)) return undefined;
  const dir = offsetMs > 0 ? 'ahead of' : 'behind';
  return `this node's clock is ${Math.abs(offsetMs) / 1000} s ${dir} the median of its peers (maxClockOffsetMs is ${maxClockOffsetMs}): its timestamps would be held back by them, so it refuses writes; fix its clock or send the write to another node`;
}

/**
 * Latest reading per member plus the skew state; reports each change into or out of skew once (for the log
 * line and health), so callers do not log on every sample.
 */
export class ClockOffsetTracker {
  private readonly readings = new Map<string, MemberClockReading>();
  private skewed = false;

  constructor(private readonly maxClockOffsetMs: number = DEFAULT_MAX_CLOCK_OFFSET_MS) {
    if (!Number.isFinite(maxClockOffsetMs) || maxClockOffsetMs <= 0) {
      throw new RangeError(`maxClockOffsetMs must be a positive number of milliseconds, got ${maxClockOffsetMs}`);
    }
  }

  /** Records a member's reading (replacing its previous one); returns the skew change it caused, if any. */
  record(reading: MemberClockReading): 'entered' | 'left' | undefined {
    this.readings.set(reading.member, reading);
    return this.update();
  }

  /** Forgets a member that left or became unreachable: only reachable members count. */
  forget(member: string): 'entered' | 'left' | undefined {
    this.readings.delete(member);
    return this.update();
  }

  /** This node's current offset against the cluster in ms, or undefined when no trusted peer has been heard. */
  offsetMs(): number | undefined {
    return clusterOffset([...this.readings.values()], this.maxClockOffsetMs);
  }

  /** Whether placement writes and other timestamped acknowledgements must be refused now. */
  isSkewed(): boolean {
    return this.skewed;
  }

  private update(): 'entered' | 'left' | undefined {
    const now = isSkewed(this.offsetMs(), this.maxClockOffsetMs);
    if (now === this.skewed) return undefined;
    this.skewed = now;
    return now ? 'entered' : 'left';
  }
}
