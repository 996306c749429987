// Confirmed deaths: a member that went silent, or whose connection ended from its side, is probed at its address
// (Transport.probe); two refusals in a row, CONFIRM_SPACING_MS apart, with no sign of life since, confirm that
// its process is gone (after a lost connection, a first answer that is not a refusal is probed again:
// CLOSE_REPROBES). The failure detector's silence alone never does: a paused, busy or CPU-starved process and a cut link are silent too,
// but their host still accepts connections (or answers nothing), so they stay on the slow, stable-after path.
// A confirmation is evidence, not an opinion: it lets the leader down the member without waiting out
// stable-after, and the coordinator drop its down-removal margin (docs/design.md, "Confirmed deaths").
import type { NodeAddress } from '../address.js';
import type { Cancellable, Scheduler } from '../scheduler.js';
import type { ProbeResult } from '../transport/transport.js';

/** Refusals in a row that confirm a death. */
export const CONFIRM_REFUSALS = 2;
/**
 * Delay between the probes of one confirmation. Not what makes a confirmation safe (docs/design.md, "Confirmed
 * deaths": a process that may run shards holds its listening socket, and a restart on the port is a new
 * incarnation, which accepts and voids the count): the second refusal only guards against one stray reset.
 */
export const CONFIRM_SPACING_MS = 25;
/** A confirmation holds this long after its latest refusal; a suspect still silent is probed again meanwhile. */
export const CONFIRMATION_FRESH_MS = 2_500;
/** Least time between two probes of one suspect outside a confirmation under way. */
export const REPROBE_AFTER_MS = 1_000;
/**
 * The delays of the probes repeated when the first answers after a lost connection are not refusals: every
 * CONFIRM_SPACING_MS for 200 ms, then each twice as late (the last about 0.95 s after the close). A process
 * killed with SIGKILL has its connections reset before the kernel closes its listening socket, so a probe sent
 * on the reset is accepted about one time in ten to three, and on a loaded machine the listening socket stayed
 * open for 100-500 ms after the reset (bench/README.md, issue 40); then the port refuses. Probing often while
 * that is likely finds the first refusal within CONFIRM_SPACING_MS of it, not up to twice as late. Only
 * refusals count, so these probes confirm nothing a refusal would not; a peer that only dropped a connection
 * costs this many connects.
 */
export const CLOSE_REPROBE_DELAYS_MS: readonly number[] = [25, 25, 25, 25, 25, 25, 25, 25, 50, 100, 200, 400];
/** How many probes a lost connection may add (CLOSE_REPROBE_DELAYS_MS). */
export const CLOSE_REPROBES = CLOSE_REPROBE_DELAYS_MS.length;

interface Suspect {
  readonly address: NodeAddress;
  refusals: number;
  lastRefusedAt: number;
  lastProbeAt: number;
  inFlight: boolean;
  next: Cancellable | undefined;
  /** Accepts still answered by a probe again (CLOSE_REPROBES after a lost connection), until a refusal. */
  closeReprobes: number;
}

export interface DeathConfirmationsOptions {
  /** Undefined when the transport cannot probe: then nothing is ever confirmed. */
  readonly probe: ((to: NodeAddress) => Promise<ProbeResult>) | undefined;
  readonly scheduler: Scheduler;
  /** A suspect's death was just confirmed, or a confirmation renewed by a later refusal. */
  readonly onConfirmed: (key: string) => void;
}

export class DeathConfirmations {
  private readonly suspects = new Map<string, Suspect>();
  private stopped = false;

  constructor(private readonly options: DeathConfirmationsOptions) {}

  /**
   * `key` is silent: probe it now unless a probe is under way or was made within REPROBE_AFTER_MS. `atOnce`
   * (its connection just ended from its side) skips the REPROBE_AFTER_MS wait, never a probe under way.
   */
  suspect(key: string, address: NodeAddress, atOnce = false): void {
    if (this.stopped || this.options.probe === undefined) return;
    let suspect = this.suspects.get(key);
    if (suspect === undefined) {
      const fresh = { refusals: 0, lastRefusedAt: 0, lastProbeAt: -Infinity, inFlight: false, closeReprobes: 0 };
      suspect = { address, ...fresh, next: undefined };
      this.suspects.set(key, suspect);
    }
    // Also when a probe is under way: what it gets may come from the dying process's listening socket.
    if (atOnce) suspect.closeReprobes = CLOSE_REPROBES;
    if (suspect.inFlight || suspect.next !== undefined) return;
    if (!atOnce && this.options.scheduler.now() - suspect.lastProbeAt < REPROBE_AFTER_MS) return;
    this.probe(key, suspect);
  }

  /** True while `key`'s death is confirmed: CONFIRM_REFUSALS refusals in a row, the latest still fresh. */
  confirmed(key: string, now: number): boolean {
    const suspect = this.suspects.get(key);
    return (
      suspect !== undefined &&
      suspect.refusals >= CONFIRM_REFUSALS &&
      now - suspect.lastRefusedAt <= CONFIRMATION_FRESH_MS
    );
  }

  /** The keys suspected, confirmed or not, until a sign of life or `stop`. */
  keys(): IterableIterator<string> {
    return this.suspects.keys();
  }

  /** A sign of life from `key` (a heartbeat, an ack): whatever was gathered against it is void. */
  alive(key: string): void {
    const suspect = this.suspects.get(key);
    if (suspect === undefined) return;
    suspect.next?.cancel();
    this.suspects.delete(key);
  }

  stop(): void {
    this.stopped = true;
    for (const key of [...this.suspects.keys()]) this.alive(key);
  }

  private probe(key: string, suspect: Suspect): void {
    const probe = this.options.probe;
    if (probe === undefined) return;
    const now = this.options.scheduler.now();
    // Refusals older than a confirmation holds say nothing now (the address may have been restarted and
    // killed again meanwhile): a new confirmation takes CONFIRM_REFUSALS fresh ones.
    if (now - suspect.lastRefusedAt > CONFIRMATION_FRESH_MS) suspect.refusals = 0;
    suspect.inFlight = true;
    suspect.lastProbeAt = now;
    void probe(suspect.address).then((result) => {
      suspect.inFlight = false;
      // Forgotten meanwhile (a sign of life): a late answer says nothing any more.
      if (this.stopped || this.suspects.get(key) !== suspect) return;
      if (result !== 'refused') {
        // An accept after a refusal is a process back on the port (a new incarnation): no probe again for it.
        const again = suspect.refusals === 0 && suspect.closeReprobes > 0;
        suspect.refusals = 0;
        if (!again) return;
        const delay = CLOSE_REPROBE_DELAYS_MS[CLOSE_REPROBES - suspect.closeReprobes] ?? CONFIRM_SPACING_MS;
        suspect.closeReprobes--;
        return this.probeLater(key, suspect, delay);
      }
      suspect.refusals++;
      suspect.lastRefusedAt = this.options.scheduler.now();
      if (suspect.refusals < CONFIRM_REFUSALS) return this.probeLater(key, suspect);
      suspect.closeReprobes = 0;
      this.options.onConfirmed(key);
    });
  }

  /** The next probe of a confirmation under way, `delayMs` from now. */
  private probeLater(key: string, suspect: Suspect, delayMs = CONFIRM_SPACING_MS): void {
    suspect.next = this.options.scheduler.setTimeout(() => {
      suspect.next = undefined;
      if (!this.stopped && this.suspects.get(key) === suspect) this.probe(key, suspect);
    }, delayMs);
  }
}
