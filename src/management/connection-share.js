export function shareConnections(server, limits) {
    const byClient = new Map();
    let open = 0;
    const forget = (client, socket) => {
        const sockets = byClient.get(client);
        if (sockets === undefined || !sockets.delete(socket))
            return;
        open--;
        if (sockets.size === 0)
            byClient.delete(client);
    };
    server.on('connection', (socket) => {
        // An IPv4 client of a dual-stack listener appears as ::ffff:a.b.c.d; it is the same client either way.
        const client = (socket.remoteAddress ?? 'unknown').replace(/^::ffff:/, '');
        if (open >= limits.maxConnections) {
            const mine = byClient.get(client)?.size ?? 0;
            const victim = mine < limits.maxConnectionsPerClient ? oldestBeyondShare(byClient, limits.maxConnectionsPerClient) : undefined;
            if (victim === undefined) {
                socket.destroy();
                return;
            }
            // Counted out now: its close comes later, and the slot is this connection's from this moment.
            forget(victim.client, victim.socket);
            victim.socket.destroy();
        }
        const sockets = byClient.get(client) ?? new Set();
        sockets.add(socket);
        byClient.set(client, sockets);
        open++;
        socket.once('close', () => forget(client, socket));
    });
}
/** The oldest connection of the client holding the most connections, if that is more than its share. */
function oldestBeyondShare(byClient, share) {
    let heaviest;
    for (const entry of byClient)
        if (heaviest === undefined || entry[1].size > heaviest[1].size)
            heaviest = entry;
    if (heaviest === undefined || heaviest[1].size <= share)
        return undefined;
    // Sets keep insertion order: the first is the one that has held its slot longest.
    const [socket] = heaviest[1];
    return socket === undefined ? undefined : { client: heaviest[0], socket };
}
//# sourceMappingURL=connection-share.js.map