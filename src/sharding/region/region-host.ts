// The hosting side of a region: the shards this node runs, the entity state that moves in and out with their
// hand-offs (and the copy of what went out, kept until the new home started the shard: retained-states.ts),
// and which retried sends must not be processed again (dedup-table.ts; those entries move with their shard's
// state, so a send is processed once across graceful moves).
import type { Logger } from '../../logging.js';
import type { ReplyTo, ShardingMessage } from '../protocol/messages.js';
import { DIRECT_STATE_SINCE, STREAMED_STATE_SINCE, asRestore } from '../protocol/state-messages.js';
import { packEntities } from '../protocol/packed-states.js';
import { PROTOCOL_VERSION } from '../../cluster/transport/wire-message.js';
import { DedupTable } from './dedup-table.js';
import type { HostOutcome } from './entity.js';
import { HostedShards, type HostedShardsOptions } from './hosted-shards.js';
import type { Envelope } from './region-buffer.js';
import type { RegionStats } from './region-stats.js';
import type { Shard, ShardEntityOptions } from './shard.js';
import type { ShardedTypeConfig } from '../core/sharded-type.js';
import type { ShardingContext } from '../core/sharding-context.js';
import { durableSettings } from './durable-shard.js';
import { messageCheck, type MessageCheck } from './message-check.js';

/** The check of a type with a message schema (issue 37), or none. */
function checkOf(settings: ShardedTypeConfig): { readonly check?: MessageCheck } {
  return settings.message === undefined ? {} : { check: messageCheck(settings.message) };
}
import type { StoppedStates } from './shard-state.js';
import { RetainedStates } from './retained-states.js';
import { StateTransfer, type EarlyChunks, type StateTransferOptions } from './state-transfer.js';

type ShardStateChunk = Extract<ShardingMessage, { readonly type: 'ShardStateChunk' }>;

export interface RegionHostOptions {
  readonly shards: HostedShardsOptions;
  readonly transfer: StateTransferOptions;
  /** Sends an entity's outcome to the asking node. */
  readonly reply: (replyTo: ReplyTo, outcome: HostOutcome) => void;
  /** The protocol version a node reads messages at (ShardingContext.protocolWith); this release's when absent. */
  readonly protocolWith?: ((node: string) => number) | undefined;
}

export class RegionHost {
  readonly shards: HostedShards;
  readonly transfer: StateTransfer;
  readonly retained: RetainedStates;
  private readonly dedup = new DedupTable();
  /** Shards whose HandOff named the new home their state goes to (protocol 10), by the HandOff's id. */
  private readonly stateTo = new Map<number, { readonly handOffId: number; readonly to: string }>();
  /** Shards whose held chunks went ahead of their stop (sendEarly), until the stop or a start here. */
  private readonly early = new Map<number, EarlyChunks>();

  constructor(
    private readonly options: RegionHostOptions,
    logger: Logger,
  ) {
    this.shards = new HostedShards(options.shards, logger);
    this.transfer = new StateTransfer(options.transfer);
    this.retained = new RetainedStates(options.transfer.config.maxHandOffStateBytes, (shardId) =>
      logger.warn({ shardId }, 'kept hand-off state over the bound dropped: lost if the coordinator lost its copy'),
    );
  }

  /** The host of a type's region on this node (its durable shards commit to the node's entity store). */
  static forType(
    settings: ShardedTypeConfig,
    ctx: ShardingContext,
    logger: Logger,
    entities: Omit<ShardEntityOptions, 'scheduler' | 'durable' | 'check'>,
    onStopped: HostedShardsOptions['onStopped'],
  ): RegionHost {
    const { typeName, behavior, passivation } = settings;
    const { config, self, scheduler } = ctx;
    return new RegionHost(
      {
        shards: {
          entities: { ...entities, ...durableSettings(settings, ctx), ...checkOf(settings), scheduler },
          ...{ typeName, behavior, passivation, self, onStopped, handOffTimeoutMs: config.handOffTimeoutMs },
        },
        transfer: { typeName, config, logger, events: ctx.events, now: () => scheduler.now() },
        reply: (replyTo, outcome) => ctx.reply(replyTo, outcome),
        protocolWith: ctx.protocolWith?.bind(ctx),
      },
      logger,
    );
  }

  /** The region's stats of hosting state and duplicates (see RegionStats). */
  stats(): ReturnType<StateTransfer['stats']> &
    Pick<RegionStats, 'messagesDeduplicated' | 'stateBytesRetained' | 'stateBytesWaiting' | 'entitiesPassivated'> {
    return {
      ...this.transfer.stats(),
      entitiesPassivated: this.shards.passivated,
      messagesDeduplicated: this.dedup.deduplicated,
      stateBytesRetained: this.retained.bytes,
      stateBytesWaiting: this.transfer.bytesWaiting,
    };
  }

  /** The shard, started now (its entities and processed sends restored from a hand-off) unless present. */
  ensure(shardId: number): { readonly shard: Shard; readonly started: boolean } {
    return this.shards.ensure(shardId, () => {
      this.retained.drop(shardId);
      this.early.delete(shardId);
      const restored = this.transfer.restore(shardId);
      if (restored !== undefined) {
        this.dedup.restore(shardId, restored.sends);
        this.dedup.advance(shardId, restored.progress);
      }
      return restored?.states;
    });
  }

  /** Queues a message for a running local shard; a retried copy of a send processed here is not run again. */
  deliver(shard: Shard, envelope: Envelope): void {
    const { replyTo, reliable } = envelope;
    if (replyTo === undefined) return shard.deliver(envelope.entityId, envelope.payload, undefined);
    const reply = (outcome: HostOutcome): void => this.options.reply(replyTo, outcome);
    if (reliable === undefined) return shard.deliver(envelope.entityId, envelope.payload, reply);
    const admitted = this.dedup.admit(replyTo.node, reliable, envelope, reply);
    if (admitted !== undefined)
      shard.deliver(envelope.entityId, envelope.payload, admitted, { node: replyTo.node, ...reliable });
  }

  /**
   * A shard stopped here: sends the chunks of its state and processed sends for `handOffId` (none without one:
   * nobody waits for them), keeps them until released, and reports the stop (`report`: its ShardStopped). They go
   * to the coordinator (`sendTo` without a node), after them the report, which frees the shard where the chunks
   * are held; or to the new home the HandOff named (`sendTo` turns them into its RestoreShardState, and a shard
   * with nothing to send sends one empty chunk, so the home waits for no more), the report ahead of them: the
   * coordinator's HostShard then travels while they are packed (the home waits for both). A destination that
   * reads `last` (STREAMED_STATE_SINCE) gets each chunk as soon as it is packed, an older one all once packed.
   */
  stopped(
    shardId: number,
    handOffId: number | undefined,
    stopped: StoppedStates,
    coordinator: string | undefined,
    sendTo: (chunk: ShardStateChunk, to: string | undefined) => void,
    report: (handOffId: number) => void,
  ): void {
    const sends = this.dedup.take(shardId);
    const direct = this.stateTo.get(shardId);
    const early = this.early.get(shardId);
    this.stateTo.delete(shardId);
    this.early.delete(shardId);
    if (handOffId === undefined) return;
    const to = direct?.handOffId === handOffId ? direct.to : undefined;
    // The chunks sent ahead of the stop are this HandOff's first parts wherever its state goes (a copy reshipped
    // later to the node that got them must not contradict them); a destination that did not get them gets them now.
    const ahead = early?.handOffId === handOffId ? early : undefined;
    // Safe ahead of the chunks: they and their kept copy are all in place before this node reads another message.
    if (to !== undefined) report(handOffId);
    const send = (chunk: ShardStateChunk): void => sendTo(chunk, to);
    const node = to ?? coordinator;
    const protocol = node === undefined ? 0 : (this.options.protocolWith?.(node) ?? PROTOCOL_VERSION);
    const streams = protocol >= STREAMED_STATE_SINCE;
    const progress = this.dedup.progressOf(shardId);
    const stream = streams ? send : undefined;
    if (stream !== undefined && ahead !== undefined && ahead.to !== to) for (const chunk of ahead.chunks) stream(chunk);
    let chunks = this.transfer.outgoing(shardId, handOffId, stopped, sends, stream, progress, ahead);
    if (to !== undefined && chunks.length === 0) {
      const typeName = this.options.shards.typeName;
      const empty = { typeName, shardId, handOffId, part: 0, parts: 1, entities: [], packed: packEntities([]) };
      chunks = [{ type: 'ShardStateChunk', ...empty }];
      if (streams) send(chunks[0] as ShardStateChunk);
    }
    this.retained.keep(shardId, handOffId, chunks);
    if (!streams) for (const chunk of chunks) send(chunk);
    if (to === undefined) report(handOffId);
  }

  /**
   * BeginHandOff named the shard's likely next home `to` and the coming HandOff's id (protocol 12): the chunks of
   * its held states that go on as they came are sent there now, the first parts of that HandOff's transfer, while
   * the regions stop routing to the shard and the coordinator waits for them (`first` runs before the first one:
   * the region writes its acknowledgement out ahead of them).
   * The stop's chunks follow them (and where the HandOff names another home, or none, they go there again first).
   * Once per HandOff; nothing for a shard not running here, holding no state, or a home that does not read
   * streamed chunks.
   */
  sendEarly(
    { shardId, handOffId, to }: { readonly shardId: number; readonly handOffId?: number; readonly to?: string },
    sendTo: (chunk: ShardStateChunk, to: string) => void,
    first: () => void,
  ): void {
    if (handOffId === undefined || to === undefined || this.early.get(shardId)?.handOffId === handOffId) return;
    const held = this.shards.get(shardId)?.heldNow;
    const protocol = this.options.protocolWith?.(to) ?? PROTOCOL_VERSION;
    if (held === undefined || protocol < DIRECT_STATE_SINCE || to === this.options.shards.self.toString()) return;
    const early = this.transfer.early(shardId, handOffId, to, held, this.dedup.progressOf(shardId));
    if (early.chunks.length === 0) return;
    first();
    for (const chunk of early.chunks) sendTo(chunk, to);
    this.early.set(shardId, early);
  }

  /**
   * HandOff: the shard stops if it runs here (true), its state to go to `to` when named (protocol 10), else to
   * the coordinator.
   */
  handOff(shardId: number, handOffId: number, to: string | undefined): boolean {
    if (to === undefined) this.stateTo.delete(shardId);
    else this.stateTo.set(shardId, { handOffId, to });
    return this.shards.handOff(shardId, handOffId);
  }

  /**
   * HostShard named transfer `transferId` (its state came straight from its old host): see StateTransfer.expect.
   * This node being that old host, it restores the copy it kept.
   */
  expect(shardId: number, transferId: number | undefined, nowMs: number): 'ready' | 'waiting' | 'fresh' {
    // A relayed state came ahead of its HostShard; a shard running here has started already.
    if (transferId === undefined || this.shards.get(shardId) !== undefined) return 'ready';
    for (const chunk of this.retained.copyOf(shardId, transferId)) this.transfer.received(asRestore(chunk));
    return this.transfer.expect(shardId, transferId, nowMs);
  }

  /**
   * This region's registration: the shards it hosts, those it is still stopping (a coordinator that took over
   * mid hand-off starts none of them elsewhere until they stop) and those whose state it keeps (that
   * coordinator asks for any whose shard has no home: the copy in transit was lost with its predecessor).
   */
  registration(typeName: string, proxy: boolean): Extract<ShardingMessage, { readonly type: 'RegisterRegion' }> {
    const { shards, retained } = this;
    return {
      type: 'RegisterRegion',
      typeName,
      proxy,
      shards: shards.running(),
      stopping: shards.stopping(),
      retained: retained.list(),
    };
  }

  /**
   * On each retry tick: forgets processed sends their senders retry no more, also of shards gone from here, and
   * incomplete transfers no start here waits for (StateTransfer.sweep).
   */
  tick(): void {
    this.dedup.prune();
    this.transfer.sweep();
  }

  /** Stops every shard here without a hand-off; their processed sends are forgotten with them. */
  async stopAll(): Promise<void> {
    const shardIds = [...this.shards.running(), ...this.shards.stopping()];
    this.early.clear();
    await this.shards.stopAll();
    for (const shardId of shardIds) if (this.shards.get(shardId) === undefined) this.dedup.forget(shardId);
  }
}
