// The replicator's per-peer log lines (a rejected sync frame, a failed send) aggregated the way the transport
// aggregates what peers cause: a peer can send frames at will, and 900 bad frames were 900 lines (273 KB).
// One line per kind of event, peer and error code per interval, saying how many it stands for.
import type { PlacementLog, PlacementLogEvent } from '../../crdt/index.js';
import { LogThrottle, type LogThrottleOptions } from '../logging.js';

export function aggregatedPeerLog(log: PlacementLog, options: LogThrottleOptions = {}): PlacementLog {
  const throttle = new LogThrottle(options);
  return (event: PlacementLogEvent) => {
    const details = (event.details ?? {}) as Record<string, unknown>;
    const peer = details['peer'];
    if (typeof peer !== 'string') return log(event);
    // "rejected placement sync frame from X: ..." -> "rejected placement sync frame"
    const kind = event.message.split(/ (?:from|to) /, 1)[0] ?? event.message;
    const code = typeof details['code'] === 'string' ? details['code'] : '';
    const suppressed = throttle.admit(`${kind}\u0000${peer}\u0000${code}`);
    if (suppressed === undefined) return;
    log(suppressed > 0 ? { ...event, details: { ...details, similarSinceLastLine: suppressed } } : event);
  };
}
