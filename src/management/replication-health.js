/**
 * Judges a replica's replication from its counters: peers synced, frames rejected, values held; lists each problem in
 * words.
 */
export function replicationHealth(replicator, store) {
    const problems = [];
    const peers = replicator.peers;
    if (store.awaitingMissingUpdates)
        problems.push('updates wait for an earlier update of their writer that has not arrived');
    if (peers.length > 0 && peers.every((peer) => peer.lastSendFailed))
        problems.push('the last send to every peer failed');
    if (peers.length > 0 && peers.every((peer) => peer.lastFrameRejected))
        problems.push('the last frame from every peer was rejected');
    return {
        peers: peers.length,
        syncedPeers: peers.filter((peer) => peer.synced).length,
        peersBehind: replicator.peersBehind,
        framesRejected: replicator.framesRejected,
        sendFailures: replicator.sendFailures,
        rejectedValues: store.rejectedValues,
        heldValues: store.heldValues,
        quarantinedValues: store.quarantinedValues,
        awaitingMissingUpdates: store.awaitingMissingUpdates,
        problems,
    };
}
//# sourceMappingURL=replication-health.js.map