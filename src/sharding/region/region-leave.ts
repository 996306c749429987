// A region's graceful leave: the coordinator's acknowledgement of the leave, the ShardStopped reports it has
// not acknowledged yet (a shard's state travels ahead of its report, so the leave must not end before the
// coordinator has both), and the condition that ends the leave.
import type { ShardingMessage } from '../protocol/messages.js';

export interface LeaveView {
  readonly typeName: string;
  /** Shards present here, running or stopping. */
  hosted(): number;
  /** Messages waiting in the region's buffer. */
  buffered(): number;
  /** Shards whose hand-off state is kept here, not yet released (retained-states.ts). */
  retained(): number;
}

export class RegionLeave {
  private leaving: { acked: boolean; readonly done: Promise<void>; readonly resolve: () => void } | undefined;
  /** ShardStopped reports by shard, with their HandOff id, that the coordinator has not acknowledged. */
  private readonly unconfirmed = new Map<number, number>();

  constructor(private readonly view: LeaveView) {}

  get active(): boolean {
    return this.leaving !== undefined;
  }

  get acked(): boolean {
    return this.leaving?.acked === true;
  }

  /** Starts the leave (once); `first` is true when this call started it. */
  start(): { readonly done: Promise<void>; readonly first: boolean } {
    if (this.leaving !== undefined) return { done: this.leaving.done, first: false };
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.leaving = { acked: false, done, resolve };
    return { done, first: true };
  }

  /** GracefulShutdownAck. */
  acknowledged(): void {
    if (this.leaving === undefined) return;
    this.leaving.acked = true;
    this.check();
  }

  stopReported(shardId: number, handOffId: number): void {
    this.unconfirmed.set(shardId, handOffId);
  }

  /** ShardStoppedAck. */
  stopAcknowledged(shardId: number, handOffId: number): void {
    if (this.unconfirmed.get(shardId) === handOffId) this.unconfirmed.delete(shardId);
    this.check();
  }

  /**
   * What the retry tick sends while leaving: the request again while unacknowledged or shards remain (a shard
   * allocated here in a race, or a coordinator that took over, must learn of the leave too), and every
   * unacknowledged ShardStopped.
   */
  retryMessages(): ShardingMessage[] {
    if (this.leaving === undefined) return [];
    const { typeName } = this.view;
    const messages: ShardingMessage[] = [];
    if (!this.leaving.acked || this.view.hosted() > 0) messages.push({ type: 'GracefulShutdownRequest', typeName });
    for (const [shardId, handOffId] of this.unconfirmed)
      messages.push({ type: 'ShardStopped', typeName, shardId, handOffId });
    return messages;
  }

  /**
   * The leave is done when nothing is hosted here, nothing waits in the buffer (messages that reached this node
   * during the hand-off go to the new home first), the coordinator has every stop report, and every shard's
   * new home has started it (the state kept here is released): a coordinator on this very node, which the
   * leave takes down, may still hold a state whose allocation it deferred.
   */
  check(): void {
    if (
      this.leaving?.acked === true &&
      this.view.hosted() === 0 &&
      this.view.buffered() === 0 &&
      this.unconfirmed.size === 0 &&
      this.view.retained() === 0
    ) {
      this.leaving.resolve();
    }
  }

  /** Ends the leave regardless (stopped locally with nobody to hand off to, or shut down). */
  finish(): void {
    if (this.leaving === undefined) return;
    this.leaving.acked = true;
    this.leaving.resolve();
  }
}
