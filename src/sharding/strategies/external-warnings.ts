// The external strategy's warnings about pins it cannot honour, deduplicated: the coordinator calls allocate
// and rebalance every tick, and one unusable pin must not flood the log.
export type WarningSink = (message: string, details: object) => void;

/**
 * Dedupe policy: a warning about shard S is emitted when S's (target, reason) differs from the last one
 * reported for S; it is not repeated while that situation lasts. The record is dropped when the pin is
 * honoured, moved, changed, expired or removed, so the same problem coming back later is reported again.
 * Memory is bounded by the number of pinned shards with a live problem.
 */
export class WarningLog {
  private readonly reported = new Map<number, string>();

  constructor(private readonly sink: WarningSink | undefined) {}

  report(shardId: number, target: string, reason: string, message: string, extra: object): void {
    const situation = `${target}\u0000${reason}`;
    if (this.reported.get(shardId) === situation) return;
    this.reported.set(shardId, situation);
    this.emit(message, { shardId, target, reason, ...extra });
  }

  forget(shardId: number): void {
    this.reported.delete(shardId);
  }

  /** Drops records whose pin is gone, expired or now names another target. */
  prune(targetOf: (shardId: number) => string | undefined): void {
    for (const [shardId, situation] of this.reported) {
      const target = targetOf(shardId);
      if (target === undefined || !situation.startsWith(`${target}\u0000`)) this.reported.delete(shardId);
    }
  }

  emit(message: string, details: object): void {
    if (this.sink === undefined) return;
    try {
      this.sink(message, details);
    } catch {
      // A failing logger must not turn a placement decision into an exception.
    }
  }
}
