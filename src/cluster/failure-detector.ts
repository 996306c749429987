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

  constructor(private readonly config: FailureDetectorConfig) {}

  /** Records a heartbeat arriving at `nowMs`. */
  heartbeat(nowMs: number): void {
    if (this.lastHeartbeatMs === undefined || !this.history) {
      // Seed the history with the estimate so the first real interval is judged against something sensible.
      const estimate = this.config.firstHeartbeatEstimateMs;
      const deviation = estimate / 4;
      this.history = new IntervalHistory(this.config.maxSampleSize);
      this.history.add(estimate - deviation);
      this.history.add(estimate + deviation);
    } else {
      const interval = nowMs - this.lastHeartbeatMs;
      // An interval far beyond the acceptable pause is an outage, not a sample of normal behaviour.
      if (interval >= 0 && interval < this.config.acceptableHeartbeatPauseMs + 2 * this.config.firstHeartbeatEstimateMs) {
        this.history.add(interval);
      }
    }
    this.lastHeartbeatMs = nowMs;
  }

  /** Suspicion level at `nowMs`; 0 before the first heartbeat. */
  phi(nowMs: number): number {
    if (this.lastHeartbeatMs === undefined || !this.history) return 0;
    const elapsed = nowMs - this.lastHeartbeatMs;
    const mean = this.history.mean + this.config.acceptableHeartbeatPauseMs;
    const deviation = Math.max(Math.sqrt(this.history.variance), this.config.minStdDeviationMs);
    return phi(elapsed, mean, deviation);
  }

  isAvailable(nowMs: number): boolean {
    return this.phi(nowMs) < this.config.threshold;
  }

  get isMonitoring(): boolean {
    return this.lastHeartbeatMs !== undefined;
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
    let detector = this.detectors.get(key);
    if (!detector) {
      detector = new PhiAccrualFailureDetector(this.config);
      this.detectors.set(key, detector);
    }
    detector.heartbeat(nowMs);
  }

  /** An unmonitored key counts as available: silence is only suspicious once we expect heartbeats. */
  isAvailable(key: string, nowMs: number): boolean {
    return this.detectors.get(key)?.isAvailable(nowMs) ?? true;
  }

  phi(key: string, nowMs: number): number {
    return this.detectors.get(key)?.phi(nowMs) ?? 0;
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
}
