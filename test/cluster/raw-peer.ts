// Test helper: a raw TCP client that performs the dialling side of the handshake with the transport's own
// handshake encoder (and the cluster secret, when given, as an authenticated but buggy or hostile peer would),
// then hands over the open socket to write arbitrary bytes on.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { FrameDecoder } from '../../src/cluster/transport/frame-codec.js';
import { handshakeFrame, handshakeProof, readHandshake } from '../../src/cluster/transport/handshake.js';
import { PROTOCOL_RANGE } from '../../src/cluster/transport/protocol-versions.js';

/** The Hello's range fields for `range`; none for a legacy peer. */
function announced(range: NonNullable<RawPeerOptions['protocolRange']>): {
  protocolMin?: number;
  protocolMax?: number;
} {
  return range === 'legacy' ? {} : { protocolMin: range.min, protocolMax: range.max };
}

export interface RawPeerOptions {
  readonly host?: string;
  readonly port: number;
  /** The address the target node answers to, e.g. `app@127.0.0.1:7701`. */
  readonly to: string;
  /**
   * The address this peer claims; use a distinct one per connection (the same address with another incarnation replaces
   * the earlier connections).
   */
  readonly from: string;
  readonly secret?: string;
  readonly incarnation?: string;
  /**
   * The range this peer announces: this release's (PROTOCOL_RANGE) by default, so its frames at PROTOCOL_VERSION
   * are the agreed version's; `legacy` announces none, as a release before negotiation did.
   */
  readonly protocolRange?: { readonly min: number; readonly max: number } | 'legacy';
}

/** Resolves with an authenticated socket; rejects when the node refuses or closes the connection. */
export function authenticatedSocket(options: RawPeerOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: options.host ?? '127.0.0.1', port: options.port });
    const clientNonce = randomBytes(16);
    const decoder = new FrameDecoder({ maxFrameBytes: 4096 });
    let done = false;
    const fail = (why: string): void => {
      if (done) return;
      done = true;
      socket.destroy();
      reject(new Error(`handshake with ${options.to} failed: ${why}`));
    };
    socket.on('error', (error) => fail(error.message));
    socket.on('close', () => fail('connection closed'));
    socket.on('connect', () => {
      socket.write(
        handshakeFrame({
          t: 'Hello',
          from: options.from,
          to: options.to,
          incarnation: options.incarnation ?? 'raw-peer',
          nonce: clientNonce,
          ...announced(options.protocolRange ?? PROTOCOL_RANGE),
        }),
      );
    });
    const onData = (chunk: Buffer): void => {
      const result = decoder.push(chunk);
      for (const frame of result.frames) {
        const handshake = readHandshake(frame);
        if (handshake?.t === 'Challenge') {
          const proof = options.secret
            ? handshakeProof(
                Buffer.from(options.secret),
                'client',
                options.from,
                options.to,
                handshake.nonce,
                clientNonce,
              )
            : undefined;
          socket.write(handshakeFrame(proof ? { t: 'Proof', proof } : { t: 'Proof' }));
        } else if (handshake?.t === 'Accepted') {
          done = true;
          socket.off('data', onData);
          resolve(socket);
          return;
        } else {
          return fail(handshake?.t === 'Refused' ? `refused: ${handshake.reason}` : 'unexpected frame');
        }
      }
      if (!result.ok) fail(result.error.message);
    };
    socket.on('data', onData);
  });
}
