// Whether this node's inbound side is starved, as health reports it: the transport counts member frames refused
// for want of inbound budget (and strangers disconnected for holding it); a count that rose within the last
// window means members' frames are being lost now.
import type { InboundHealth } from '../management/replication-health.js';

/** Judges the transport's counters over a sliding window; `now` is a monotonic clock in ms. */
export function inboundHealthOf(
  stats: () => { readonly inboundStarved: number; readonly peersDisconnectedForBudget: number },
  windowMs = 60_000,
  now: () => number = () => performance.now(),
): () => InboundHealth {
  let lastStarved = stats().inboundStarved;
  let starvedAt: number | undefined;
  return () => {
    const { inboundStarved, peersDisconnectedForBudget } = stats();
    const at = now();
    if (inboundStarved > lastStarved) {
      lastStarved = inboundStarved;
      starvedAt = at;
    }
    if (starvedAt !== undefined && at - starvedAt <= windowMs) {
      const strangers =
        peersDisconnectedForBudget > 0
          ? `; ${peersDisconnectedForBudget} strangers were disconnected for holding it (set --cluster-secret)`
          : '';
      return {
        starved: true,
        reason: `members' frames were refused for want of inbound budget within the last ${Math.round(windowMs / 1000)} s${strangers}`,
      };
    }
    return { starved: false };
  };
}
