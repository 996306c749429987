// Whom a commit pushes changed content to, and how: the full state to every live peer in a small cluster;
// in a larger one only an urgent change, as a delta (GossipNews) to NEWS_FANOUT random peers, while joins
// and moves to Up wait for the periodic gossip; and a member just downed always, in full, so it learns of
// its downing from anyone who can reach it.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import type { ClusterChannel } from '../../src/cluster/membership/cluster-channel.js';
import { resolveClusterConfig } from '../../src/cluster/membership/config.js';
import { keyOf, type GossipState, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import { MembershipCore, NEWS_FANOUT, type Spread } from '../../src/cluster/membership/membership-core.js';
import type { ClusterMessage } from '../../src/cluster/membership/messages.js';
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

function core(count: number): { core: MembershipCore; sent: string[]; types: string[]; messages: ClusterMessage[] } {
  const sent: string[] = [];
  const types: string[] = [];
  const messages: ClusterMessage[] = [];
  const channel: ClusterChannel = {
    send: (to, message) => {
      sent.push(to.toString());
      types.push(message.type);
      messages.push(message);
    },
    reconnect: () => undefined,
    onConnectionLost: () => () => undefined,
    listen: () => () => undefined,
  };
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
  return { core: c, sent, types, messages };
}

/** The same members with member `port` moved to `status` (a change to push). */
function withStatus(state: GossipState, port: number, status: MemberRecord['status']): GossipState {
  const members = new Map(state.members);
  const r = record(port, port);
  members.set(keyOf(r), { ...r, status });
  return { ...state, members, seen: new Set() };
}

describe('membership core: pushing a change', () => {
  it.each<[number, Spread, number, string]>([
    [5, 'push', 4, 'Gossip'],
    [NEWS_FANOUT + 1, 'push', NEWS_FANOUT, 'Gossip'],
    [40, 'push', NEWS_FANOUT, 'GossipNews'],
    [40, 'none', 0, ''],
  ])('%i members, spread %s: an urgent change is pushed to %i peers as %s', (count, spread, expected, type) => {
    const { core: c, sent, types } = core(count);
    const pushedTo = c.commit(withStatus(c.gossip, 2, 'leaving'), spread);
    expect(sent).toHaveLength(expected);
    expect(new Set(sent).size).toBe(expected);
    expect(new Set(types)).toEqual(new Set(expected === 0 ? [] : [type]));
    // Only peers sent the whole state count as told (the push-pull reply is skipped for them).
    expect(pushedTo.size).toBe(type === 'Gossip' ? expected : 0);
    expect(sent).not.toContain(c.self.toString());
  });

  it('leaves a join to the periodic gossip in a large cluster, and pushes it at once in a small one', () => {
    const joining = (state: GossipState): GossipState => {
      const members = new Map(state.members);
      const r = { ...record(99, 0), status: 'joining' as const };
      members.set(keyOf(r), r);
      return { ...state, members, seen: new Set() };
    };
    const large = core(40);
    large.core.commit(joining(large.core.gossip), 'push');
    expect(large.sent).toEqual([]);
    const small = core(5);
    small.core.commit(joining(small.core.gossip), 'push');
    expect(small.sent).toHaveLength(5);
  });

  it('sends a delta that holds only what changed', () => {
    const { core: c, messages } = core(40);
    c.commit(withStatus(c.gossip, 2, 'leaving'), 'push');
    const news = messages[0];
    if (news?.type !== 'GossipNews') throw new Error(`expected GossipNews, got ${news?.type}`);
    expect(news.gossip.members.map((m) => [m.address, m.status])).toEqual([['sys@h:2', 'leaving']]);
    expect(news.gossip.seen).toEqual([]);
    // One message object for every target: the transport encodes it once.
    expect(new Set(messages).size).toBe(1);
  });

  it("pushes this node's own urgent change to every live peer, and passes others' news on to NEWS_FANOUT", () => {
    const own = core(40);
    own.core.applyOwnChanges([{ ...record(33, 33), status: 'down' }]);
    // 38 live peers as news, and the downed member in full.
    expect(new Set(own.sent).size).toBe(39);
    expect(own.sent).toHaveLength(39);
    const relay = core(40);
    relay.core.commit(withStatus(relay.core.gossip, 33, 'down'), 'push');
    expect(relay.sent.length).toBeLessThanOrEqual(NEWS_FANOUT + 1);
    // A join is not urgent: this node's own or not, it rides the periodic gossip.
    const join = core(40);
    join.core.applyOwnChanges([{ ...record(99, 0), status: 'joining' }]);
    expect(join.sent).toEqual([]);
  });

  it('always tells a member just downed, on top of the fan-out', () => {
    const { core: c, sent } = core(40);
    c.commit(withStatus(c.gossip, 33, 'down'), 'push');
    expect(sent).toContain(record(33, 33).address.toString());
    expect(sent.length).toBeLessThanOrEqual(NEWS_FANOUT + 1);
  });
});
