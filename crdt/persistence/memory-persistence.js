import { PersistenceError, resolveOptions } from './persistence.js';
import { QueuedPersistence } from './queued-persistence.js';
const volumes = new WeakMap();
let volumeCount = 0;
/**
 * A fresh in-memory volume: hand the same one to successive `memoryPersistence` instances to simulate a restart with
 * the data kept (tests, demos).
 */
export function createMemoryVolume() {
    const volume = Object.freeze({ name: `memory volume ${++volumeCount}` });
    volumes.set(volume, { snapshot: undefined, log: [], open: false });
    return volume;
}
/** Opens `options.volume` (or a fresh one). Throws 'locked' while another instance holds the volume. */
export function memoryPersistence(options) {
    const { maxRecordBytes, now } = resolveOptions(options);
    const volume = options?.volume ?? createMemoryVolume();
    const data = volumes.get(volume);
    if (data === undefined)
        throw new PersistenceError('invalid_option', 'volume must come from createMemoryVolume()');
    if (data.open)
        throw new PersistenceError('locked', `${volume.name} is in use by another open persistence`);
    data.open = true;
    return new MemoryPersistence(volume.name, data, maxRecordBytes, now);
}
class MemoryPersistence extends QueuedPersistence {
    name;
    data;
    closed;
    constructor(name, data, maxRecordBytes, now) {
        const { snapshot, log } = data;
        const committed = {
            snapshot: snapshot === undefined ? undefined : { coversBelow: snapshot.coversBelow, bytes: snapshot.bytes.length },
            log: log.map(({ sequence, bytes }) => ({ sequence, bytes: bytes.length })),
        };
        super(name, now, committed, maxRecordBytes);
        this.name = name;
        this.data = data;
    }
    async load() {
        if (this.closed !== undefined)
            throw new PersistenceError('closed', `placement persistence on ${this.name} is closed`);
        return { snapshot: this.data.snapshot?.bytes.slice(), log: this.data.log.map(({ bytes }) => bytes.slice()) };
    }
    close() {
        this.closed ??= this.queue.close().then(() => {
            this.data.open = false;
        });
        return this.closed;
    }
    storage() {
        return { path: null, bytesOnDisk: 0 };
    }
    commit(plan) {
        if (plan.snapshot !== undefined) {
            const { coversBelow } = plan.snapshot;
            this.data.snapshot = plan.snapshot;
            this.data.log = this.data.log.filter(({ sequence }) => sequence >= coversBelow);
        }
        this.data.log.push(...plan.appends);
    }
}
//# sourceMappingURL=memory-persistence.js.map