// The injectable log sink shared by the store and the replicator: structured events, no logger dependency.

export interface PlacementLogEvent {
  readonly level: 'warn' | 'info';
  readonly message: string;
  readonly details?: object;
}

export type PlacementLog = (event: PlacementLogEvent) => void;

/** Default sink: silent, so a library never writes to stdout unless asked to. */
export const silentLog: PlacementLog = () => {};
