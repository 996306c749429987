// The delivery metrics of issue 23: redelivered and deduplicated sends and hand-off state bytes read from the
// source at scrape, send timeouts by `delivered` and entity snapshots by outcome counted from events.
import { describe, expect, it } from 'vitest';
import {
  MetricsEventHub,
  NodeMetrics,
  type DeliveryFigures,
  type MetricsSource,
} from '../../src/management/metrics.js';

function source(figures: DeliveryFigures[], hub: MetricsEventHub): MetricsSource {
  return {
    shardsHosted: () => [],
    placements: () => [],
    members: () => [],
    placementStore: () => ({ generation: 0, items: 0 }),
    delivery: () => figures,
    durable: false,
    subscribe: hub.subscribe,
  };
}

describe('delivery metrics', () => {
  it('exports the totals of the source and counts the events', async () => {
    const hub = new MetricsEventHub();
    const figures: DeliveryFigures[] = [
      {
        type: 'Counter',
        redelivered: 7,
        deduplicated: 3,
        stateBytesShipped: 4096,
        stateBytesHeld: 512,
        stateBytesRetained: 256,
        stateBytesWaiting: 128,
      },
    ];
    const metrics = new NodeMetrics(source(figures, hub), { processMetrics: false });
    hub.subscribe(metrics.events);
    hub.onSendTimeout('Counter', true);
    hub.onSendTimeout('Counter', false);
    hub.onSendTimeout('Counter', false);
    hub.onEntitySnapshots('Counter', 'shipped', 5);
    hub.onEntitySnapshots('Counter', 'too_large', 1);
    const text = await metrics.registry.metrics();
    expect(text).toContain('actor_ts_messages_redelivered_total{type="Counter"} 7');
    expect(text).toContain('actor_ts_messages_deduplicated_total{type="Counter"} 3');
    expect(text).toContain('actor_ts_handoff_state_bytes_total{type="Counter"} 4096');
    expect(text).toContain('actor_ts_handoff_state_bytes{type="Counter"} 512');
    expect(text).toContain('actor_ts_handoff_state_retained_bytes{type="Counter"} 256');
    expect(text).toContain('actor_ts_handoff_state_waiting_bytes{type="Counter"} 128');
    expect(text).toContain('actor_ts_send_timeouts_total{type="Counter",delivered="true"} 1');
    expect(text).toContain('actor_ts_send_timeouts_total{type="Counter",delivered="false"} 2');
    expect(text).toContain('actor_ts_entity_snapshots_total{type="Counter",outcome="shipped"} 5');
    expect(text).toContain('actor_ts_entity_snapshots_total{type="Counter",outcome="too_large"} 1');
    // Totals follow the source, never counting a scrape twice.
    figures[0] = { ...figures[0]!, redelivered: 9 };
    expect(await metrics.registry.metrics()).toContain('actor_ts_messages_redelivered_total{type="Counter"} 9');
  });
});
