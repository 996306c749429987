// The listeners of `Transport.onConnectionLost`, shared by the TCP and in-memory transports: an established
// connection with a peer ended from the peer's side, a reason to probe that peer now (death-confirmation.ts).
import type { NodeAddress } from '../address.js';

/** A set of connection-lost listeners; one that throws is reported to `onError` and the others still run. */
export class ConnectionLostListeners {
  private readonly listeners = new Set<(peer: NodeAddress) => void>();

  /** `onError` hears of every listener that threw, with the peer it was told about. */
  constructor(private readonly onError: (error: unknown, peer: NodeAddress) => void) {}

  /** Adds `listener` (the same function twice is two subscriptions); returns its unsubscribe function. */
  add(listener: (peer: NodeAddress) => void): () => void {
    const entry = (peer: NodeAddress): void => listener(peer);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Calls every listener with `peer`. */
  emit(peer: NodeAddress): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(peer);
      } catch (error) {
        this.onError(error, peer);
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
