// The dialling side of one connection's handshake, frame by frame: the Hello it opens with, the Proof it answers
// a Challenge with (of the cluster secret, when there is one), the check of the acceptor's proof in Accepted, and
// the protocol version both agreed. One instance per dial; the dialler (tcp-outbound.ts) owns the socket and
// acts on each step's verdict: keep shaking hands, the connection is open, or fail with a reason.
import { randomBytes } from 'node:crypto';
import type { Frame } from './frame-codec.js';
import { handshakeProof, readHandshake, sameProof, type Handshake } from './handshake.js';
import { PROTOCOL_FLOOR } from './protocol-versions.js';
import type { TcpHost } from './tcp-host.js';

/** What one frame from the acceptor means: answer `reply` (if any), then go on, open, or fail. */
export type HandshakeStep =
  | { readonly kind: 'continue'; readonly reply?: Handshake }
  | { readonly kind: 'open' }
  | { readonly kind: 'fail'; readonly reason: string; readonly reply?: Handshake };

export class ClientHandshake {
  private readonly nonce = randomBytes(16);
  private serverNonce: Buffer | undefined;
  private challengeRelease: string | undefined;
  /** The protocol version agreed in the Challenge; the floor until then. */
  version = PROTOCOL_FLOOR;

  constructor(
    private readonly host: TcpHost,
    private readonly target: string,
  ) {}

  /** The first frame of the dial. */
  hello(): Handshake {
    const { self, incarnation, protocols } = this.host;
    return {
      t: 'Hello',
      from: self.toString(),
      to: this.target,
      incarnation,
      nonce: this.nonce,
      ...protocols.announcement,
    };
  }

  /** One frame received before the connection opened. */
  step(frame: Frame): HandshakeStep {
    const handshake = frame.kind === 'handshake' ? readHandshake(frame) : undefined;
    if (!handshake) return { kind: 'fail', reason: 'unexpected frame from the accepting side' };
    // Without a secret anyone could be the acceptor anyway; with one, its refusals are not proved.
    const trusted = this.host.config.secret === undefined;
    if (handshake.t === 'Refused') {
      if (handshake.code === 'protocol_version') this.host.protocols.refuse(this.target, handshake.reason, trusted);
      return { kind: 'fail', reason: `peer refused the handshake: ${handshake.reason}` };
    }
    if (handshake.t === 'Challenge') return this.challenged(handshake, trusted);
    if (handshake.t === 'Accepted' && this.serverNonce) return this.accepted(handshake, this.serverNonce);
    return { kind: 'fail', reason: `unexpected ${handshake.t} during the handshake` };
  }

  private challenged(challenge: Extract<Handshake, { t: 'Challenge' }>, trusted: boolean): HandshakeStep {
    const { config, protocols, self } = this.host;
    const agreed = protocols.agreeAsDialler(self, this.target, challenge, trusted);
    const nonce = Buffer.from(challenge.nonce);
    const proof = config.secret
      ? handshakeProof(config.secret, 'client', self.toString(), this.target, nonce, this.nonce)
      : undefined;
    const reply: Handshake = proof ? { t: 'Proof', proof } : { t: 'Proof' };
    // Proved even so: an acceptor that authenticates us keeps the refusal for its health too.
    if (typeof agreed === 'string') return { kind: 'fail', reason: agreed, reply };
    this.version = agreed;
    this.serverNonce = nonce;
    this.challengeRelease = challenge.release;
    return { kind: 'continue', reply };
  }

  private accepted(accepted: Extract<Handshake, { t: 'Accepted' }>, serverNonce: Buffer): HandshakeStep {
    const { config, protocols, self } = this.host;
    if (config.secret) {
      if (!accepted.proof) return { kind: 'fail', reason: 'peer did not prove the cluster secret' };
      const expected = handshakeProof(config.secret, 'server', self.toString(), this.target, serverNonce, this.nonce);
      if (!sameProof(expected, accepted.proof))
        return { kind: 'fail', reason: 'peer proved a different cluster secret' };
    }
    // 0.2.0 acceptors named their release in the Challenge; later ones in the Accepted.
    const release = accepted.release ?? this.challengeRelease;
    protocols.noteAgreed(this.target, { release, protocol: this.version });
    return { kind: 'open' };
  }
}
