// Issue 29 measured on a real CLI node (not a test: memory figures depend on the garbage collector): rounds of
// 40 authenticated peers each sending as much of a 16 MiB frame as the node lets them, until the node has
// closed every connection (over the 64 MiB inbound budget at once, or past the 30 s frame deadline), then
// 20 s idle. Prints the node's V8 external memory and RSS (from its own /metrics) before, after each round
// and after the idle time. Run: npm run build && node dist/bench/inbound-memory.js [rounds] [peers] [idleMs]
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { FRAME_HEADER_BYTES, FrameDecoder } from '../src/cluster/transport/frame-codec.js';
import { handshakeFrame, readHandshake } from '../src/cluster/transport/handshake.js';
import { PROTOCOL_VERSION } from '../src/cluster/transport/wire-message.js';
import { startNodes } from './lib/processes.js';

const MiB = 1024 * 1024;
const FRAME_BYTES = 16 * MiB;

/** Handshakes as `from` (no secret) and resolves with the open socket. */
function authenticated(host: string, port: number, to: string, from: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const decoder = new FrameDecoder({ maxFrameBytes: 4096 });
    socket.once('error', reject);
    socket.on('connect', () =>
      socket.write(handshakeFrame({ t: 'Hello', from, to, incarnation: 'bench', nonce: randomBytes(16) })),
    );
    const onData = (chunk: Buffer): void => {
      for (const frame of decoder.push(chunk).frames) {
        const handshake = readHandshake(frame);
        if (handshake?.t === 'Challenge') socket.write(handshakeFrame({ t: 'Proof' }));
        else if (handshake?.t === 'Accepted') {
          socket.off('data', onData);
          socket.off('error', reject);
          socket.on('error', () => undefined);
          resolve(socket);
        } else reject(new Error(`handshake: ${handshake?.t ?? 'bad frame'}`));
      }
    };
    socket.on('data', onData);
  });
}

/** Sends the header and all but the last byte of a 16 MiB frame, as fast as the node reads; resolves when the node closed it. */
function abandonFrame(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    const header = Buffer.alloc(FRAME_HEADER_BYTES);
    header.writeUInt32BE(FRAME_BYTES + 2, 0);
    header.writeUInt8(PROTOCOL_VERSION, 4);
    header.writeUInt8(2, 5);
    socket.write(header);
    const chunk = Buffer.alloc(256 * 1024);
    let left = FRAME_BYTES - 1;
    const pump = (): void => {
      while (left > 0 && !socket.destroyed) {
        const n = Math.min(left, chunk.byteLength);
        left -= n;
        if (!socket.write(n === chunk.byteLength ? chunk : chunk.subarray(0, n)))
          return void socket.once('drain', pump);
      }
    };
    pump();
  });
}

async function figures(url: string): Promise<{ externalMB: number; rssMB: number; heldMB: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const mb = (bytes: number): number => Math.round(bytes / 1e6);
  return {
    externalMB: mb(value('actor_ts_nodejs_external_memory_bytes')),
    rssMB: mb(value('actor_ts_process_resident_memory_bytes')),
    heldMB: mb(value('actor_ts_transport_inbound_buffered_bytes')),
  };
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const peers = Number(process.argv[3] ?? 40);
  const idleMs = Number(process.argv[4] ?? 20_000);
  const bin = new URL('../../bin/actor-ts-placement.js', import.meta.url).pathname;
  const nodes = await startNodes(bin, 1);
  try {
    const url = nodes.urls[0] as string;
    const address = nodes.addresses[0] as string;
    const port = Number(address.slice(address.lastIndexOf(':') + 1));
    const rows: Array<[string, Awaited<ReturnType<typeof figures>>, number, number]> = [
      ['before', await figures(url), 0, 0],
    ];
    for (let round = 1; round <= rounds; round++) {
      const started = Date.now();
      // The highest RSS seen while the round runs (sampled every 250 ms).
      let peakRss = 0;
      const sampler = setInterval(
        () =>
          void figures(url).then(
            (f) => (peakRss = Math.max(peakRss, f.rssMB)),
            () => undefined,
          ),
        250,
      );
      const sockets = await Promise.all(
        Array.from({ length: peers }, (_, i) =>
          authenticated('127.0.0.1', port, address, `raw@127.0.0.2:${10_000 + round * 1000 + i}`),
        ),
      );
      await Promise.all(sockets.map(abandonFrame));
      clearInterval(sampler);
      rows.push([`after round ${round}`, await figures(url), peakRss, Date.now() - started]);
    }
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    rows.push([`after ${idleMs / 1000} s idle`, await figures(url), 0, idleMs]);
    console.log(
      `| when | V8 external (MB) | RSS (MB) | RSS peak in the round (MB) | inbound budget in use (MB) | took (s) |`,
    );
    console.log(`| --- | ---: | ---: | ---: | ---: | ---: |`);
    for (const [when, f, peak, ms] of rows) {
      console.log(
        `| ${when} | ${f.externalMB} | ${f.rssMB} | ${peak === 0 ? '' : peak} | ${Number.isNaN(f.heldMB) ? 'n/a' : f.heldMB} | ${(ms / 1000).toFixed(1)} |`,
      );
    }
  } finally {
    await nodes.stop();
  }
}

await main();
