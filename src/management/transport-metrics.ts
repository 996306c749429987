// The cluster transport's metrics: its connections by direction and state, the bytes of incomplete inbound frames
// it holds, and the connections it refused by reason. Read from the transport at scrape time.
import { Counter, Gauge, type Registry } from 'prom-client';
import { readAtScrape } from './scrape.js';

/** Connection states of the cluster transport, always exported (as 0 when none is in them). */
export const TRANSPORT_CONNECTION_STATES = [
  'inbound-handshaking',
  'inbound-open',
  'outbound-connecting',
  'outbound-open',
] as const;

/** What the cluster transport holds now (TcpTransport.usage() has this shape). */
export interface TransportFigures {
  readonly connections: Readonly<Record<(typeof TRANSPORT_CONNECTION_STATES)[number], number>>;
  /** Bytes of incomplete inbound frames in the shared budget. */
  readonly inboundBufferedBytes: number;
  /** Connections refused since the start, by reason (`protocol_version`: the two ranges did not meet). */
  readonly refused?: Readonly<Record<(typeof TRANSPORT_REFUSAL_REASONS)[number], number>>;
  /** TLS handshakes the cluster port refused since the start, by reason (every reason listed, 0 when none). */
  readonly tlsRefused?: Readonly<Record<string, number>>;
  /** When each certificate this node presents expires (ms since the epoch), by port: `cluster`, `management`. */
  readonly certificates?: ReadonlyArray<{ readonly port: string; readonly validToMs: number }>;
}

/** Why the cluster transport refused connections, always exported (as 0 when none was). */
export const TRANSPORT_REFUSAL_REASONS = ['protocol_version'] as const;

/** Registers the transport's metrics (names after `prefix`), read from `transport()` at each scrape. */
export function registerTransportMetrics(
  transport: () => TransportFigures,
  registers: Registry[],
  prefix: string,
): void {
  new Gauge({
    name: `${prefix}transport_connections`,
    help: 'Cluster transport connections not yet ended, per direction and state.',
    labelNames: ['state'],
    registers,
    collect() {
      const { connections } = transport();
      for (const state of TRANSPORT_CONNECTION_STATES) this.set({ state }, connections[state]);
    },
  });
  new Counter({
    name: `${prefix}transport_refused_total`,
    help: 'Cluster transport connections refused, by reason (protocol_version: no common protocol version).',
    labelNames: ['reason'],
    registers,
    collect() {
      this.reset();
      const refused = transport().refused;
      for (const reason of TRANSPORT_REFUSAL_REASONS) this.inc({ reason }, refused?.[reason] ?? 0);
    },
  });
  new Counter({
    name: `${prefix}tls_handshakes_failed_total`,
    help: 'TLS handshakes refused on the cluster port, by reason (not_tls, no_certificate, untrusted_certificate, expired_certificate, aborted, other).',
    labelNames: ['reason'],
    registers,
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(transport().tlsRefused ?? {})) this.inc({ reason }, count);
    },
  });
  new Gauge({
    name: `${prefix}tls_certificate_expiry_days`,
    help: 'Days until the certificate this node presents on a port expires (cluster: mutual TLS, management: HTTPS).',
    labelNames: ['port'],
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const { port, validToMs } of transport().certificates ?? [])
        this.set({ port }, (validToMs - now) / 86_400_000);
    },
  });
  new Gauge({
    name: `${prefix}transport_inbound_buffered_bytes`,
    help: 'Bytes of incomplete inbound frames the cluster transport holds (its shared inbound budget in use).',
    registers,
    collect: readAtScrape(() => transport().inboundBufferedBytes),
  });
}
