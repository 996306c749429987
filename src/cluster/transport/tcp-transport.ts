// The transport between node processes: TCP with length-prefixed msgpackr frames. Each node dials one
// outbound connection per peer it sends to and only receives on the connections peers dial to it, so two
// nodes never have to agree on who owns a shared connection. A connection starts with a handshake naming
// both ends and the dialer's incarnation; with a cluster secret both ends prove it by HMAC over fresh nonces.
// Nothing a peer sends can throw into the event loop: bad frames close the connection, bad messages are
// dropped; both are counted and logged (rate-limited, since a peer can cause them at will). The transport
// knows no message family: layers register theirs, and only what one of them parses reaches listeners.
// Incomplete inbound frames share one byte budget in which trusted peers (members) keep room (inbound-budget.ts);
// a connection, however it ends, gives back its share and leaves every registry (tcp-inbound.ts `end`).
import { ConnectionLostListeners } from './connection-lost.js';
import type { Server, Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { TlsMaterial } from '../../tls/tls-files.js';
import { LogThrottle, silentLogger, type Logger } from '../../logging.js';
import { NodeAddress } from '../address.js';
import { checkFrameSize, FRAME_HEADER_BYTES, messageBytes, type Frame, type OutgoingFrame } from './frame-codec.js';
import { InboundBudget, type Reservation } from './inbound-budget.js';
import { decodeFrameValue, decodeMessage, encodeMessageFrameOnce, errorText } from './message-codec.js';
import { PeerProtocols } from './peer-protocols.js';
import { versionNeededFor } from './protocol-versions.js';
import type { InboundLink, TcpHost } from './tcp-host.js';
import { InboundConnection } from './tcp-inbound.js';
import { OutboundPeer } from './tcp-outbound.js';
import {
  resolveTcpSettings,
  type MutableTcpStats,
  type TcpConfig,
  type TcpTransportOptions,
  type TcpTransportStats,
  type TcpTransportUsage,
} from './tcp-settings.js';
import { probeAddress } from './probe.js';
import { clusterServer, listen, listenerIdentity } from './tcp-listener.js';
import { TLS_REFUSAL_REASONS, useTlsMaterial, type ClusterTls, type TlsRefusal } from './tcp-tls.js';
import type { MessageListener, ProbeResult, Transport } from './transport.js';
import { FamilyRegistry, asRawMessage, type MessageFamily, type WireMessage } from './wire-message.js';

export type { TcpBackoffConfig, TcpTransportOptions, TcpTransportStats, TcpTransportUsage } from './tcp-settings.js';

/**
 * The cluster transport over TCP: length-prefixed msgpack frames with byte budgets, a handshake naming both ends
 * (and proving the cluster secret, when one is set); bad frames close the connection and never throw. Start it
 * with `TcpTransport.start`.
 */
export class TcpTransport implements Transport, TcpHost {
  private readonly listeners = new Set<MessageListener>();
  /** @internal See `Transport.onConnectionLost`: the connections call `emit` when their peer ends them. */
  readonly lost = new ConnectionLostListeners((error, peer) => {
    this.counters.listenerErrors++;
    this.logger.error({ peer: peer.toString(), err: errorText(error) }, 'connection-lost listener threw');
  });
  readonly onConnectionLost = (listener: (peer: NodeAddress) => void): (() => void) => this.lost.add(listener);
  private readonly families = new FamilyRegistry();
  private readonly peerLog: LogThrottle;
  /** Bytes all inbound connections hold in incomplete frames, shared so that trusted peers keep room. */
  private readonly budget: InboundBudget;
  private trusted: ((peer: NodeAddress) => boolean) | undefined;
  private readonly peers = new Map<string, OutboundPeer>();
  /** Every accepted connection that has not ended, handshaking or open. */
  private readonly accepted = new Set<InboundLink>();
  /** Open inbound connections by peer address, with the incarnation that peer announced. */
  private readonly inbound = new Map<string, Set<InboundLink>>();
  private readonly peerIncarnations = new Map<string, string>();
  private readonly refusedTls = new Map<TlsRefusal, number>();
  private readonly sockets = new Set<Socket>();
  private readonly counters: MutableTcpStats = {
    sent: 0,
    delivered: 0,
    malformed: 0,
    frameErrors: 0,
    frameTimeouts: 0,
    inboundOverBudget: 0,
    peersDisconnectedForBudget: 0,
    inboundStarved: 0,
    handshakeFailures: 0,
    droppedQueueFull: 0,
    droppedBackpressure: 0,
    droppedUnencodable: 0,
    listenerErrors: 0,
    connections: 0,
    connectFailures: 0,
    connectionsLost: 0,
    redials: 0,
    probes: 0,
    refusedProtocolVersion: 0,
    droppedUnsupported: 0,
  };
  /** What this node announces in handshakes, what each peer's handshake agreed, peers refused for their protocol. */
  readonly protocols: PeerProtocols;
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly self: NodeAddress,
    readonly incarnation: string,
    private readonly settings: TcpConfig,
    private readonly logger: Logger,
    /** @internal Mutual TLS on every connection (tcp-tls.ts); undefined for plain TCP. */
    readonly tls: ClusterTls | undefined,
  ) {
    this.peerLog = new LogThrottle({ intervalMs: settings.peerLogIntervalMs });
    this.budget = new InboundBudget(settings.maxInboundBufferedBytes);
    this.protocols = new PeerProtocols(settings, (peer, reason) => {
      this.counters.refusedProtocolVersion++;
      this.peerEvent('refused: no common protocol version', peer, { reason });
    });
  }

  /** Listens on host:port and resolves once the socket is bound; rejects on bad options or a busy port. */
  static async start(options: TcpTransportOptions): Promise<TcpTransport> {
    const settings = resolveTcpSettings(options);
    const { host, advertisedHostname, incarnation } = listenerIdentity(options);
    let transport: TcpTransport | undefined;
    const server = clusterServer(options.tls, {
      accept: (socket) => (transport === undefined ? socket.destroy() : transport.accept(socket)),
      refused: (reason, peerHost, error) => transport?.tlsRefused(reason, peerHost, error),
    });
    const port = await listen(server, host, options.port ?? 0);
    const self = new NodeAddress(options.system, advertisedHostname, port);
    const logger = (options.logger ?? silentLogger()).child({ node: self.toString() });
    transport = new TcpTransport(server, self, incarnation, settings, logger, options.tls);
    server.on('error', (error) => logger.error({ err: errorText(error) }, 'tcp server error'));
    logger.info(
      { incarnation, secured: settings.secret !== undefined, tls: options.tls !== undefined },
      'tcp transport listening',
    );
    return transport;
  }

  register<M extends WireMessage>(family: MessageFamily<M>): void {
    this.families.register(family);
  }

  /**
   * Queues `message` for `to`; never throws (an unencodable message is counted and logged). `message` must not
   * change afterwards: the same object sent again reuses its encoding (message-codec.ts).
   */
  send<M extends WireMessage>(to: NodeAddress, message: M): void {
    if (this.closed) return;
    let frame: OutgoingFrame;
    try {
      frame = encodeMessageFrameOnce(message);
      checkFrameSize(frame.byteLength - FRAME_HEADER_BYTES, this.settings.maxFrameBytes);
    } catch (error) {
      this.counters.droppedUnencodable++;
      this.logger.error(
        { to: to.toString(), type: String(message.type).slice(0, 64), err: errorText(error) },
        'dropping unencodable message',
      );
      return;
    }
    if (to.equals(this.self)) {
      this.counters.sent++;
      // Loops through the codec like any remote message (a fresh copy per send), and asynchronously like any send.
      const copy = decodeMessage(messageBytes(frame), this.families, this.settings.decodeLimits);
      queueMicrotask(() => {
        if (copy && !this.closed) this.deliver(this.self, copy);
      });
      return;
    }
    const key = to.toString();
    let peer = this.peers.get(key);
    if (!peer) {
      peer = new OutboundPeer(to, this);
      this.peers.set(key, peer);
    }
    peer.send(frame, versionNeededFor(message.type));
  }

  /**
   * Drops the outbound connection to `peer` if it looks stalled and dials afresh (see `OutboundPeer.redial`).
   * Node shows nothing of the kernel's send queue (TCP_USER_TIMEOUT is not exposed either), so the caller's
   * evidence decides: heartbeats unanswered. The inbound side needs no action here: the peer redials its own
   * connection on the same evidence, and a new inbound connection replaces the older ones (registerInbound).
   */
  reconnect(peer: NodeAddress): void {
    if (this.closed) return;
    this.peers.get(peer.toString())?.redial();
  }

  /** See `Transport.flush`: the frames corked for `to` this tick go to the kernel now. */
  flush(to: NodeAddress): void {
    this.peers.get(to.toString())?.flush();
  }

  /** See `Transport.probe`: a bare connect to the peer's port (probe.ts); `unknown` once this transport is closed. */
  probe(peer: NodeAddress): Promise<ProbeResult> {
    if (this.closed) return Promise.resolve('unknown');
    this.counters.probes++;
    return probeAddress(peer);
  }

  onMessage(listener: MessageListener): () => void {
    const entry: MessageListener = (from, message) => listener(from, message);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  stats(): TcpTransportStats {
    return { ...this.counters };
  }

  /**
   * Names the peers whose frames always get room in the shared inbound budget (the cluster's members), taking
   * it from other peers when it is full. With a cluster secret every authenticated peer is trusted already;
   * without one, anyone who reaches the port authenticates, and only the owner knows who the members are.
   * `isTrusted` is asked when a frame needs room, so it follows membership changes; it must be cheap and must
   * not throw.
   */
  trustPeers(isTrusted: (peer: NodeAddress) => boolean): void {
    this.trusted = isTrusted;
  }

  /** What the transport holds now: connections per state, the inbound budget in use, its registries' sizes. */
  usage(): TcpTransportUsage {
    const connections = { 'inbound-handshaking': 0, 'inbound-open': 0, 'outbound-connecting': 0, 'outbound-open': 0 };
    for (const link of this.accepted) connections[link.phase === 'open' ? 'inbound-open' : 'inbound-handshaking']++;
    for (const peer of this.peers.values()) {
      const phase = peer.phase;
      if (phase !== undefined) connections[phase === 'open' ? 'outbound-open' : 'outbound-connecting']++;
    }
    let inboundByPeer = 0;
    for (const links of this.inbound.values()) inboundByPeer += links.size;
    return {
      connections,
      inboundBufferedBytes: this.budget.inUse,
      budgetHolders: this.budget.holders,
      sockets: this.sockets.size,
      inboundByPeer,
      peerIncarnations: this.peerIncarnations.size,
    };
  }

  /** The incarnation a peer announced on its latest accepted inbound connection. */
  peerIncarnation(address: NodeAddress): string | undefined {
    return this.peerIncarnations.get(address.toString());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.lost.clear();
    this.listeners.clear();
    for (const peer of this.peers.values()) peer.stop();
    this.peers.clear();
    // Each ends through endInbound, which empties the registries and the budget.
    for (const link of [...this.accepted]) link.destroy();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    this.peerIncarnations.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.logger.info('tcp transport closed');
  }

  // ---- TcpHost: used by the connections (tcp-inbound.ts, tcp-outbound.ts), not part of the public API ----

  /** New connections, both directions, use `material` from now on; established ones keep theirs. */
  useTls(material: TlsMaterial): void {
    if (this.server instanceof TlsServer) useTlsMaterial(this.server, material);
  }

  /** TLS handshakes refused on the cluster port so far, by reason (all zero without TLS). */
  tlsRefusals(): ReadonlyMap<TlsRefusal, number> {
    return new Map(TLS_REFUSAL_REASONS.map((reason) => [reason, this.refusedTls.get(reason) ?? 0]));
  }

  /** @internal */ tlsRefused(reason: TlsRefusal, peerHost: string, error: Error): void {
    this.refusedTls.set(reason, (this.refusedTls.get(reason) ?? 0) + 1);
    this.peerEvent(`refused: TLS handshake failed (${reason})`, peerHost, { reason, err: errorText(error) });
  }

  /** @internal */ get config(): TcpConfig {
    return this.settings;
  }
  /** @internal */ get log(): Logger {
    return this.logger;
  }
  /** @internal */ get isClosed(): boolean {
    return this.closed;
  }
  /** @internal */ count(stat: keyof TcpTransportStats): void {
    this.counters[stat]++;
  }

  /** @internal */ track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** @internal */ reserveInbound(link: InboundLink, bytes: number, trusted: boolean): Reservation {
    return this.budget.reserve(link, bytes, trusted);
  }

  /** @internal */ isTrusted(peer: NodeAddress): boolean {
    if (this.settings.secret !== undefined) return true;
    try {
      return this.trusted?.(peer) ?? false;
    } catch {
      return false;
    }
  }

  /** @internal */ peerEvent(kind: string, peerHost: string, details: Readonly<Record<string, unknown>>): void {
    const suppressed = this.peerLog.admit(`${kind}\u0000${peerHost}`);
    if (suppressed === undefined) return;
    this.logger.warn(
      suppressed > 0
        ? { ...details, host: peerHost, similarSinceLastLine: suppressed }
        : { ...details, host: peerHost },
      kind,
    );
  }

  /** @internal Decodes one message frame from `from` and hands it to listeners; false when malformed. Never throws. */
  receive(from: NodeAddress, frame: Frame): boolean {
    const decoded = decodeFrameValue(frame.payload, this.settings.decodeLimits);
    const message = decoded.ok ? this.families.parse(decoded.value) : undefined;
    if (message === undefined) {
      this.counters.malformed++;
      const type = decoded.ok ? asRawMessage(decoded.value)?.type : undefined;
      this.peerEvent('dropping malformed message', from.toString(), {
        bytes: frame.payload.byteLength,
        // A peer's `type` string is bounded here: it is text it chose.
        reason: decoded.ok
          ? `not accepted by a registered family (type ${type === undefined ? 'missing' : JSON.stringify(type.slice(0, 64))})`
          : decoded.reason,
      });
      return false;
    }
    this.deliver(from, message);
    return true;
  }

  /** @internal */ registerInbound(connection: InboundLink, from: NodeAddress, incarnation: string): void {
    const key = from.toString();
    const previous = this.peerIncarnations.get(key);
    const older = [...(this.inbound.get(key) ?? [])];
    const restarted = previous !== undefined && previous !== incarnation;
    if (restarted) {
      this.logger.info({ peer: key, previous, incarnation }, 'peer restarted with a new incarnation');
    } else if (older.length > 0) {
      // The peer dials one connection to us at a time: a new one means it gave up the older ones, whose close
      // never reached us (a cut link). They would only linger until keepalive found them dead.
      this.logger.debug(
        { peer: key, replaced: older.length },
        'peer dialled again: dropping its older inbound connections',
      );
    }
    // Each leaves the registries through endInbound; before the new one is in, so its entries are not undone.
    for (const old of older) old.destroy();
    // Our outbound connection leads to the old process (or nowhere); dial the new one right away.
    if (restarted) this.peers.get(key)?.reset();
    // Otherwise the peer is up and listening (it just dialled us): a backoff from before it was up must not
    // keep our messages to it waiting (a join followed at once by another member's leave stalled on it).
    else this.peers.get(key)?.peerListening();
    this.peerIncarnations.set(key, incarnation);
    const connections = this.inbound.get(key) ?? new Set<InboundLink>();
    connections.add(connection);
    this.inbound.set(key, connections);
  }

  /** @internal */ endInbound(connection: InboundLink, from: NodeAddress | undefined): void {
    this.budget.release(connection);
    this.accepted.delete(connection);
    if (from === undefined) return;
    const key = from.toString();
    const connections = this.inbound.get(key);
    if (connections === undefined || !connections.delete(connection) || connections.size > 0) return;
    this.inbound.delete(key);
    // Kept for a peer we send to, to tell its restart from a new connection; a stranger's is not kept forever.
    if (!this.peers.has(key)) this.peerIncarnations.delete(key);
  }

  private accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.track(socket);
    this.accepted.add(new InboundConnection(socket, this));
  }

  private deliver(from: NodeAddress, message: WireMessage): void {
    this.counters.delivered++;
    for (const listener of [...this.listeners]) {
      try {
        listener(from, message);
      } catch (error) {
        this.counters.listenerErrors++;
        this.logger.error(
          { from: from.toString(), type: message.type, err: errorText(error) },
          'message listener threw',
        );
      }
    }
  }
}
