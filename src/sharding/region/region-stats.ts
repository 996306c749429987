// What one region reports about itself (ClusterSharding.stats, the management API and metrics read it).

/** Statistics of a type's region on this node: hosted shards and entities, buffered, forwarded and retried messages. */
export interface RegionStats {
  /** True when this node lacks the type's role and only routes. */
  readonly proxy: boolean;
  readonly localShards: number;
  readonly localEntities: number;
  /** Messages now waiting for a shard home. */
  readonly bufferedMessages: number;
  /** Messages dropped because the buffer held `bufferSize` messages. */
  readonly bufferOverflowDrops: number;
  /** Messages dropped after `maxForwardHops` forwards between disagreeing regions. */
  readonly hopLimitDrops: number;
  readonly messagesForwarded: number;
  readonly messagesDeliveredLocally: number;
  readonly shardHomeRequests: number;
  /** Outcomes of `pipeToSelf` that settled after their entity had stopped (moved or shut down), dropped. */
  readonly latePipeDrops: number;
  /** Messages a typed entity type's schema refused on this node (asks and sends answered invalid_message). */
  readonly messagesInvalid: number;
  /** Entity states this region handed over, restored, or could not (over the bound / not encodable). */
  readonly snapshotsShipped: number;
  readonly snapshotsRestored: number;
  readonly snapshotsTooLarge: number;
  readonly snapshotsFailed: number;
  /** Bytes of entity state shipped with hand-offs. */
  readonly stateBytesShipped: number;
  /** Bytes of entity state shipped and kept here until the coordinator says the new home started its shard. */
  readonly stateBytesRetained: number;
  /**
   * Bytes of entity state received for shards not started here yet: a transfer waiting for its start, or one no
   * start here waits for (dropped, if incomplete, once older than the hand-off timeout).
   */
  readonly stateBytesWaiting: number;
  /** Copies of reliable sends routed again by the retry tick. */
  readonly messagesRedelivered: number;
  /** Copies of reliable sends this host recognised as already running or processed (not processed again). */
  readonly messagesDeduplicated: number;
  /** Reliable sends this region is retrying now. */
  readonly sendsOutstanding: number;
  /** Entities passivated here since the start, by reason (idle, over the type's limit, asked by the entity). */
  readonly entitiesPassivated: Readonly<Record<'idle' | 'limit' | 'self', number>>;
}
