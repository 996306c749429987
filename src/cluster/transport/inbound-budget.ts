// The inbound byte budget of one transport: what all its connections together may hold in incomplete frames,
// shared so that a trusted peer (one that proved the cluster secret, or that the owner names a member) always
// finds room for its frames. Untrusted holders take what is free; when a trusted peer needs more than that,
// untrusted holders are disconnected, largest first, until its frame fits. Without this, a few strangers
// that keep the budget full (completing and restarting frames before their deadline) starve every member.
export interface BudgetHolder {
  /**
   * The budget takes this holder's share back for a trusted peer: the holder must end its connection. The
   * budget drops the share itself, whether or not the holder releases it.
   */
  evictForBudget(): void;
}

export interface Reservation {
  readonly granted: boolean;
  /** Untrusted holders disconnected to make room. */
  readonly evicted: number;
}

export class InboundBudget {
  private readonly shares = new Map<BudgetHolder, { bytes: number; trusted: boolean }>();
  private used = 0;

  constructor(readonly total: number) {}

  /** Bytes reserved by all holders. */
  get inUse(): number {
    return this.used;
  }

  /** Holders with a share above zero. */
  get holders(): number {
    return this.shares.size;
  }

  /** Bytes `holder` holds now. */
  heldBy(holder: BudgetHolder): number {
    return this.shares.get(holder)?.bytes ?? 0;
  }

  /**
   * Sets `holder`'s share to `bytes`. A share that shrinks, or grows within what is free, is granted. Beyond
   * that an untrusted holder is refused (and keeps its share: the caller ends it); a trusted one gets the room
   * of untrusted holders if that suffices, else it is refused without disconnecting anyone for nothing.
   */
  reserve(holder: BudgetHolder, bytes: number, trusted: boolean): Reservation {
    const current = this.heldBy(holder);
    const fits = (): boolean => this.used - this.heldBy(holder) + bytes <= this.total;
    if (bytes <= current || fits()) {
      this.set(holder, bytes, trusted);
      return { granted: true, evicted: 0 };
    }
    if (!trusted) return { granted: false, evicted: 0 };
    const candidates = [...this.shares]
      .filter(([other, share]) => other !== holder && !share.trusted)
      .sort((a, b) => b[1].bytes - a[1].bytes);
    const freeable = candidates.reduce((sum, [, share]) => sum + share.bytes, 0);
    if (this.used - current + bytes - freeable > this.total) return { granted: false, evicted: 0 };
    let evicted = 0;
    for (const [other] of candidates) {
      if (fits()) break;
      // Dropped first: the holder's own release, re-entering from evictForBudget, then finds nothing to drop.
      this.release(other);
      evicted++;
      other.evictForBudget();
    }
    this.set(holder, bytes, trusted);
    return { granted: true, evicted };
  }

  release(holder: BudgetHolder): void {
    const share = this.shares.get(holder);
    if (share === undefined) return;
    this.used -= share.bytes;
    this.shares.delete(holder);
  }

  private set(holder: BudgetHolder, bytes: number, trusted: boolean): void {
    this.release(holder);
    if (bytes <= 0) return;
    this.shares.set(holder, { bytes, trusted });
    this.used += bytes;
  }
}
