// Typed errors of the sharding runtime: every rejection of bad input carries a stable `code`
// that the management API maps to its `{ error, message }` body.
/**
 * The runtime's error: `code` says which rule was broken (bad input, unknown type, timeout, ...), the message says
 * what and why. The runtime (outside the store, which throws PlacementStoreError) throws or rejects with it.
 */
export class ActorTsError extends Error {
    code;
    constructor(code, message) {
        super(message);
        this.name = 'ActorTsError';
        this.code = code;
    }
}
//# sourceMappingURL=errors.js.map