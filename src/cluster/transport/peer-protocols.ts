// What this node learned of each peer in the handshakes: the release it announced and the protocol version the
// two agreed on, per direction (we dial a peer to send, it dials us to send back); and the peers refused for want
// of a common version, which health reports as `degraded` for a minute unless a later handshake with that peer
// succeeded. The TCP connections write here; the members view and health read it.
import { performance } from 'node:perf_hooks';
import type { NodeAddress } from '../address.js';
import { announcedRange, type Announcement, type Handshake } from './handshake.js';
import {
  LEGACY_RANGE,
  describeRange,
  negotiateVersion,
  noCommonVersion,
  type ProtocolRange,
} from './protocol-versions.js';

/** A peer as its latest completed handshake described it. */
export interface PeerProtocol {
  /** The release it announced (its package version); undefined for a release before negotiation. */
  readonly release: string | undefined;
  /** The version agreed on the latest connection with it. */
  readonly protocol: number;
}

/** How long a refusal keeps health `degraded` when nothing better was heard of that peer since. */
export const PROTOCOL_REFUSAL_WINDOW_MS = 60_000;

/** Peers remembered in each table; the least recently heard of goes first (strangers may dial from anywhere). */
const MAX_PEERS = 4096;

function remember<V>(table: Map<string, V>, key: string, value: V): void {
  table.delete(key);
  table.set(key, value);
  if (table.size > MAX_PEERS) table.delete(table.keys().next().value as string);
}

export class PeerProtocols {
  private readonly agreed = new Map<string, PeerProtocol>();
  private readonly refusals = new Map<string, { readonly reason: string; readonly at: number }>();

  /** What this node says of itself in every handshake: its range of protocol versions and its release. */
  readonly announcement: Announcement;
  private readonly range: ProtocolRange;

  constructor(
    own: { readonly protocolRange: ProtocolRange; readonly release: string },
    /** Counts and logs a refusal (the transport's counter and its rate-limited peer log). */
    private readonly onRefused: (peer: string, reason: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.range = own.protocolRange;
    this.announcement = {
      protocolMin: own.protocolRange.min,
      protocolMax: own.protocolRange.max,
      release: own.release,
    };
  }

  /**
   * A handshake with `peer` failed for want of a common protocol version: counted and logged; kept for health
   * when `forHealth` (the peer is authenticated, or no secret is configured, so anyone could have been it).
   */
  refuse(peer: string, reason: string, forHealth: boolean): void {
    this.onRefused(peer, reason);
    if (forHealth) this.noteRefused(peer, reason);
  }

  /** A handshake with `peer` completed at `protocol`. */
  noteAgreed(peer: string, protocol: PeerProtocol): void {
    remember(this.agreed, peer, protocol);
    this.refusals.delete(peer);
  }

  private noteRefused(peer: string, reason: string): void {
    remember(this.refusals, peer, { reason, at: this.now() });
  }

  /**
   * The highest version this node and `peer` both speak, from what the peer announced (a release before
   * negotiation announces no range: it speaks the legacy one); or why there is none, naming both nodes and ranges.
   * Both ends of a connection decide through here.
   */
  negotiate(self: NodeAddress, peer: string, theirs: Announcement): number | string {
    const range = announcedRange(theirs) ?? LEGACY_RANGE;
    return (
      negotiateVersion(this.range, range) ??
      noCommonVersion({ node: self.toString(), range: this.range }, { node: peer, range })
    );
  }

  /**
   * The version of a connection we dialled, from the acceptor's Challenge: the one it chose (which must be in our
   * range), or, from an acceptor that chose none, what `negotiate` finds. A string says why there is none; a
   * refusal for want of a common version is counted here.
   */
  agreeAsDialler(
    self: NodeAddress,
    peer: string,
    challenge: Extract<Handshake, { t: 'Challenge' }>,
    trusted: boolean,
  ): number | string {
    const own = this.range;
    if (challenge.version !== undefined) {
      if (challenge.version >= own.min && challenge.version <= own.max) return challenge.version;
      return `${peer} chose protocol version ${challenge.version}, outside ${describeRange(own)} of ${self.toString()}`;
    }
    const agreed = this.negotiate(self, peer, challenge);
    if (typeof agreed === 'string') this.refuse(peer, agreed, trusted);
    return agreed;
  }

  /** What the latest handshake with `peer` agreed, if one completed. */
  of(peer: string): PeerProtocol | undefined {
    return this.agreed.get(peer);
  }

  /** One line per peer refused for its protocol within the window: what makes health `degraded`. */
  problems(): string[] {
    const now = this.now();
    const lines: string[] = [];
    for (const [peer, refusal] of this.refusals) {
      if (now - refusal.at > PROTOCOL_REFUSAL_WINDOW_MS) this.refusals.delete(peer);
      else lines.push(`connection with ${peer} refused (protocol_version): ${refusal.reason}`);
    }
    return lines;
  }
}
