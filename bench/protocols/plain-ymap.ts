// Baseline 3: a plain Yjs Y.Map with one key per shard holding [target, wallMs, node], no HLC and no
// per-writer slots. Replicated like the store (every update pushed to every peer, new content relayed),
// so the only difference is who wins a concurrent write: Yjs decides by client id, not by timestamp.
import * as Y from 'yjs';
import type { NodeAddress } from '../../src/cluster/address.js';
import { isFamilyMessage } from '../../src/cluster/transport/wire-message.js';
import { PLACEMENT_SYNC_MESSAGES } from '../../src/placement-replication/sync-messages.js';
import { TYPE_NAME, type Protocol, type SimContext, type SimNode, type Stamp } from './types.js';

type Value = readonly [target: string, wallMs: number, node: string];

export const plainYMapProtocol: Protocol = {
  id: 'ymap',
  label: 'plain Y.Map, one key per shard',
  preload(entries, now) {
    const doc = new Y.Doc();
    const map = doc.getMap<Value>(TYPE_NAME);
    doc.transact(() => {
      for (const [shardId, target] of entries) map.set(String(shardId), [target, now(), 'bench-preload']);
    });
    return Y.encodeStateAsUpdateV2(doc);
  },
  create(context, preloaded) {
    return new YMapNode(context, preloaded as Uint8Array | undefined);
  },
};

class YMapNode implements SimNode {
  private readonly doc = new Y.Doc();
  private readonly map: Y.Map<Value>;
  private readonly listeners: Array<(shardIds: readonly number[]) => void> = [];
  private readonly unsubscribe: () => void;
  private readonly peers: NodeAddress[];

  constructor(
    private readonly context: SimContext,
    preloaded: Uint8Array | undefined,
  ) {
    // Seeded client ids keep the run repeatable; Yjs would pick random ones, with the same odds.
    this.doc.clientID = Math.floor(context.random() * 2 ** 32);
    this.map = this.doc.getMap<Value>(TYPE_NAME);
    if (preloaded !== undefined) Y.applyUpdateV2(this.doc, preloaded);
    this.peers = context.all.filter((address) => !address.equals(context.self));
    this.map.observe((event) => {
      const shardIds = [...event.keysChanged].map(Number);
      for (const listener of this.listeners) listener(shardIds);
    });
    this.doc.on('updateV2', (update: Uint8Array, origin: unknown) => {
      for (const peer of this.peers) {
        if (peer.toString() !== origin) context.transport.send(peer, { type: 'PlacementUpdate', update });
      }
    });
    this.unsubscribe = context.transport.onMessage((from, message) => {
      if (isFamilyMessage(PLACEMENT_SYNC_MESSAGES, message) && message.type === 'PlacementUpdate')
        Y.applyUpdateV2(this.doc, message.update, from.toString());
    });
  }

  write(shardId: number, target: string): Stamp {
    const value: Value = [target, this.context.now(), this.context.self.toString()];
    this.map.set(String(shardId), value);
    return { wallMs: value[1], counter: 0, node: value[2] };
  }

  read(shardId: number): string | undefined {
    return this.map.get(String(shardId))?.[0];
  }

  stamp(shardId: number): Stamp | undefined {
    const value = this.map.get(String(shardId));
    return value === undefined ? undefined : { wallMs: value[1], counter: 0, node: value[2] };
  }

  onChange(listener: (shardIds: readonly number[]) => void): void {
    this.listeners.push(listener);
  }

  close(): void {
    this.unsubscribe();
    this.doc.destroy();
  }
}
