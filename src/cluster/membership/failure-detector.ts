// The phi accrual failure detector (Hayashibara et al.), as Pekko uses it for cluster membership: instead
// of a fixed timeout it reports how unlikely the current silence is given the observed heartbeat intervals.
// Time comes from the caller, so the detector is deterministic under an injected clock.
import type { FailureDetectorConfig } from './config.js';

/** A bounded window of inter-arrival intervals with running sums. */
class IntervalHistory {
  private readonly intervals: number[] = [];
  private sum = 0;
  private squaredSum = 0;

  constructor(private readonly maxSize: number) {}

  add(interval: number): void {
    if (this.intervals.length >= this.maxSize) {
      const dropped = this.intervals.shift() ?? 0;
      this.sum -= dropped;
      this.squaredSum -= dropped * dropped;
    }
    this.intervals.push(interval);
    this.sum += interval;
    this.squaredSum += interval * interval;
  }

  get mean(): number {
    return this.sum / this.intervals.length;
  }

  get variance(): number {
    return Math.max(0, this.squaredSum / this.intervals.length - this.mean * this.mean);
  }
}

export class PhiAccrualFailureDetector {
  private history: IntervalHistory | undefined;
  private lastHeartbeatMs: number | undefined;
  // The silence phi measures starts at the latest sign of life, a heartbeat or other traffic from the member.
  private lastAliveMs: number | undefined;

  constructor(private readonly config: FailureDetectorConfig) {}

  /** Records a heartbeat arriving at `nowMs`. */
  heartbeat(nowMs: number): void {
    if (!this.history) {
      this.seed();
    } else if (this.lastHeartbeatMs !== undefined) {
      const interval = nowMs - this.lastHeartbeatMs;
      // An interval far beyond the acceptable pause is an outage, not a sample of normal behaviour.
      if (
        interval >= 0 &&
        interval < this.config.acceptableHeartbeatPauseMs + 2 * this.config.firstHeartbeatEstimateMs
      ) {
        this.history.add(interval);
      }
    }
    this.lastHeartbeatMs = nowMs;
    this.lastAliveMs = Math.max(this.lastAliveMs ?? nowMs, nowMs);
  }

  /**
   * Starts expecting heartbeats from `nowMs` without one having arrived, so a member that never answers
   * still becomes unavailable. Unlike a heartbeat it takes no interval sample: the first real heartbeat
   * would otherwise add a near-zero interval that skews the statistics for a thousand samples.
   */
  watch(nowMs: number): void {
    if (this.lastAliveMs !== undefined) return;
    if (!this.history) this.seed();
    this.lastAliveMs = nowMs;
  }

  /**
   * Records other evidence that the member is alive (it sent us something) without taking an interval
   * sample: both ends of a cut link then measure their silence from the same last exchange, whatever the
   * phase of their own heartbeat timers. Ignored before the first heartbeat.
   */
  alive(nowMs: number): void {
    if (this.lastAliveMs !== undefined) this.lastAliveMs = Math.max(this.lastAliveMs, nowMs);
  }

  /** Suspicion level at `nowMs`; 0 before the first heartbeat. */
  phi(nowMs: number): number {
    if (this.lastAliveMs === undefined || !this.history) return 0;
    return phi(nowMs - this.lastAliveMs, this.meanMs(), this.deviationMs());
  }

  /**
   * The earliest ms at which the member counts as unavailable if nothing more arrives (to the ms), so a
   * caller can act exactly then instead of on its next tick; undefined before the first heartbeat.
   */
  unavailableAtMs(): number | undefined {
    if (this.lastAliveMs === undefined || !this.history) return undefined;
    const mean = this.meanMs();
    const deviation = this.deviationMs();
    const threshold = this.config.threshold;
    // phi grows with the silence: double an upper bound, then bisect to the first whole ms above threshold.
    let high = Math.max(1, Math.ceil(mean));
    for (let i = 0; i < 64 && phi(high, mean, deviation) < threshold; i++) high *= 2;
    let low = 0;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (phi(middle, mean, deviation) < threshold) low = middle;
      else high = middle;
    }
    return this.lastAliveMs + (phi(low, mean, deviation) >= threshold ? low : high);
  }

  private meanMs(): number {
    return (this.history?.mean ?? this.config.firstHeartbeatEstimateMs) + this.config.acceptableHeartbeatPauseMs;
  }

  private deviationMs(): number {
    return Math.max(Math.sqrt(this.history?.variance ?? 0), this.config.minStdDeviationMs);
  }

  isAvailable(nowMs: number): boolean {
    return this.phi(nowMs) < this.config.threshold;
  }

  get isMonitoring(): boolean {
    return this.lastAliveMs !== undefined;
  }

  // Seed the history with the estimate so the first real interval is judged against something sensible.
  private seed(): void {
    const estimate = this.config.firstHeartbeatEstimateMs;
    const deviation = estimate / 4;
    this.history = new IntervalHistory(this.config.maxSampleSize);
    this.history.add(estimate - deviation);
    this.history.add(estimate + deviation);
  }
}

/** Logistic approximation of the normal CDF tail, as in Pekko; bounded so it never returns Infinity/NaN. */
export function phi(elapsedMs: number, meanMs: number, stdDeviationMs: number): number {
  const y = (elapsedMs - meanMs) / stdDeviationMs;
  const e = Math.exp(-y * (1.5976 + 0.070566 * y * y));
  const value = elapsedMs > meanMs ? -Math.log10(e / (1 + e)) : -Math.log10(1 - 1 / (1 + e));
  return Number.isFinite(value) ? value : Number.MAX_VALUE;
}

/** One detector per monitored key (member), created on first use. */
export class FailureDetectorRegistry {
  private readonly detectors = new Map<string, PhiAccrualFailureDetector>();

  constructor(private readonly config: FailureDetectorConfig) {}

  heartbeat(key: string, nowMs: number): void {
    this.detector(key).heartbeat(nowMs);
  }

  /** Starts expecting heartbeats from `key`; see `PhiAccrualFailureDetector.watch`. */
  watch(key: string, nowMs: number): void {
    this.detector(key).watch(nowMs);
  }

  /** An unmonitored key counts as available: silence is only suspicious once we expect heartbeats. */
  isAvailable(key: string, nowMs: number): boolean {
    return this.detectors.get(key)?.isAvailable(nowMs) ?? true;
  }

  /** Other traffic from a monitored key; see `PhiAccrualFailureDetector.alive`. */
  alive(key: string, nowMs: number): void {
    this.detectors.get(key)?.alive(nowMs);
  }

  phi(key: string, nowMs: number): number {
    return this.detectors.get(key)?.phi(nowMs) ?? 0;
  }

  unavailableAtMs(key: string): number | undefined {
    return this.detectors.get(key)?.unavailableAtMs();
  }

  isMonitoring(key: string): boolean {
    return this.detectors.has(key);
  }

  remove(key: string): void {
    this.detectors.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.detectors.keys();
  }

  private detector(key: string): PhiAccrualFailureDetector {
    let detector = this.detectors.get(key);
    if (!detector) {
      detector = new PhiAccrualFailureDetector(this.config);
      this.detectors.set(key, detector);
    }
    return detector;
  }
}
