// The accepting end of a TCP connection: runs the server side of the handshake (address check, secret
// proof), then hands every message frame to the transport. A bad frame or handshake closes the connection.
// Until the peer is authenticated only small frames are accepted and the whole handshake has a deadline;
// afterwards a frame must complete in time, and incomplete frames count against per-connection and shared
// buffer budgets, so no peer can pin memory by sending part of a frame and stopping. However the connection
// ends, `end` undoes it in one place: timers, the decoder's buffered bytes, the budget share, the registries.
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { NodeAddress } from '../address.js';
import { FrameDecoder, type Frame } from './frame-codec.js';
import { handshakeFrame, handshakeProof, readHandshake, sameProof, type Handshake } from './handshake.js';
import { errorText } from './message-codec.js';
import type { InboundLink, TcpHost } from './tcp-host.js';
import { KEEPALIVE_DELAY_MS, type TcpTransportStats } from './tcp-settings.js';

/** How an inbound connection ended: one line of its log and the count it adds to. */
type Ending =
  | { readonly how: 'closed' }
  | { readonly how: 'dropped' }
  | { readonly how: 'refused'; readonly reason: string; readonly code?: 'protocol_version' };

export class InboundConnection implements InboundLink {
  private readonly decoder: FrameDecoder;
  private state: 'hello' | 'proof' | 'open' | 'done' = 'hello';
  private peer:
    | {
        readonly address: NodeAddress;
        readonly incarnation: string;
        readonly nonce: Buffer;
        readonly release: string | undefined;
        readonly protocol: number;
      }
    | undefined;
  private readonly serverNonce = randomBytes(16);
  /** Why the peer's range does not meet ours, once its Hello said so. */
  private mismatch: string | undefined;
  private readonly remoteHost: string;
  private readonly handshakeTimer: NodeJS.Timeout;
  /** Runs while a frame is incomplete on an open connection. */
  private frameTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly transport: TcpHost,
  ) {
    this.remoteHost = socket.remoteAddress ?? 'unknown';
    this.decoder = new FrameDecoder({ maxFrameBytes: transport.config.maxHandshakeFrameBytes });
    // A dialler that vanished silently would otherwise keep this socket (and its tracking) forever.
    socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
    this.handshakeTimer = setTimeout(() => this.refuse('handshake timed out'), transport.config.handshakeTimeoutMs);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) => transport.log.debug({ err: errorText(error) }, 'inbound connection error'));
    socket.on('close', () => this.end({ how: 'closed' }));
  }

  get phase(): 'handshaking' | 'open' {
    return this.state === 'open' ? 'open' : 'handshaking';
  }

  /** The transport drops this connection: its peer restarted or dialled again, or the transport closes. */
  destroy(): void {
    this.end({ how: 'dropped' });
  }

  /** The budget gave this connection's share to a trusted peer. */
  evictForBudget(): void {
    if (this.done) return;
    this.closeFor('peersDisconnectedForBudget', 'closing inbound connection: its buffer budget went to a member', {
      bytes: this.decoder.bufferedBytes,
    });
  }

  /** Closes the connection for what its peer did: counted under `stat`, logged (rate-limited) with `details`. */
  private closeFor(stat: keyof TcpTransportStats, message: string, details: Readonly<Record<string, unknown>>): void {
    this.transport.count(stat);
    this.transport.peerEvent(message, this.remoteHost, { peer: this.peerName, ...details });
    this.destroy();
  }

  private get done(): boolean {
    return this.state === 'done';
  }

  private get peerName(): string {
    return this.peer?.address.toString() ?? this.remoteHost;
  }

  /**
   * The one way out, idempotent: every path that ends the connection (the peer closing, any refusal, a
   * deadline, a bad frame, a replacement, shutdown) comes here, and the socket's close comes here again.
   */
  private end(ending: Ending): void {
    if (this.done) return;
    this.state = 'done';
    clearTimeout(this.handshakeTimer);
    this.stopFrameTimer();
    // The partial frame goes now, not when the last reference to this connection does.
    this.decoder.discard();
    this.transport.endInbound(this, this.peer?.address);
    if (ending.how === 'closed') {
      // The authenticated peer closed it (EOF, reset): its process may be gone (Transport.onConnectionLost).
      if (this.peer !== undefined) this.transport.lost.emit(this.peer.address);
      return;
    }
    if (ending.how === 'dropped') {
      this.socket.destroy();
      return;
    }
    try {
      const code = ending.code === undefined ? {} : { code: ending.code };
      this.socket.end(handshakeFrame({ t: 'Refused', reason: ending.reason, ...code }));
    } catch {
      this.socket.destroy();
      return;
    }
    // The peer may not read: do not keep a half-closed socket around.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  private onData(chunk: Buffer): void {
    if (this.done) return;
    const result = this.decoder.push(chunk);
    for (const frame of result.frames) {
      if (this.done) return;
      this.onFrame(frame);
    }
    if (this.done) return;
    if (!result.ok) {
      this.closeFor('frameErrors', 'closing inbound connection after a bad frame', {
        code: result.error.code,
        err: result.error.message,
      });
      return;
    }
    this.account(result.frames.length > 0);
  }

  /** Keeps the incomplete frame within the budgets and on the clock; `completed` when a frame just finished. */
  private account(completed: boolean): void {
    const held = this.decoder.bufferedBytes;
    const config = this.transport.config;
    const trusted = this.state === 'open' && this.peer !== undefined && this.transport.isTrusted(this.peer.address);
    const overConnection = held > config.maxInboundBytesPerConnection;
    if (overConnection || !this.transport.reserveInbound(this, held, trusted).granted) {
      // A member's frame refused while the budget is full of other members' frames: the node is starved.
      if (trusted && !overConnection) this.transport.count('inboundStarved');
      this.closeFor('inboundOverBudget', 'closing inbound connection over its buffer budget', { bytes: held });
      return;
    }
    // Before the handshake completes its own deadline applies; the frame clock starts with each new frame.
    if (held === 0 || this.state !== 'open') return this.stopFrameTimer();
    // A frame completed and the next one has begun: its clock starts now. Refreshed, not cleared and set again
    // (two timer-list operations per large frame, a tenth of the read path's work in bench/state-chunks-tcp.ts).
    if (completed && this.frameTimer) {
      this.frameTimer.refresh();
      return;
    }
    this.frameTimer ??= setTimeout(() => {
      this.frameTimer = undefined;
      if (this.done) return;
      this.closeFor('frameTimeouts', 'closing inbound connection stalled mid-frame', {
        bytes: this.decoder.bufferedBytes,
      });
    }, config.frameTimeoutMs);
  }

  private stopFrameTimer(): void {
    if (this.frameTimer) clearTimeout(this.frameTimer);
    this.frameTimer = undefined;
  }

  private onFrame(frame: Frame): void {
    if (this.state === 'open' && this.peer) {
      if (frame.kind !== 'message') return this.refuse('handshake frame on an open connection');
      const accepted = this.transport.receive(this.peer.address, frame);
      // A stranger that makes us buffer large frames and then sends nothing usable holds budget for nothing.
      if (
        !accepted &&
        frame.payload.byteLength > this.transport.config.maxHandshakeFrameBytes &&
        !this.transport.isTrusted(this.peer.address)
      ) {
        this.closeFor(
          'peersDisconnectedForBudget',
          'closing inbound connection: a large frame that was no valid message',
          {
            bytes: frame.payload.byteLength,
          },
        );
      }
      return;
    }
    const handshake = frame.kind === 'handshake' ? readHandshake(frame) : undefined;
    if (this.state === 'hello' && handshake?.t === 'Hello') return this.onHello(handshake);
    if (this.state === 'proof' && handshake?.t === 'Proof') return this.onProof(handshake);
    this.refuse(`unexpected ${handshake ? handshake.t : frame.kind} frame during the handshake`);
  }
  private onHello(hello: Extract<Handshake, { t: 'Hello' }>): void {
    const address = NodeAddress.tryParse(hello.from);
    if (!address) return this.refuse(`invalid peer address "${hello.from}"`);
    if (hello.to !== this.transport.self.toString()) {
      return this.refuse(`peer dialled ${hello.to}, this node is ${this.transport.self.toString()}`);
    }
    const agreed = this.transport.protocols.negotiate(this.transport.self, address.toString(), hello);
    const protocol = typeof agreed === 'number' ? agreed : undefined;
    const nonce = Buffer.from(hello.nonce);
    const release = hello.release;
    const own = this.transport.config.protocolRange;
    if (typeof agreed === 'string') {
      // With a secret the refusal waits for the proof: an unauthenticated stranger must not turn health degraded.
      this.mismatch = agreed;
      if (!this.transport.config.secret) return this.refuseProtocol(address);
    }
    this.peer = { address, incarnation: hello.incarnation, nonce, release, protocol: protocol ?? own.max };
    if (protocol !== undefined) this.decoder.setMessageVersion(protocol);
    this.state = 'proof';
    const version = protocol === undefined ? {} : { version: protocol };
    const { protocolMin, protocolMax } = this.transport.protocols.announcement;
    this.write({ t: 'Challenge', nonce: this.serverNonce, ...version, protocolMin, protocolMax });
  }

  /** Refuses a peer whose range does not meet ours: counted, logged, kept for health, and said in the refusal. */
  private refuseProtocol(address: NodeAddress): void {
    const reason = this.mismatch ?? 'no common protocol version';
    this.transport.protocols.refuse(address.toString(), reason, true);
    this.end({ how: 'refused', reason, code: 'protocol_version' });
  }

  private onProof(proof: Extract<Handshake, { t: 'Proof' }>): void {
    const peer = this.peer;
    if (!peer) return this.refuse('proof before hello');
    const secret = this.transport.config.secret;
    // Both proofs bind the peer's and this node's addresses and both nonces; the role says who proves.
    const proofAs = (key: Buffer, role: 'client' | 'server') =>
      handshakeProof(key, role, peer.address.toString(), this.transport.self.toString(), this.serverNonce, peer.nonce);
    if (secret) {
      const expected = proofAs(secret, 'client');
      if (!proof.proof) return this.refuse('peer did not prove the cluster secret');
      if (!sameProof(expected, proof.proof)) return this.refuse('peer proved a different cluster secret');
    }
    if (this.mismatch !== undefined) return this.refuseProtocol(peer.address);
    clearTimeout(this.handshakeTimer);
    this.state = 'open';
    // Authenticated (or no secret is configured): from now on frames up to the full size are accepted.
    this.decoder.setMaxFrameBytes(this.transport.config.maxFrameBytes);
    const serverProof = secret ? proofAs(secret, 'server') : undefined;
    // The release only now: the peer has proved itself (or no secret asks it to).
    const { release } = this.transport.protocols.announcement;
    this.write(serverProof ? { t: 'Accepted', proof: serverProof, release } : { t: 'Accepted', release });
    this.transport.registerInbound(this, peer.address, peer.incarnation);
    this.transport.protocols.noteAgreed(peer.address.toString(), { release: peer.release, protocol: peer.protocol });
    this.transport.log.debug(
      { peer: peer.address.toString(), incarnation: peer.incarnation, protocol: peer.protocol },
      'inbound connection open',
    );
  }

  private refuse(reason: string): void {
    if (this.done) return;
    this.transport.count('handshakeFailures');
    this.transport.peerEvent('refused inbound connection', this.remoteHost, { peer: this.peerName, reason });
    this.end({ how: 'refused', reason });
  }

  private write(handshake: Handshake): void {
    this.socket.write(handshakeFrame(handshake));
  }
}
