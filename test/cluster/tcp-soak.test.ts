// Soak of the inbound side (issue 29), bounded to a few seconds: round after round, forty peers fill frames
// and abandon them in every way a connection ends (they close, stall past the deadline, overrun the budget,
// send a bad frame, are replaced by their own next connection). After each round the transport's own
// accounting must be back to nothing: no registry entry, no budget in use. Memory figures are not asserted
// (they depend on the garbage collector's timing); bench/inbound-memory.ts measures those on a real node.
import { afterEach, describe, expect, it } from 'vitest';
import { TcpTestBed, expectReleased, frameHeader, partialFrame, type RawPeer } from './tcp-peers.js';
import { waitFor } from './wait-for.js';

const bed = new TcpTestBed();
afterEach(() => bed.cleanUp());

const KiB = 1024;
const PEERS = 40;
const ROUNDS = 5;
const FRAME = 256 * KiB;
const BUDGET = 2 * 1024 * KiB;

describe('inbound connections under repeated abandoned frames', () => {
  it(`returns to zero held after each of ${ROUNDS} rounds of ${PEERS} peers abandoning partial frames`, async () => {
    const b = await bed.start({ maxFrameBytes: FRAME, maxInboundBufferedBytes: BUDGET, frameTimeoutMs: 300 });
    let peakHeld = 0;
    const sample = setInterval(() => (peakHeld = Math.max(peakHeld, b.usage().inboundBufferedBytes)), 5);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const peers: RawPeer[] = await Promise.all(
          // Every fourth peer reuses its predecessor's address: its connection replaces the earlier one.
          Array.from({ length: PEERS }, (_, i) =>
            bed.peer(
              b,
              i % 4 === 3
                ? { from: `raw@127.0.0.1:${50_000 + round * PEERS + i - 1}` }
                : { from: `raw@127.0.0.1:${50_000 + round * PEERS + i}` },
            ),
          ),
        );
        peers.forEach((peer, i) => {
          if (i % 5 === 0) return void peer.socket.write(frameHeader(10, 2, 99));
          // 32 x 200 KiB is three times the budget: many of them are closed over it.
          partialFrame(peer, FRAME, 200 * KiB);
          // The rest stall until the deadline closes them.
          if (i % 5 === 1) peer.socket.destroy();
        });
        await waitFor(
          () => peers.every((p) => p.closed() || p.socket.destroyed),
          `round ${round}: every connection ended`,
        );
        await expectReleased(b, `after round ${round}`);
      }
    } finally {
      clearInterval(sample);
    }
    expect(peakHeld).toBeLessThanOrEqual(BUDGET);
    expect(b.stats().inboundOverBudget + b.stats().frameTimeouts).toBeGreaterThan((ROUNDS * PEERS) / 2);
  });
});
