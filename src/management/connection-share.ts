// The management server's connection cap, shared per client (remote address). While there is room anyone may
// open connections. At the cap, a client still under its share gets in by closing the oldest connection of the
// client holding the most beyond its share; anyone else's next connection is closed at once, unread. So one
// client holding slow requests, and reopening each one that is closed, cannot lock the others out, while a
// busy client alone (a proxy, a dashboard) may still use the whole cap. Node's own `maxConnections` cannot do
// this: it closes a connection past the cap before anyone sees it, so it cannot tell whose it would be.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionShare {
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
}

export function shareConnections(server: Server, limits: ConnectionShare): void {
  const byClient = new Map<string, Set<Socket>>();
  let open = 0;
  const forget = (client: string, socket: Socket): void => {
    const sockets = byClient.get(client);
    if (sockets === undefined || !sockets.delete(socket)) return;
    open--;
    if (sockets.size === 0) byClient.delete(client);
  };
  server.on('connection', (socket: Socket) => {
    // An IPv4 client of a dual-stack listener appears as ::ffff:a.b.c.d; it is the same client either way.
    const client = (socket.remoteAddress ?? 'unknown').replace(/^::ffff:/, '');
    if (open >= limits.maxConnections) {
      const mine = byClient.get(client)?.size ?? 0;
      const victim =
        mine < limits.maxConnectionsPerClient ? oldestBeyondShare(byClient, limits.maxConnectionsPerClient) : undefined;
      if (victim === undefined) {
        socket.destroy();
        return;
      }
      // Counted out now: its close comes later, and the slot is this connection's from this moment.
      forget(victim.client, victim.socket);
      victim.socket.destroy();
    }
    const sockets = byClient.get(client) ?? new Set<Socket>();
    sockets.add(socket);
    byClient.set(client, sockets);
    open++;
    socket.once('close', () => forget(client, socket));
  });
}

/** The oldest connection of the client holding the most connections, if that is more than its share. */
function oldestBeyondShare(
  byClient: ReadonlyMap<string, Set<Socket>>,
  share: number,
): { client: string; socket: Socket } | undefined {
  let heaviest: [string, Set<Socket>] | undefined;
  for (const entry of byClient) if (heaviest === undefined || entry[1].size > heaviest[1].size) heaviest = entry;
  if (heaviest === undefined || heaviest[1].size <= share) return undefined;
  // Sets keep insertion order: the first is the one that has held its slot longest.
  const [socket] = heaviest[1];
  return socket === undefined ? undefined : { client: heaviest[0], socket };
}
