// The injectable log sink shared by the store and the replicator: structured events, no logger dependency.
/** Default sink: silent, so a library never writes to stdout unless asked to. */
export const silentLog = () => { };
//# sourceMappingURL=log.js.map