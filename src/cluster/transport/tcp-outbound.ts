// The dialling end of a TCP connection towards one peer: connects, runs the client side of the handshake,
// queues messages (bounded) until the connection is open, bounds what an open connection buffers for a peer
// that reads too slowly, reconnects with exponential backoff, and redials at once a connection its owner
// reports stalled.
import type { Socket } from 'node:net';
import { dialCluster, readyEvent } from './tcp-tls.js';
import { performance } from 'node:perf_hooks';
import type { NodeAddress } from '../address.js';
import { ClientHandshake } from './client-handshake.js';
import { FrameDecoder, outgoingAtVersion, type Frame, type OutgoingFrame } from './frame-codec.js';
import { handshakeFrame, type Handshake } from './handshake.js';
import { errorText } from './message-codec.js';
import { PROTOCOL_FLOOR } from './protocol-versions.js';
import type { TcpHost } from './tcp-host.js';
import { KEEPALIVE_DELAY_MS } from './tcp-settings.js';

/** Bytes held corked before they are written without waiting for the next tick. */
const CORK_BYTES = 64 * 1024;

/** One dial: its socket, its handshake, when it opened (undefined until then) and the first reason it failed. */
interface Dial {
  readonly socket: Socket;
  readonly handshake: ClientHandshake;
  openedAt: number | undefined;
  failure?: string;
}

export class OutboundPeer {
  private state: 'idle' | 'connecting' | 'open' | 'backoff' | 'stopped' = 'idle';
  private socket: Socket | undefined;
  private queue: OutgoingFrame[] = [];
  /** The version a queued frame's message type needs, for the few that need more than the floor. */
  private readonly needs = new WeakMap<OutgoingFrame, number>();
  /** The protocol version agreed on the open connection. */
  private version = PROTOCOL_FLOOR;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  /** performance.now() when the current dial started, or when the current connection opened. */
  private since = 0;
  private warnedQueueFull = false;
  /** Messages dropped since the open connection's write buffer last filled up; 0 when it is not full. */
  private droppedSinceFull = 0;
  /** The socket corked for this tick's writes (uncorked at the next tick or past CORK_BYTES), if any. */
  private corked: Socket | undefined;
  private readonly target: string;

  constructor(
    private readonly to: NodeAddress,
    private readonly transport: TcpHost,
  ) {
    this.target = to.toString();
  }

  /** The state of this peer's connection, or undefined while it has none (idle, waiting out a backoff, stopped). */
  get phase(): 'connecting' | 'open' | undefined {
    return this.state === 'connecting' || this.state === 'open' ? this.state : undefined;
  }

  /** Sends `frame`, whose message type exists from protocol version `since` on (see MESSAGE_TYPES_SINCE). */
  send(frame: OutgoingFrame, since = PROTOCOL_FLOOR): void {
    if (this.state === 'stopped') return;
    if (this.state === 'open' && this.socket) {
      const agreed = this.atAgreedVersion(frame, since);
      if (agreed) this.writeBounded(this.socket, agreed);
      return;
    }
    if (this.queue.length >= this.transport.config.maxQueuedMessages) {
      this.transport.count('droppedQueueFull');
      if (!this.warnedQueueFull) {
        this.warnedQueueFull = true;
        this.transport.log.warn(
          { peer: this.target, queued: this.queue.length },
          'outbound queue full, dropping messages',
        );
      }
      return;
    }
    this.queue.push(frame);
    if (since > PROTOCOL_FLOOR) this.needs.set(frame, since);
    if (this.state === 'idle') this.connect();
  }

  /**
   * `frame` as the open connection's version carries it, or undefined (counted) when its message type is newer
   * than that version: a peer of an older release would not know it.
   */
  private atAgreedVersion(frame: OutgoingFrame, since: number): OutgoingFrame | undefined {
    if (since > this.version) {
      this.transport.count('droppedUnsupported');
      return undefined;
    }
    return outgoingAtVersion(frame, this.version);
  }

  /**
   * The peer restarted: drops the current connection, which leads to its previous process (or nowhere), and
   * dials afresh without backoff. The queue is kept: those messages were never written, so no process got them,
   * and the new one is where they would have gone had it been up when they were sent.
   */
  reset(): void {
    if (this.state === 'stopped') return;
    this.clearTimer();
    this.socket?.destroy();
    this.socket = undefined;
    this.failures = 0;
    this.droppedSinceFull = 0;
    this.state = 'idle';
    if (this.queue.length > 0) this.connect();
  }

  /**
   * The owner has evidence that this peer does not get our messages (heartbeats unanswered). After a link
   * comes back, TCP retransmits what it holds only when its backoff timer says so (seconds after a cut of a
   * few seconds), and a dial started during the cut waits on SYN retransmission likewise; a fresh connection
   * works as soon as the path does. So: an open connection or a dial under way that is older than
   * the transport's redialMinAgeMs is dropped and replaced by a new dial, and a backoff wait is cut short. What the
   * dropped socket held is lost, as any message to a peer cut off may be (delivery is at-most-once); the
   * queue of messages never written is kept.
   */
  redial(): void {
    if (this.state === 'stopped' || this.state === 'idle') return;
    if (
      (this.state === 'open' || this.state === 'connecting') &&
      performance.now() - this.since < this.transport.config.redialMinAgeMs
    ) {
      return;
    }
    this.transport.count('redials');
    // Once per connection given up; the redials of a dial under way repeat every interval while a cut lasts.
    const details = { peer: this.target, state: this.state };
    if (this.state === 'open') this.transport.log.info(details, 'no answers from peer: replacing the connection');
    else this.transport.log.debug(details, 'no answers from peer: dialling afresh');
    const failures = this.failures;
    this.reset();
    // Unlike a restart of the peer, nothing here says the peer is back: its own backoff goes on.
    this.failures = failures;
  }

  /**
   * The peer just dialled us and completed the handshake, so it is listening now. A backoff counted from dials
   * that failed before it existed (or while it restarted) says nothing any more: dial at once if messages wait,
   * and start any later backoff from the initial delay. An open connection or a dial under way is left alone.
   */
  peerListening(): void {
    if (this.state !== 'backoff' && this.state !== 'idle') return;
    this.clearTimer();
    this.failures = 0;
    this.state = 'idle';
    if (this.queue.length > 0) {
      this.transport.log.debug({ peer: this.target }, 'peer dialled us: ending the reconnect backoff');
      this.connect();
    }
  }

  /** The frames this tick corked go to the kernel now (Transport.flush). */
  flush(): void {
    if (this.socket !== undefined) this.uncork(this.socket);
  }

  stop(): void {
    this.state = 'stopped';
    this.clearTimer();
    // Frames of this tick still corked are handed to the kernel first, as they were before there was a cork: a
    // message sent just before the transport closes still leaves.
    this.flush();
    this.socket?.destroy();
    this.socket = undefined;
    this.queue = [];
  }

  private connect(): void {
    const config = this.transport.config;
    this.state = 'connecting';
    this.since = performance.now();
    const host = this.to.host.startsWith('[') ? this.to.host.slice(1, -1) : this.to.host;
    const socket = dialCluster(this.transport.tls, host, this.to.port);
    this.socket = socket;
    this.transport.track(socket);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
    const dial: Dial = { socket, handshake: new ClientHandshake(this.transport, this.target), openedAt: undefined };
    this.timer = setTimeout(() => this.fail(dial, 'connect and handshake timed out', true), config.handshakeTimeoutMs);
    // The accepting side only ever sends handshake frames on this connection, so they are all it may send.
    const decoder = new FrameDecoder({ maxFrameBytes: config.maxHandshakeFrameBytes });
    socket.on(readyEvent(this.transport.tls), () => this.write(socket, dial.handshake.hello()));
    socket.on('data', (chunk: Buffer) => {
      if (socket.destroyed) return;
      const result = decoder.push(chunk);
      for (const frame of result.frames) if (!this.handshakeStep(dial, frame)) return;
      if (!result.ok) {
        this.transport.count('frameErrors');
        this.fail(dial, `bad frame from peer: ${result.error.message}`, false);
      }
    });
    socket.on('error', (error) => {
      dial.failure ??= errorText(error);
    });
    // Only emitted after a write was buffered beyond the high-water mark; `writeBounded` covers the rest.
    socket.on('drain', () => {
      if (this.socket === socket) this.endBackpressure();
    });
    socket.on('close', () => this.closed(dial));
  }

  /** One frame of the handshake; false once the dial failed (the frames after it are not read). */
  private handshakeStep(dial: Dial, frame: Frame): boolean {
    if (dial.openedAt !== undefined) {
      this.fail(dial, 'unexpected frame from the accepting side', false);
      return false;
    }
    const step = dial.handshake.step(frame);
    if (step.kind !== 'open' && step.reply) this.write(dial.socket, step.reply);
    if (step.kind === 'fail') {
      this.fail(dial, step.reason, true);
      return false;
    }
    if (step.kind === 'open') {
      dial.openedAt = performance.now();
      this.since = dial.openedAt;
      this.version = dial.handshake.version;
      this.onOpen(dial.socket);
    }
    return true;
  }

  private fail(dial: Dial, reason: string, handshake: boolean): void {
    dial.failure ??= reason;
    if (handshake) this.transport.count('handshakeFailures');
    dial.socket.destroy();
  }

  private closed(dial: Dial): void {
    if (this.socket !== dial.socket || this.state === 'stopped') return;
    this.clearTimer();
    this.socket = undefined;
    this.droppedSinceFull = 0;
    const reason = dial.failure ?? 'connection closed';
    const { openedAt } = dial;
    this.ended(openedAt !== undefined);
    // A peer that accepts and drops at once must not reset the backoff, or it is redialled at the initial
    // delay forever: only a connection that proved stable does.
    if (openedAt !== undefined && performance.now() - openedAt >= this.transport.config.resetAfterMs) {
      this.failures = 0;
      const retryInMs = this.scheduleReconnect();
      this.transport.log.info({ peer: this.target, reason, retryInMs }, 'outbound connection lost');
      return;
    }
    this.failures++;
    const retryInMs = this.scheduleReconnect();
    // Warn once per outage; the retries that follow are debug noise.
    const details = { peer: this.target, reason, attempt: this.failures, retryInMs };
    const msg = openedAt !== undefined ? 'outbound connection closed right after opening' : 'could not connect to peer';
    if (this.failures === 1) this.transport.log.warn(details, msg);
    else this.transport.log.debug(details, msg);
  }

  /** Counts how a connection of ours ended; one that was open ended from the peer's side. */
  private ended(opened: boolean): void {
    if (!opened) {
      this.transport.count('connectFailures');
      return;
    }
    this.transport.count('connectionsLost');
    // The peer's process may be gone: the membership probes it now (Transport.onConnectionLost).
    this.transport.lost.emit(this.to);
  }

  private onOpen(socket: Socket): void {
    this.clearTimer();
    this.state = 'open';
    this.warnedQueueFull = false;
    this.transport.count('connections');
    this.transport.log.debug({ peer: this.target }, 'outbound connection open');
    const queued = this.queue;
    this.queue = [];
    // Not bounded by maxBufferedBytes: the queue already held these bytes, and it accepted these messages.
    for (const frame of queued) {
      const agreed = this.atAgreedVersion(frame, this.needs.get(frame) ?? PROTOCOL_FLOOR);
      if (agreed === undefined) continue;
      writeFrame(socket, agreed);
      this.transport.count('sent');
    }
  }

  /** Writes unless the peer is not keeping up; never lets one stalled peer buffer without limit. */
  private writeBounded(socket: Socket, frame: OutgoingFrame): void {
    const buffered = socket.writableLength;
    if (buffered > 0 && buffered + frame.byteLength > this.transport.config.maxBufferedBytes) {
      this.transport.count('droppedBackpressure');
      if (this.droppedSinceFull++ === 0) {
        this.transport.log.warn(
          { peer: this.target, bufferedBytes: buffered },
          'peer is not keeping up, dropping messages',
        );
      }
      return;
    }
    // Accepting again ends the episode even when no 'drain' reports it (a bound below the high-water mark).
    this.endBackpressure();
    this.cork(socket);
    writeFrame(socket, frame);
    this.transport.count('sent');
    if (socket.writableLength >= CORK_BYTES) this.uncork(socket);
  }

  /**
   * Holds this tick's frames and writes them in one system call at the next tick: one write per frame made the
   * kernel call most of the cost of a small message (a reliable send's envelope, a batch of acknowledgements).
   * Past CORK_BYTES they go at once, so a long burst still streams to the peer while it is being written.
   */
  private cork(socket: Socket): void {
    if (this.corked === socket) return;
    this.corked = socket;
    socket.cork();
    process.nextTick(() => this.uncork(socket));
  }

  private uncork(socket: Socket): void {
    if (this.corked !== socket) return;
    this.corked = undefined;
    socket.uncork();
  }

  private endBackpressure(): void {
    if (this.droppedSinceFull === 0) return;
    this.transport.log.info({ peer: this.target, dropped: this.droppedSinceFull }, 'peer is keeping up again');
    this.droppedSinceFull = 0;
  }

  /** Returns the delay before the next dial. */
  private scheduleReconnect(): number {
    const { initialDelayMs, maxDelayMs, multiplier } = this.transport.config;
    const delay = Math.min(maxDelayMs, initialDelayMs * multiplier ** Math.max(0, this.failures - 1));
    this.state = 'backoff';
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state !== 'backoff' || this.transport.isClosed) return;
      // With nothing to send there is no reason to dial; the next send will.
      if (this.queue.length > 0) this.connect();
      else this.state = 'idle';
    }, delay);
    return delay;
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private write(socket: Socket, handshake: Handshake): void {
    socket.write(handshakeFrame(handshake));
  }
}

/** Writes a frame's parts in order; corked (or in one tick), a split frame goes in one system call. */
function writeFrame(socket: Socket, frame: OutgoingFrame): void {
  socket.write(frame.head);
  if (frame.tail !== undefined) socket.write(frame.tail);
}
