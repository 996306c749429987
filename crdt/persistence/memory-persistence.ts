// The in-memory PlacementPersistence: today's behaviour (nothing survives the process), with the same
// semantics as the lmdb one (group commit, snapshot replacing the log, typed errors). A MemoryVolume
// stands in for a data directory, so tests can "restart" a node inside one process.
import type { CommitPlan } from './persistence-queue.js';
import {
  PersistenceError,
  resolveOptions,
  type PersistedState,
  type PersistenceOptions,
  type PlacementPersistence,
} from './persistence.js';
import { QueuedPersistence } from './queued-persistence.js';

/** What a memory persistence keeps; outlives the instances opened on it, like a directory does. */
export interface MemoryVolume {
  readonly name: string;
}

interface VolumeData {
  snapshot: { readonly bytes: Uint8Array; readonly coversBelow: number } | undefined;
  log: Array<{ readonly sequence: number; readonly bytes: Uint8Array }>;
  open: boolean;
}

const volumes = new WeakMap<MemoryVolume, VolumeData>();
let volumeCount = 0;

/**
 * A fresh in-memory volume: hand the same one to successive `memoryPersistence` instances to simulate a restart with
 * the data kept (tests, demos).
 */
export function createMemoryVolume(): MemoryVolume {
  const volume = Object.freeze({ name: `memory volume ${++volumeCount}` });
  volumes.set(volume, { snapshot: undefined, log: [], open: false });
  return volume;
}

/** Options of `memoryPersistence`: the shared record limits plus the volume the data lives on. */
export interface MemoryPersistenceOptions extends PersistenceOptions {
  /** Where the data lives. Default: a new volume nobody else holds, i.e. nothing survives this instance. */
  readonly volume?: MemoryVolume;
}

/** Opens `options.volume` (or a fresh one). Throws 'locked' while another instance holds the volume. */
export function memoryPersistence(options?: MemoryPersistenceOptions): PlacementPersistence {
  const { maxRecordBytes, now } = resolveOptions(options);
  const volume = options?.volume ?? createMemoryVolume();
  const data = volumes.get(volume);
  if (data === undefined) throw new PersistenceError('invalid_option', 'volume must come from createMemoryVolume()');
  if (data.open) throw new PersistenceError('locked', `${volume.name} is in use by another open persistence`);
  data.open = true;
  return new MemoryPersistence(volume.name, data, maxRecordBytes, now);
}

class MemoryPersistence extends QueuedPersistence {
  private closed: Promise<void> | undefined;

  constructor(
    private readonly name: string,
    private readonly data: VolumeData,
    maxRecordBytes: number,
    now: () => number,
  ) {
    const { snapshot, log } = data;
    const committed = {
      snapshot:
        snapshot === undefined ? undefined : { coversBelow: snapshot.coversBelow, bytes: snapshot.bytes.length },
      log: log.map(({ sequence, bytes }) => ({ sequence, bytes: bytes.length })),
    };
    super(name, now, committed, maxRecordBytes);
  }

  async load(): Promise<PersistedState> {
    if (this.closed !== undefined)
      throw new PersistenceError('closed', `placement persistence on ${this.name} is closed`);
    return { snapshot: this.data.snapshot?.bytes.slice(), log: this.data.log.map(({ bytes }) => bytes.slice()) };
  }

  close(): Promise<void> {
    this.closed ??= this.queue.close().then(() => {
      this.data.open = false;
    });
    return this.closed;
  }

  protected storage(): { path: null; bytesOnDisk: number; fileProblem: null } {
    return { path: null, bytesOnDisk: 0, fileProblem: null };
  }

  protected commit(plan: CommitPlan): void {
    if (plan.snapshot !== undefined) {
      const { coversBelow } = plan.snapshot;
      this.data.snapshot = plan.snapshot;
      this.data.log = this.data.log.filter(({ sequence }) => sequence >= coversBelow);
    }
    this.data.log.push(...plan.appends);
  }
}
