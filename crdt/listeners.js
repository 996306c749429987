export class StoreListeners {
    log;
    updates = new Set();
    changes = new Set();
    running = 0;
    constructor(log) {
        this.log = log;
    }
    get busy() {
        return this.running > 0;
    }
    onUpdate(listener) {
        this.updates.add(listener);
        return () => this.updates.delete(listener);
    }
    onChange(listener) {
        this.changes.add(listener);
        return () => this.changes.delete(listener);
    }
    emitUpdate(bytes, origin) {
        for (const listener of [...this.updates])
            this.guard('update', () => listener(bytes, origin));
    }
    emitChange(typeName, shardIds) {
        for (const listener of [...this.changes])
            this.guard('change', () => listener(typeName, shardIds));
    }
    guard(kind, call) {
        this.running++;
        try {
            call();
        }
        catch (error) {
            this.log({
                level: 'warn',
                message: `placement ${kind} listener threw: ${error instanceof Error ? error.message : String(error)}`,
                details: { error },
            });
        }
        finally {
            this.running--;
        }
    }
}
//# sourceMappingURL=listeners.js.map