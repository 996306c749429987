// Whom a commit pushes changed content to: this node's own decisions to every live peer, news merged from
// others to every live peer in a small cluster and to NEWS_FANOUT random peers in a larger one, and a member
// just downed always, so it learns of its downing from anyone who can reach it.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import type { ClusterChannel } from '../../src/cluster/cluster-channel.js';
import { resolveClusterConfig } from '../../src/cluster/config.js';
import { keyOf, type GossipState, type MemberRecord } from '../../src/cluster/gossip.js';
import { MembershipCore, NEWS_FANOUT, type Spread } from '../../src/cluster/membership-core.js';
import { seededRandom } from '../../src/cluster/random.js';
import { systemScheduler } from '../../src/cluster/scheduler.js';
import { silentLogger } from '../../src/logging.js';

const record = (port: number, upNumber: number): MemberRecord => ({
  address: new NodeAddress('sys', 'h', port),
  incarnation: 'i',
  status: 'up',
  appVersion: '1',
  roles: [],
  upNumber,
});

function core(count: number): { core: MembershipCore; sent: string[] } {
  const sent: string[] = [];
  const channel: ClusterChannel = { send: (to) => sent.push(to.toString()), reconnect: () => undefined, listen: () => () => undefined };
  const self = record(1, 1);
  const c = new MembershipCore({
    self: self.address,
    incarnation: 'i',
    selfKey: keyOf(self),
    config: resolveClusterConfig(),
    scheduler: systemScheduler,
    logger: silentLogger(),
    channel,
    random: seededRandom(7),
  });
  const members = new Map(Array.from({ length: count }, (_, i) => record(i + 1, i + 1)).map((r) => [keyOf(r), r]));
  c.gossip = { members, seen: new Set(members.keys()), tombstones: new Map() };
  return { core: c, sent };
}

/** The same members with member `port` moved to `status` (a change to push). */
function withStatus(state: GossipState, port: number, status: MemberRecord['status']): GossipState {
  const members = new Map(state.members);
  const r = record(port, port);
  members.set(keyOf(r), { ...r, status });
  return { ...state, members, seen: new Set() };
}

describe('membership core: pushing a change', () => {
  it.each<[number, Spread, number]>([
    [5, 'all', 4],
    [5, 'fanout', 4],
    [NEWS_FANOUT + 1, 'fanout', NEWS_FANOUT],
    [40, 'all', 39],
    [40, 'fanout', NEWS_FANOUT],
    [40, 'none', 0],
  ])('%i members, spread %s: pushed to %i peers', (count, spread, expected) => {
    const { core: c, sent } = core(count);
    const pushedTo = c.commit(withStatus(c.gossip, 2, 'leaving'), spread);
    expect(sent).toHaveLength(expected);
    expect(new Set(sent).size).toBe(expected);
    expect(pushedTo.size).toBe(expected);
    expect(sent).not.toContain(c.self.toString());
  });

  it('always tells a member just downed, on top of the fan-out', () => {
    const { core: c, sent } = core(40);
    c.commit(withStatus(c.gossip, 33, 'down'), 'fanout');
    expect(sent).toContain(record(33, 33).address.toString());
    expect(sent.length).toBeLessThanOrEqual(NEWS_FANOUT + 1);
  });
});
