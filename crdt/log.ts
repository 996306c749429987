// The injectable log sink shared by the store and the replicator: structured events, no logger dependency.

/**
 * One diagnostic from the store or replicator (a refused frame, a far-ahead peer clock); structured so any logger can
 * take it.
 */
export interface PlacementLogEvent {
  readonly level: 'warn' | 'info';
  readonly message: string;
  readonly details?: object;
}

/**
 * Where the store and replicator send their diagnostics; the default is silent, so a library never writes to stdout
 * unless asked.
 */
export type PlacementLog = (event: PlacementLogEvent) => void;

/** Default sink: silent, so a library never writes to stdout unless asked to. */
export const silentLog: PlacementLog = () => {};
