// GET /metrics of a real node shows its cluster transport: connections per state and the bytes of incomplete
// inbound frames, following a raw peer that holds part of a frame and then goes away.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { authenticatedSocket } from '../cluster/raw-peer.js';
import { frameHeader } from '../cluster/tcp-peers.js';
import { pollUntil, startTestNode, stopAll } from './node-fixture.js';

async function scrape(node: RunningNode): Promise<Map<string, number>> {
  const text = await (await fetch(`${node.httpUrl}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('actor_ts_transport_')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

describe('transport metrics', () => {
  let node: RunningNode;
  beforeAll(async () => {
    node = await startTestNode();
  });
  afterAll(() => stopAll([node]));

  it('exports connections per state and the inbound bytes held, back to zero once the peer is gone', async () => {
    const before = await scrape(node);
    expect([...before.keys()].sort()).toEqual([
      'actor_ts_transport_connections{state="inbound-handshaking"}',
      'actor_ts_transport_connections{state="inbound-open"}',
      'actor_ts_transport_connections{state="outbound-connecting"}',
      'actor_ts_transport_connections{state="outbound-open"}',
      'actor_ts_transport_inbound_buffered_bytes',
      'actor_ts_transport_refused_total{reason="protocol_version"}',
    ]);
    expect(before.get('actor_ts_transport_refused_total{reason="protocol_version"}')).toBe(0);
    const socket = await authenticatedSocket({
      port: node.address.port,
      to: node.address.toString(),
      from: 'raw@127.0.0.1:44000',
    });
    socket.write(Buffer.concat([frameHeader(1024 * 1024), Buffer.alloc(50_000)]));
    let holding = new Map<string, number>();
    await pollUntil(async () => {
      holding = await scrape(node);
      return holding.get('actor_ts_transport_inbound_buffered_bytes') === 50_006;
    }, 'the partial frame in the metrics');
    expect(holding.get('actor_ts_transport_connections{state="inbound-open"}')).toBe(1);
    socket.destroy();
    await pollUntil(async () => {
      const now = await scrape(node);
      return (
        now.get('actor_ts_transport_inbound_buffered_bytes') === 0 &&
        now.get('actor_ts_transport_connections{state="inbound-open"}') === 0
      );
    }, 'the peer gone from the metrics');
  });

  it('counts a connection refused because the two ranges of protocol versions do not meet (issue 35)', async () => {
    const refused = authenticatedSocket({
      port: node.address.port,
      to: node.address.toString(),
      from: 'raw@127.0.0.1:44001',
      protocolRange: { min: 200, max: 201 },
    });
    await expect(refused).rejects.toThrow(/no common protocol version/);
    const after = await scrape(node);
    expect(after.get('actor_ts_transport_refused_total{reason="protocol_version"}')).toBe(1);
  });
});
