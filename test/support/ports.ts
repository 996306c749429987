// Loopback ports for real node processes: several distinct free ones at once, a free consecutive block (for
// commands that number their nodes), and whether one is free again. Nothing here imports vitest (bench/ uses it).
import { createServer, type Server } from 'node:net';

function probePort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** `count` distinct ports that were free a moment ago (the kernel picks them; held together so none repeats). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('no port');
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return ports;
}

/** A base port such that base .. base + count - 1 are all free (local-cluster numbers its nodes consecutively). */
export async function freeConsecutivePorts(count: number, avoid: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    // Below the Linux ephemeral range, so outgoing connections are unlikely to take the ports meanwhile.
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = !avoid.has(base + i) && (await probePort(base + i)) === base + i;
    if (ok) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

/** True when nothing listens on 127.0.0.1:port any more. */
export async function portIsFree(port: number): Promise<boolean> {
  return (await probePort(port)) === port;
}
