// The shared inbound budget is fair to members (issue 27 case 5), over real sockets: strangers that keep it
// full no longer starve a member's frames; their share goes to the member and they are disconnected and
// counted; a stranger that makes the node buffer large frames that are no valid message is disconnected too;
// members that fill the budget themselves are counted as starvation, which the node's health can read.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame } from '../../src/cluster/transport/frame-codec.js';
import { encodeValue } from '../../src/cluster/transport/message-codec.js';
import type { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { TcpTestBed, expectReleased, partialFrame, type RawPeer } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
afterEach(() => bed.cleanUp());

const KiB = 1024;
const update = (bytes: number) => ({ type: 'PlacementUpdate', update: new Uint8Array(bytes) }) as const;

function updatesReceived(transport: TcpTransport): number[] {
  const sizes: number[] = [];
  transport.onMessage((_from, message) => {
    if (message.type === 'PlacementUpdate') sizes.push((message as ReturnType<typeof update>).update.byteLength);
  });
  return sizes;
}

/** Four strangers holding almost all of `target`'s 1 MiB budget in frames of valid messages they never finish. */
async function strangersHoldingTheBudget(target: TcpTransport): Promise<RawPeer[]> {
  const strangers = await Promise.all(Array.from({ length: 4 }, () => bed.peer(target)));
  const frame = encodeFrame('message', encodeValue(update(250 * KiB)));
  for (const stranger of strangers) stranger.socket.write(frame.subarray(0, frame.byteLength - 100));
  // Each stranger holds the budget from its first read; its frame's last bytes may come in later reads.
  const held = (): boolean => target.usage().budgetHolders === 4 && target.usage().inboundBufferedBytes > 990 * KiB;
  await waitFor(held, 'the strangers holding the budget');
  expect(target.usage().inboundBufferedBytes).toBeGreaterThan(990 * KiB);
  return strangers;
}

describe('the shared inbound budget', () => {
  it('gives a member room for its frames while strangers keep it full, disconnecting and counting them', async () => {
    const b = await bed.start({
      maxFrameBytes: 256 * KiB,
      maxInboundBufferedBytes: 1024 * KiB,
      frameTimeoutMs: 600_000,
    });
    const member = await bed.start();
    b.trustPeers((peer) => peer.equals(member.self));
    const atB = updatesReceived(b);
    const strangers = await strangersHoldingTheBudget(b);

    for (let i = 0; i < 4; i++) member.send(b.self, update(200 * KiB));
    await waitFor(() => atB.length === 4, 'the member’s four bulk writes');
    expect(atB).toEqual([200 * KiB, 200 * KiB, 200 * KiB, 200 * KiB]);
    expect(member.stats()).toMatchObject({ connections: 1, connectionsLost: 0 });
    expect(b.stats().peersDisconnectedForBudget).toBeGreaterThanOrEqual(1);
    expect(b.stats().inboundStarved).toBe(0);
    await waitFor(() => strangers.some((s) => s.closed()), 'a stranger disconnected');

    await member.close();
    for (const stranger of strangers) stranger.socket.destroy();
    await expectReleased(b, 'everyone gone');
  });

  it('still refuses a stranger that does not fit, and keeps a member’s frame in progress', async () => {
    const b = await bed.start({
      maxFrameBytes: 256 * KiB,
      maxInboundBufferedBytes: 300 * KiB,
      frameTimeoutMs: 600_000,
    });
    const member = await bed.peer(b);
    b.trustPeers((peer) => peer.toString() === member.from);
    partialFrame(member, 256 * KiB, 200 * KiB);
    await waitFor(() => b.usage().budgetHolders === 1, 'the member’s partial frame held');
    const stranger = await bed.peer(b);
    partialFrame(stranger, 256 * KiB, 200 * KiB);
    await waitFor(() => stranger.closed(), 'the stranger refused');
    expect(member.closed()).toBe(false);
    expect(b.stats()).toMatchObject({ inboundOverBudget: 1, peersDisconnectedForBudget: 0, inboundStarved: 0 });
  });

  it('disconnects and counts a stranger whose large frame is no valid message; small ones and members’ are only dropped', async () => {
    const b = await bed.start({ maxHandshakeFrameBytes: 4 * KiB });
    const member = await bed.peer(b);
    b.trustPeers((peer) => peer.toString() === member.from);
    const junk = (bytes: number) =>
      encodeFrame('message', encodeValue({ type: 'NoSuchType', padding: new Uint8Array(bytes) }));
    const small = await bed.peer(b);
    small.socket.write(junk(100));
    member.socket.write(junk(64 * KiB));
    await waitFor(() => b.stats().malformed === 2, 'two malformed messages dropped');
    const large = await bed.peer(b);
    large.socket.write(junk(64 * KiB));
    await waitFor(() => large.closed(), 'the large junk frame’s sender disconnected');
    expect(b.stats()).toMatchObject({ malformed: 3, peersDisconnectedForBudget: 1 });
    expect(small.closed() || member.closed()).toBe(false);
  });

  it('counts a member’s frame refused because other members fill the budget as starvation', async () => {
    // With a secret every authenticated peer is a member.
    const b = await bed.start({
      secret: 's',
      maxFrameBytes: 256 * KiB,
      maxInboundBufferedBytes: 500 * KiB,
      frameTimeoutMs: 600_000,
    });
    const members = await Promise.all(Array.from({ length: 3 }, () => bed.peer(b, { secret: 's' })));
    for (const member of members) partialFrame(member, 256 * KiB, 200 * KiB);
    await waitFor(() => members.filter((m) => m.closed()).length === 1, 'one member refused');
    expect(b.stats()).toMatchObject({ inboundStarved: 1, inboundOverBudget: 1, peersDisconnectedForBudget: 0 });
  });
});
