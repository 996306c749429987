// Summaries of repeated trials: every figure the bench reports is a median and a p99 (nearest rank).

export interface Summary {
  readonly median: number;
  readonly p99: number;
  readonly n: number;
}

/** How a repeated measurement was taken: on how many nodes, over how many trials. */
export interface Trials {
  readonly nodes: number;
  readonly trials: number;
}

/** A protocol's convergence over trials (S2, S3): simulated ms and messages until every node agrees. */
export interface Convergence extends Trials {
  readonly protocol: string;
  readonly timeMs: Summary;
  readonly messages: Summary;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { median: Number.NaN, p99: Number.NaN, n: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  // Nearest rank: with fewer than 100 samples the p99 is the maximum, which is what a reader should assume.
  const rank = Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1);
  return { median, p99: sorted[rank] as number, n: sorted.length };
}

/** ours / baseline, as reported next to machine-dependent figures. */
export function ratio(ours: number, baseline: number): number {
  return baseline === 0 ? Number.NaN : ours / baseline;
}

export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e6 || abs < 1e-3)) return value.toExponential(2);
  if (abs >= 100) return Math.round(value).toLocaleString('en-US');
  return Number(value.toPrecision(digits)).toString();
}

export function fmtSummary(s: Summary, digits = 3): string {
  return `${fmt(s.median, digits)} / ${fmt(s.p99, digits)}`;
}

/** ours / baseline as `0.42x`; tiny ratios as `1/1838x`, which reads better than an exponent. */
export function fmtRatio(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (value > 0 && value < 0.01) return `1/${Math.round(1 / value).toLocaleString('en-US')}x`;
  return `${fmt(value, 3)}x`;
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${Math.round(bytes)} B`;
}
