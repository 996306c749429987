// Test helper for TcpTransport over real sockets: transports, raw clients and authenticated raw peers that send
// part of a frame (or anything else), all cleaned up after each test, and the wait for a transport to have given
// back everything its ended connections held (registries empty, budget in use zero).
import { connect, type Server, type Socket } from 'node:net';
import { expect } from 'vitest';
import { FRAME_HEADER_BYTES } from '../../src/cluster/transport/frame-codec.js';
import {
  TcpTransport,
  type TcpTransportOptions,
  type TcpTransportUsage,
} from '../../src/cluster/transport/tcp-transport.js';
import { CLUSTER_MESSAGES } from '../../src/cluster/membership/messages.js';
import { isFamilyMessage } from '../../src/cluster/transport/wire-message.js';
import { MESSAGE_FAMILIES, PROTOCOL_VERSION } from '../../src/protocol.js';
import { authenticatedSocket } from './raw-peer.js';
import { waitFor } from './wait-for.js';

export interface RawPeer {
  readonly socket: Socket;
  readonly from: string;
  closed(): boolean;
}

/** A raw socket that has not said anything yet, what it received, and whether the other side closed it. */
export interface RawClient {
  readonly socket: Socket;
  readonly data: Buffer[];
  closed(): boolean;
}

/** Transports, raw sockets and raw servers of one test file; `cleanUp` in afterEach. */
export class TcpTestBed {
  private readonly transports: TcpTransport[] = [];
  private readonly sockets: Socket[] = [];
  private readonly servers: Server[] = [];
  private nextPort = 40_000;

  async start(options: Partial<TcpTransportOptions> = {}): Promise<TcpTransport> {
    const transport = await TcpTransport.start({
      system: 'test',
      backoff: { initialDelayMs: 10, maxDelayMs: 100 },
      ...options,
    });
    for (const family of MESSAGE_FAMILIES) transport.register(family);
    this.transports.push(transport);
    return transport;
  }

  /** A peer past the handshake; a fresh address unless `from` is given (the same one replaces older connections). */
  async peer(
    target: TcpTransport,
    options: { from?: string; secret?: string; incarnation?: string } = {},
  ): Promise<RawPeer> {
    const from = options.from ?? `raw@127.0.0.1:${this.nextPort++}`;
    const socket = await authenticatedSocket({
      port: target.self.port,
      to: target.self.toString(),
      from,
      ...(options.secret === undefined ? {} : { secret: options.secret }),
      ...(options.incarnation === undefined ? {} : { incarnation: options.incarnation }),
    });
    this.sockets.push(socket);
    socket.on('error', () => undefined);
    let closed = false;
    socket.on('close', () => {
      closed = true;
    });
    return { socket, from, closed: () => closed };
  }

  /** A raw client socket connected to `port` (no handshake) that records whether the server closed it. */
  async client(port: number): Promise<RawClient> {
    const socket = this.adopt(connect({ host: '127.0.0.1', port }));
    let closed = false;
    const data: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => data.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
    });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    return { socket, closed: () => closed, data };
  }

  adopt(socket: Socket): Socket {
    this.sockets.push(socket);
    return socket;
  }

  adoptServer(server: Server): Server {
    this.servers.push(server);
    return server;
  }

  /** Closes a transport before the test ends (a peer that goes away); `cleanUp` leaves it alone. */
  async stop(transport: TcpTransport): Promise<void> {
    await transport.close();
    this.transports.splice(this.transports.indexOf(transport), 1);
  }

  async cleanUp(): Promise<void> {
    for (const socket of this.sockets.splice(0)) socket.destroy();
    await Promise.all(this.servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
    await Promise.all(this.transports.splice(0).map((t) => t.close()));
  }
}

/** The 6-byte header of a frame whose payload is `bytes` long; kind 1 handshake, 2 message. */
export function frameHeader(bytes: number, kind: 1 | 2 = 2, version = PROTOCOL_VERSION): Buffer {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUInt32BE(bytes + 2, 0);
  header.writeUInt8(version, 4);
  header.writeUInt8(kind, 5);
  return header;
}

/** Starts a message frame of `frameBytes` and sends only `sentBytes` of its payload. */
export function partialFrame(peer: RawPeer, frameBytes: number, sentBytes: number): void {
  peer.socket.write(Buffer.concat([frameHeader(frameBytes), Buffer.alloc(sentBytes)]));
}

export const RELEASED: TcpTransportUsage = {
  connections: { 'inbound-handshaking': 0, 'inbound-open': 0, 'outbound-connecting': 0, 'outbound-open': 0 },
  inboundBufferedBytes: 0,
  budgetHolders: 0,
  sockets: 0,
  inboundByPeer: 0,
  peerIncarnations: 0,
};

/** Waits until `transport` holds nothing for any connection, then checks every figure of its usage. */
export async function expectReleased(transport: TcpTransport, what: string, timeoutMs = 5_000): Promise<void> {
  await waitFor(
    () => JSON.stringify(transport.usage()) === JSON.stringify(RELEASED),
    `${what}: everything released`,
    timeoutMs,
  ).catch(() => undefined);
  expect(transport.usage(), what).toEqual(RELEASED);
}

/** The sequence numbers of every Heartbeat `transport` receives from now on, in arrival order. */
export function heartbeatsOf(transport: TcpTransport): number[] {
  const out: number[] = [];
  transport.onMessage((_from, message) => {
    if (isFamilyMessage(CLUSTER_MESSAGES, message) && message.type === 'Heartbeat') out.push(message.sequence);
  });
  return out;
}
