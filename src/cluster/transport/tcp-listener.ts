// The cluster port's listening socket: plain TCP, or TLS asking every client for a certificate of the cluster's
// authority (tcp-tls.ts), bound to its port. A TLS handshake that fails never becomes a connection: it is handed to
// `refused` with its reason (counted and logged by the transport) and the socket is gone.
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { ActorTsError } from '../../errors.js';
import type { TLSSocket } from 'node:tls';
import { admitted, tlsRefusalOf, tlsServer, type ClusterTls, type TlsRefusal } from './tcp-tls.js';

export interface ClusterServerEvents {
  /** A connection ready for the cluster handshake (after the TLS handshake, with TLS). */
  accept(socket: Socket): void;
  /** A TLS handshake failed: who (remote host) and why. */
  refused(reason: TlsRefusal, host: string, error: Error): void;
}

/** The cluster port's server, not yet listening. */
export function clusterServer(tls: ClusterTls | undefined, events: ClusterServerEvents): Server {
  if (tls === undefined) {
    const server = createServer();
    server.on('connection', (socket) => events.accept(socket));
    return server;
  }
  const server = tlsServer(tls);
  server.on('secureConnection', (socket: TLSSocket) => {
    const verdict = admitted(socket, tls.subject);
    if (verdict.ok) return events.accept(socket);
    events.refused(verdict.reason, socket.remoteAddress ?? 'unknown', verdict.error);
    socket.destroy();
  });
  server.on('tlsClientError', (error: Error, socket: Socket) =>
    events.refused(tlsRefusalOf(error), socket.remoteAddress ?? 'unknown', error),
  );
  return server;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * Where the port listens, the host peers dial (IPv6 in brackets, as NodeAddress writes it, as URIs do) and this run's
 * incarnation; `invalid_argument` for a wildcard host with no advertised host or an incarnation out of bounds.
 */
export function listenerIdentity(options: {
  readonly host?: string;
  readonly advertisedHost?: string;
  readonly incarnation?: string;
}): { host: string; advertisedHostname: string; incarnation: string } {
  const host = options.host ?? '127.0.0.1';
  const advertised = options.advertisedHost ?? host;
  if (WILDCARD_HOSTS.has(advertised)) {
    throw new ActorTsError('invalid_argument', `listening on "${host}" needs an advertisedHost that peers can dial`);
  }
  const incarnation = options.incarnation ?? randomUUID();
  if (incarnation.length === 0 || incarnation.length > 128) {
    throw new ActorTsError('invalid_argument', 'incarnation must be 1..128 characters');
  }
  const advertisedHostname = advertised.includes(':') && !advertised.startsWith('[') ? `[${advertised}]` : advertised;
  return { host, advertisedHostname, incarnation };
}

/** Binds `server` to host:port; resolves with the bound port, rejects with `invalid_argument` when it cannot. */
export function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void =>
      reject(new ActorTsError('invalid_argument', `cannot listen on ${host}:${port}: ${error.message}`));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const bound = server.address();
      if (bound === null || typeof bound === 'string') {
        reject(new ActorTsError('invalid_argument', `cannot determine the bound port on ${host}`));
        return;
      }
      resolve(bound.port);
    });
  });
}
