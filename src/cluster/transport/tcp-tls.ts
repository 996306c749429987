// Mutual TLS on the cluster port (issue 38): every connection, both directions, is TLS 1.3 and both sides present a
// certificate the cluster's authority signed, checked before the first frame is read; a peer without one, with one of
// another authority, or speaking plain TCP never gets to the handshake. The one place cluster sockets become TLS
// sockets: the rest of the transport sees a Socket either way. Peers are named by their cluster address (and, with a
// secret, proved by its HMAC), so a certificate is checked against the authority, not against a host name.
import { connect as connectTcp, type Socket } from 'node:net';
import { createServer, connect, type Server, type TLSSocket } from 'node:tls';
import type { TlsMaterial } from '../../tls/tls-files.js';

/** The TLS material the transport uses for each new connection (followed on disk by its owner). */
export interface ClusterTls {
  current(): TlsMaterial;
  /** Peers' certificates must also have a subject common name this matches (both directions); default any. */
  readonly subject?: RegExp | undefined;
}

/** Why a TLS handshake on the cluster port failed, as logged and counted. */
export const TLS_REFUSAL_REASONS = [
  'not_tls',
  'no_certificate',
  'untrusted_certificate',
  'expired_certificate',
  /** The peer hung up during the handshake: most often it does not trust this node's certificate. */
  'aborted',
  /** A certificate of the authority whose subject the required pattern (`tlsSubject`) does not match. */
  'unexpected_subject',
  'other',
] as const;
export type TlsRefusal = (typeof TLS_REFUSAL_REASONS)[number];

const VERSIONS = { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' } as const;

function secureContext(material: TlsMaterial): { key: string; cert: string; ca: string | undefined } {
  return { key: material.key, cert: material.cert, ca: material.ca };
}

/**
 * A TLS server that asks every client for a certificate. It completes the handshake either way so that the verdict
 * (and its reason) reaches `admitted`: the listener lets in only authorized sockets, before reading any byte.
 */
export function tlsServer(tls: ClusterTls): Server {
  return createServer({ ...secureContext(tls.current()), ...VERSIONS, requestCert: true, rejectUnauthorized: false });
}

/** Whether a server-side TLS socket's client proved a certificate of the authority; otherwise why not. */
export function admitted(
  socket: TLSSocket,
  subject?: RegExp,
): { readonly ok: true } | { readonly ok: false; readonly reason: TlsRefusal; readonly error: Error } {
  if (socket.authorized) {
    const name = commonName(socket.getPeerCertificate());
    if (subject === undefined || subject.test(name)) return { ok: true };
    return {
      ok: false,
      reason: 'unexpected_subject',
      error: new Error(`certificate subject CN=${name} does not match ${subject}`),
    };
  }
  const raw: unknown = socket.authorizationError;
  const code = typeof raw === 'string' ? raw : ((raw as { code?: string } | null)?.code ?? String(raw));
  const certificate = socket.getPeerCertificate();
  const reason =
    certificate === null || Object.keys(certificate).length === 0
      ? 'no_certificate'
      : tlsRefusalOf(Object.assign(new Error(code), { code }));
  return { ok: false, reason, error: raw instanceof Error ? raw : new Error(code) };
}

/** New connections to `server` use `material` from now on; established ones keep theirs. */
export function useTlsMaterial(server: Server, material: TlsMaterial): void {
  server.setSecureContext({ ...secureContext(material), ...VERSIONS });
}

/** Dials a peer over TLS with this node's current certificate; the peer's must chain to the authority. */
export function tlsConnect(tls: ClusterTls, host: string, port: number): TLSSocket {
  return connect({
    host,
    port,
    ...secureContext(tls.current()),
    ...VERSIONS,
    rejectUnauthorized: true,
    checkServerIdentity: (_host, certificate) =>
      tls.subject === undefined || tls.subject.test(commonName(certificate))
        ? undefined
        : new Error(`peer certificate subject CN=${commonName(certificate)} does not match ${tls.subject}`),
  });
}

/** Dials a peer: over TLS when the transport has it, else plain TCP. Ready on `readyEvent(tls)`. */
export function dialCluster(tls: ClusterTls | undefined, host: string, port: number): Socket {
  return tls === undefined ? connectTcp({ host, port }) : tlsConnect(tls, host, port);
}

/** The event after which a dialled socket may carry the cluster handshake: the TLS handshake's end, with TLS. */
export function readyEvent(tls: ClusterTls | undefined): 'connect' | 'secureConnect' {
  return tls === undefined ? 'connect' : 'secureConnect';
}

/** The reason a failed handshake is counted under, from the TLS error's code. */
export function tlsRefusalOf(error: Error & { readonly code?: string }): TlsRefusal {
  const code = error.code ?? '';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'aborted';
  if (/WRONG_VERSION_NUMBER|HTTP_REQUEST|UNKNOWN_PROTOCOL|UNEXPECTED_MESSAGE|PACKET_LENGTH/.test(code)) {
    return 'not_tls';
  }
  if (/DID_NOT_RETURN_A_CERTIFICATE|CERTIFICATE_REQUIRED|NO_CERTIFICATE/.test(code)) return 'no_certificate';
  if (/EXPIRED|NOT_YET_VALID/.test(code)) return 'expired_certificate';
  if (/UNKNOWN_CA|UNABLE_TO|SELF_SIGNED|VERIFY|BAD_CERTIFICATE|CERT_SIGNATURE/.test(code))
    return 'untrusted_certificate';
  return 'other';
}

function commonName(certificate: { readonly subject?: { readonly CN?: string | string[] } } | null): string {
  const name = certificate?.subject?.CN;
  return Array.isArray(name) ? (name[0] ?? '') : (name ?? '');
}
