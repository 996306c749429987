// One durable shard on its host: the claim of the shard in the entity store (its epoch, taken when the shard
// starts here), each entity's start from its last committed row, and after every message the entity's snapshot
// and its settled reliable sends committed together (grouped per node) before the message's answer leaves; an
// answer that left both as committed writes nothing and waits for a check of the shard's epoch instead.
// A commit the store refuses (a later claim: another host has the shard) fences the whole shard here; one that
// fails (the store unavailable) resets the entity to its committed row. Either way nothing is acknowledged.
import {
  decodeFrameValue,
  decodeValue,
  encodeValue,
  encodeValueScratch,
} from '../../cluster/transport/message-codec.js';
import type { GroupCommit } from '../../entity-store/group-commit.js';
import { ActorTsError, type ErrorCode } from '../../errors.js';
import type { ShardedTypeConfig } from '../core/sharded-type.js';
import type { ShardingContext } from '../core/sharding-context.js';
import { describeError, type HostOutcome, type MessageGate } from './entity.js';
import { SendMarks, type SendMark } from './send-marks.js';
import { sameDigest, stateDigest, type StateDigest } from './state-digest.js';

/** The record format written to the store: [RECORD_VERSION, encoded state or null, stored marks]. */
const RECORD_VERSION = 1;

/** What every durable shard of a region shares. */
export interface DurableSettings {
  readonly commit: GroupCommit;
  readonly maxSnapshotBytes: number;
  /** Milliseconds, for restore latencies; default performance.now. */
  readonly now?: () => number;
  /** An entity's row was read (`durationMs`), for the restore latency metric. */
  readonly onRestored?: (durationMs: number) => void;
  /** A commit of this type was refused because a later host claimed its shard. */
  readonly onFenced?: (shardId: number) => void;
}

/** An entity's committed row, decoded. */
export interface LoadedEntity {
  /** Its last committed state; undefined for an entity never committed (or whose snapshot was undefined). */
  readonly state: unknown;
  readonly marks: SendMarks;
  /** The digest of its committed state's bytes; undefined when the store cannot check an epoch alone. */
  readonly digest: StateDigest | undefined;
}

/** A message's record: the bytes to commit with the digest of their state, or undefined when nothing changed. */
type Recorded =
  | { readonly ok: true; readonly value: Uint8Array | undefined; readonly digest: StateDigest | undefined }
  | { readonly ok: false; readonly error: string };

export class DurableShard {
  private epoch: number | undefined;
  private claiming: Promise<number> | undefined;
  private fencedAt: number | undefined;
  /** Per entity, its latest commit: resolves true when it committed, false otherwise (never rejects). */
  private readonly latest = new Map<string, Promise<boolean>>();
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    readonly typeName: string,
    readonly shardId: number,
    private readonly settings: DurableSettings,
    /** Called once when the shard is fenced: every entity of it must stop, acknowledging nothing more. */
    private readonly onFenced: () => void,
  ) {}

  get isFenced(): boolean {
    return this.fencedAt !== undefined;
  }

  /** Claims the shard (once; again after a failed attempt). Every commit of it carries the epoch this returns. */
  claim(): Promise<number> {
    this.claiming ??= this.settings.commit.store.claim({ typeName: this.typeName, shardId: this.shardId }).then(
      (epoch) => (this.epoch = epoch),
      (error: unknown) => {
        this.claiming = undefined;
        throw error;
      },
    );
    return this.claiming;
  }

  /** Loads an entity's committed row: after the claim, and after the commits of its previous incarnation. */
  async open(entityId: string): Promise<LoadedEntity> {
    await this.claim();
    await this.latest.get(entityId);
    const now = this.settings.now ?? (() => performance.now());
    const started = now();
    const bytes = await this.settings.commit.store.load(this.typeName, entityId);
    this.settings.onRestored?.(now() - started);
    const digest = this.settings.commit.checksEpochs ? stateDigest : undefined;
    return bytes === undefined
      ? { state: undefined, marks: new SendMarks(), digest: digest?.(null) }
      : decodeRecord(bytes, this.typeName, entityId, digest);
  }

  /**
   * The gate one incarnation's messages pass: a send it already settled is answered without running, and every
   * answer waits for the commit of the state it produced. `reset` is called when that state cannot be committed
   * (the incarnation is dropped; its next one starts from the store).
   */
  gate(
    entityId: string,
    loaded: LoadedEntity,
    snapshot: () => { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string },
    reset: () => void,
  ): MessageGate {
    const { marks } = loaded;
    let committed = loaded.digest;
    let broken = false;
    const breakOff = (): void => {
      if (broken) return;
      broken = true;
      reset();
    };
    return {
      before: (mark) => this.answerSettled(entityId, marks, mark),
      after: (outcome, mark) => {
        if (broken) return Promise.resolve(notAcknowledged('entity_store_unavailable', 'the entity was reset'));
        const record = this.record(snapshot, marks, outcome, mark, committed);
        if (!record.ok) {
          breakOff();
          return Promise.resolve({ ok: false, code: 'entity_snapshot_invalid', error: record.error });
        }
        if (record.value === undefined) return this.confirm(entityId, outcome);
        committed = record.digest;
        return this.commit(entityId, record.value, outcome, breakOff);
      },
    };
  }

  /**
   * Resolves once every commit and epoch check of this shard settled (a stopping shard reports its end after
   * this: its next host's claim must not come before a read this host is still confirming).
   */
  settled(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private answerSettled(
    entityId: string,
    marks: SendMarks,
    mark: SendMark | undefined,
  ): Promise<HostOutcome> | undefined {
    const seen = mark === undefined ? undefined : marks.seen(mark);
    if (seen === undefined) return undefined;
    const answer: HostOutcome = seen.failed
      ? { ok: false, error: 'the entity failed on this message (reported before)' }
      : { ok: true, value: null };
    // Settled in memory, maybe not committed yet: answered once the commit that carries it is durable.
    const latest = this.latest.get(entityId) ?? Promise.resolve(true);
    return latest.then((committed) =>
      committed ? answer : notAcknowledged('entity_store_unavailable', 'its commit failed'),
    );
  }

  /**
   * The record a message leaves, and its state's digest (undefined: unknown, so the next one writes). Only one
   * without a mark can leave the row as it was, and only digests tell (none with a store that cannot check an
   * epoch alone: written).
   */
  private record(
    snapshot: () => { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string },
    marks: SendMarks,
    outcome: HostOutcome,
    mark: SendMark | undefined,
    committed: StateDigest | undefined,
  ): Recorded {
    const taken = snapshot();
    if (!taken.ok) return { ok: false, error: `snapshot() threw: ${taken.error}` };
    // A reliable send is digested by nobody (its mark is a change): it stays the cheapest write, and an answer
    // right after it writes once more before the next ones can be told unchanged.
    const digesting = mark === undefined && this.settings.commit.checksEpochs;
    let encoded: Uint8Array | null;
    try {
      // To be digested: into the codec's scratch (valid until the next encoding), copied out only if written.
      const encode = digesting ? encodeValueScratch : encodeValue;
      encoded = taken.value === undefined ? null : encode(taken.value);
    } catch (error) {
      return { ok: false, error: `the snapshot is not encodable: ${describeError(error)}` };
    }
    const { maxSnapshotBytes } = this.settings;
    if (encoded !== null && encoded.byteLength > maxSnapshotBytes)
      return {
        ok: false,
        error: `the snapshot is ${encoded.byteLength} bytes, over maxEntitySnapshotBytes (${maxSnapshotBytes})`,
      };
    const digest = digesting ? stateDigest(encoded) : undefined;
    if (digest !== undefined && committed !== undefined && sameDigest(digest, committed))
      return { ok: true, value: undefined, digest };
    if (mark !== undefined) marks.add(mark, !outcome.ok);
    const state = encoded !== null && digesting ? new Uint8Array(encoded) : encoded;
    return { ok: true, value: encodeValue([RECORD_VERSION, state, marks.toStored()]), digest };
  }

  /**
   * The answer of a message that left its entity's row as committed: once the commits before it (of this
   * entity) are durable and the shard's epoch, read after it ran, is still this host's. Nothing is written.
   */
  private confirm(entityId: string, outcome: HostOutcome): Promise<HostOutcome> {
    const { typeName, shardId, epoch } = this;
    if (epoch === undefined || this.fencedAt !== undefined) {
      return Promise.resolve(notAcknowledged('entity_fenced', `shard ${shardId} of ${typeName} is fenced here`));
    }
    const before = this.latest.get(entityId) ?? Promise.resolve(true);
    const checked = this.settings.commit.check({ typeName, shardId, epoch });
    this.inFlight++;
    const answer = Promise.all([before, checked]).then(
      ([durable, result]): HostOutcome => {
        if (result === 'fenced') {
          this.fence(epoch);
          return notAcknowledged('entity_fenced', `a later host claimed shard ${shardId} of ${typeName}`);
        }
        return durable ? outcome : notAcknowledged('entity_store_unavailable', 'a commit before it failed');
      },
      (error: unknown) => notAcknowledged('entity_store_unavailable', describeError(error)),
    );
    void answer.then(() => this.ended());
    return answer;
  }

  private commit(
    entityId: string,
    value: Uint8Array,
    outcome: HostOutcome,
    breakOff: () => void,
  ): Promise<HostOutcome> {
    const { typeName, shardId, epoch } = this;
    if (epoch === undefined || this.fencedAt !== undefined) {
      return Promise.resolve(notAcknowledged('entity_fenced', `shard ${shardId} of ${typeName} is fenced here`));
    }
    this.inFlight++;
    const done = this.settings.commit.write({ typeName, entityId, shardId, epoch, value }).then(
      (result): HostOutcome => {
        if (result === 'committed') return outcome;
        this.fence(epoch);
        return notAcknowledged('entity_fenced', `a later host claimed shard ${shardId} of ${typeName}`);
      },
      (error: unknown): HostOutcome => {
        breakOff();
        return notAcknowledged('entity_store_unavailable', describeError(error));
      },
    );
    const committed = done.then((answer) => answer === outcome);
    this.latest.set(entityId, committed);
    void committed.then(() => {
      // Only entities with a commit under way stay in the map: a busy shard's map does not grow with every entity.
      if (this.latest.get(entityId) === committed) this.latest.delete(entityId);
      this.ended();
    });
    return done;
  }

  /** A commit or an epoch check settled. */
  private ended(): void {
    this.inFlight--;
    if (this.inFlight > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private fence(epoch: number): void {
    if (this.fencedAt !== undefined) return;
    this.fencedAt = epoch;
    this.settings.onFenced?.(this.shardId);
    this.onFenced();
  }
}

/**
 * The durable settings of a type's shards, or none for an in-memory type; `invalid_argument` for a durable
 * type on a node without an entity store.
 */
export function durableSettings(
  settings: Pick<ShardedTypeConfig, 'typeName' | 'durable'>,
  ctx: Pick<ShardingContext, 'entityStore' | 'config'>,
): { readonly durable?: DurableSettings } {
  if (!settings.durable) return {};
  const { typeName } = settings;
  const store = ctx.entityStore;
  if (store === undefined) {
    throw new ActorTsError(
      'invalid_argument',
      `entity type ${JSON.stringify(typeName)} is durable, but this node has no entity store (entityStore, --entity-store)`,
    );
  }
  return {
    durable: {
      commit: store.commit,
      maxSnapshotBytes: ctx.config.maxEntitySnapshotBytes,
      onRestored: (durationMs) => store.onRestored?.(typeName, durationMs),
      onFenced: (shardId) => store.onFenced?.(typeName, shardId),
    },
  };
}

/** An outcome that acknowledges nothing: an ask fails with `code`; a send is not answered, and its sender retries. */
export function notAcknowledged(code: ErrorCode, why: string): HostOutcome {
  return { ok: false, code, retry: true, error: `not committed (${code}): ${why}` };
}

function decodeRecord(
  bytes: Uint8Array,
  typeName: string,
  entityId: string,
  digest: ((encoded: Uint8Array | null) => StateDigest) | undefined,
): LoadedEntity {
  const invalid = (why: string): ActorTsError =>
    new ActorTsError('entity_state_invalid', `the stored row of ${typeName} entity ${JSON.stringify(entityId)} ${why}`);
  // The row's bytes are the store's copy, used by nothing else: the state inside is read as a view of them.
  const decoded = decodeFrameValue(bytes);
  if (!decoded.ok) throw invalid(`does not decode: ${decoded.reason}`);
  const record = decoded.value;
  if (!Array.isArray(record) || record.length !== 3 || record[0] !== RECORD_VERSION)
    throw invalid(`is not a version ${RECORD_VERSION} entity record`);
  const [, rawState, rawMarks] = record as [number, unknown, unknown];
  const marks = SendMarks.fromStored(rawMarks);
  if (marks === undefined) throw invalid('has malformed send marks');
  if (rawState === null) return { state: undefined, marks, digest: digest?.(null) };
  if (!(rawState instanceof Uint8Array)) throw invalid('has a state that is not bytes');
  const state = decodeValue(rawState);
  if (!state.ok) throw invalid(`has a state that does not decode: ${state.reason}`);
  return { state: state.value, marks, digest: digest?.(rawState) };
}
