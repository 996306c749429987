// A node's entity store as the node runs it: opened before anything is bound (a store that cannot be used stops
// the start with a typed error), behind a backoff (a store that went down is probed, not hammered), its group
// commit handed to sharding, its latencies to the metrics, its outage to health, and closed last, after sharding
// stopped committing.
import type { Logger } from '../logging.js';
import { checkEntityStoreConfig, type EntityStoreConfig } from '../entity-store/entity-store.js';
import { BackoffStore } from '../entity-store/backoff.js';
import { GroupCommit } from '../entity-store/group-commit.js';
import { openEntityStore } from '../entity-store/open-entity-store.js';
import type { EntityStoreFigures } from '../management/entity-store-metrics.js';
import type { EntityStoreContext } from '../sharding/core/sharding-context.js';

type LatencyListener = (kind: 'commit' | 'restore', seconds: number) => void;

export class NodeEntityStore implements EntityStoreFigures {
  private readonly listeners = new Set<LatencyListener>();
  private closed: Promise<void> | undefined;
  readonly kind: EntityStoreConfig['kind'];
  /** Where the rows are (a directory, or the server without credentials). */
  readonly where: string;
  readonly commit: GroupCommit;
  /** What ClusterSharding's durable types commit through. */
  readonly context: EntityStoreContext;

  /** Opens the configured store (checked first); undefined when none is configured. */
  static async open(config: EntityStoreConfig | undefined, logger: Logger): Promise<NodeEntityStore | undefined> {
    if (config === undefined) return undefined;
    const store = await openEntityStore(checkEntityStoreConfig(config));
    logger.info({ kind: store.kind, where: store.where }, 'entity store open');
    return new NodeEntityStore(new BackoffStore(store), logger);
  }

  private constructor(
    private readonly store: BackoffStore,
    private readonly logger: Logger,
  ) {
    this.kind = store.kind;
    this.where = store.where;
    this.commit = new GroupCommit(store, {
      onTransaction: (durationMs, writes, ok) => {
        this.emit('commit', durationMs / 1000);
        if (!ok) this.logger.warn({ writes }, 'entity store commit failed: its messages were not acknowledged');
      },
    });
    this.context = {
      commit: this.commit,
      onRestored: (_typeName, durationMs) => this.emit('restore', durationMs / 1000),
      onFenced: (typeName, shardId) =>
        this.logger.warn({ typeName, shardId }, 'durable shard fenced: a later host claimed it in the entity store'),
    };
  }

  stats(): ReturnType<GroupCommit['stats']> {
    return this.commit.stats();
  }

  onLatency(listener: LatencyListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Why this node cannot use its entity store now (its latest call failed), or undefined. */
  problem(): string | undefined {
    const why = this.store.problem;
    return why === undefined ? undefined : `entity store (${this.kind}, ${this.where}): ${why}`;
  }

  /** Waits for the commits under way, then closes the store. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.commit
      .settled()
      .then(() => this.commit.store.close())
      .catch((error: unknown) => this.logger.warn({ err: String(error) }, 'closing the entity store failed'));
    return this.closed;
  }

  private emit(kind: 'commit' | 'restore', seconds: number): void {
    for (const listener of this.listeners) listener(kind, seconds);
  }
}
