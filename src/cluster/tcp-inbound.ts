// The accepting end of a TCP connection: runs the server side of the handshake (address check, secret
// proof), then hands every message frame to the transport. A bad frame or handshake closes the connection.
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { NodeAddress } from './address.js';
import { FrameDecoder, encodeFrame, type Frame } from './frame-codec.js';
import { handshakeProof, readHandshake, sameProof, type Handshake } from './handshake.js';
import { encodeValue, errorText } from './message-codec.js';
import type { InboundLink, TcpHost } from './tcp-host.js';
import { KEEPALIVE_DELAY_MS } from './tcp-settings.js';

export class InboundConnection implements InboundLink {
  private readonly decoder: FrameDecoder;
  private state: 'hello' | 'proof' | 'open' | 'done' = 'hello';
  private peer: { readonly address: NodeAddress; readonly incarnation: string; readonly nonce: Buffer } | undefined;
  private readonly serverNonce = randomBytes(16);
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly socket: Socket,
    private readonly transport: TcpHost,
  ) {
    this.decoder = new FrameDecoder({ maxFrameBytes: transport.config.maxFrameBytes });
    // A dialler that vanished silently would otherwise keep this socket (and its tracking) forever.
    socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
    this.timer = setTimeout(() => this.refuse('handshake timed out'), transport.config.handshakeTimeoutMs);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) => transport.log.debug({ err: errorText(error) }, 'inbound connection error'));
    socket.on('close', () => {
      clearTimeout(this.timer);
      if (this.state === 'open' && this.peer) this.transport.unregisterInbound(this, this.peer.address);
      this.state = 'done';
    });
  }

  destroy(): void {
    this.state = 'done';
    this.socket.destroy();
  }

  private get done(): boolean {
    return this.state === 'done';
  }

  private onData(chunk: Buffer): void {
    if (this.done) return;
    const result = this.decoder.push(chunk);
    for (const frame of result.frames) {
      if (this.done) return;
      this.onFrame(frame);
    }
    if (!result.ok && !this.done) {
      this.transport.count('frameErrors');
      this.transport.log.warn(
        { peer: this.peer?.address.toString() ?? this.socket.remoteAddress, code: result.error.code, err: result.error.message },
        'closing inbound connection after a bad frame',
      );
      this.destroy();
    }
  }

  private onFrame(frame: Frame): void {
    if (this.state === 'open' && this.peer) {
      if (frame.kind === 'message') this.transport.receive(this.peer.address, frame);
      else this.refuse('handshake frame on an open connection');
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
    this.peer = { address, incarnation: hello.incarnation, nonce: Buffer.from(hello.nonce) };
    this.state = 'proof';
    this.write({ t: 'Challenge', nonce: this.serverNonce, incarnation: this.transport.incarnation });
  }

  private onProof(proof: Extract<Handshake, { t: 'Proof' }>): void {
    const peer = this.peer;
    if (!peer) return this.refuse('proof before hello');
    const secret = this.transport.config.secret;
    if (secret) {
      const expected = handshakeProof(secret, 'client', peer.address.toString(), this.transport.self.toString(), this.serverNonce, peer.nonce);
      if (!proof.proof) return this.refuse('peer did not prove the cluster secret');
      if (!sameProof(expected, proof.proof)) return this.refuse('peer proved a different cluster secret');
    }
    clearTimeout(this.timer);
    this.state = 'open';
    const serverProof = secret
      ? handshakeProof(secret, 'server', peer.address.toString(), this.transport.self.toString(), this.serverNonce, peer.nonce)
      : undefined;
    this.write(serverProof ? { t: 'Accepted', proof: serverProof } : { t: 'Accepted' });
    this.transport.registerInbound(this, peer.address, peer.incarnation);
    this.transport.log.debug({ peer: peer.address.toString(), incarnation: peer.incarnation }, 'inbound connection open');
  }

  private refuse(reason: string): void {
    if (this.state === 'done') return;
    this.transport.count('handshakeFailures');
    this.transport.log.warn(
      { peer: this.peer?.address.toString() ?? this.socket.remoteAddress, reason },
      'refused inbound connection',
    );
    this.state = 'done';
    clearTimeout(this.timer);
    try {
      this.socket.end(encodeFrame('handshake', encodeValue({ t: 'Refused', reason })));
    } catch {
      this.socket.destroy();
    }
    // The peer may not read: do not keep a half-closed socket around.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  private write(handshake: Handshake): void {
    this.socket.write(encodeFrame('handshake', encodeValue(handshake)));
  }
}

