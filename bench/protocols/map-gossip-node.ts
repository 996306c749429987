// What both gossip baselines share: a last-writer-wins JSON map per node, fed by the same transport, read
// and observed the same way. Subclasses decide only when and what to gossip.
import type { NodeAddress } from '../../src/cluster/address.js';
import { isFamilyMessage } from '../../src/cluster/transport/wire-message.js';
import { PLACEMENT_SYNC_MESSAGES } from '../../src/placement-replication/sync-messages.js';
import { LwwMap, type Entry } from './lww-map.js';
import type { Protocol, SimContext, SimNode, Stamp } from './types.js';

export abstract class MapGossipNode implements SimNode {
  protected readonly map = new LwwMap();
  protected closed = false;
  private readonly listeners: Array<(shardIds: readonly number[]) => void> = [];
  private readonly unsubscribe: () => void;

  constructor(
    protected readonly context: SimContext,
    preloaded: ReadonlyArray<[number, Entry]>,
    protected readonly peers: NodeAddress[],
  ) {
    for (const [shardId, entry] of preloaded) this.map.mergeEntry(shardId, entry);
    this.unsubscribe = context.transport.onMessage((from, message) => {
      if (isFamilyMessage(PLACEMENT_SYNC_MESSAGES, message) && message.type === 'PlacementUpdate')
        this.receive(from, message.update);
    });
  }

  write(shardId: number, target: string): Stamp {
    const entry = this.map.write(shardId, target, this.context.now(), this.context.self.toString());
    this.wrote(shardId, entry);
    this.changed([shardId]);
    return { wallMs: entry[1], counter: 0, node: entry[2] };
  }

  read(shardId: number): string | undefined {
    return this.map.read(shardId);
  }

  stamp(shardId: number): Stamp | undefined {
    return this.map.stamp(shardId);
  }

  onChange(listener: (shardIds: readonly number[]) => void): void {
    this.listeners.push(listener);
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
  }

  /** A local write happened (before listeners hear of it); delta gossip buffers it here. */
  protected wrote(_shardId: number, _entry: Entry): void {}

  protected changed(shardIds: readonly number[]): void {
    if (shardIds.length === 0) return;
    for (const listener of this.listeners) listener(shardIds);
  }

  protected abstract receive(from: NodeAddress, bytes: Uint8Array): void;
}

/** Every member but this node. */
export function otherMembers(context: SimContext): NodeAddress[] {
  return context.all.filter((address) => !address.equals(context.self));
}

/**
 * The Protocol of a gossip baseline: its preloaded state is the entries as written by 'bench-preload' at
 * `now()`, and each node is a `Node` made from it.
 */
export function mapGossipProtocol(
  id: string,
  label: string,
  Node: new (context: SimContext, preloaded: ReadonlyArray<[number, Entry]>) => MapGossipNode,
): Protocol {
  return {
    id,
    label,
    preload(entries, now) {
      return entries.map(([shardId, target]): [number, Entry] => [shardId, [target, now(), 'bench-preload']]);
    },
    create(context, preloaded) {
      return new Node(context, (preloaded as Array<[number, Entry]> | undefined) ?? []);
    },
  };
}
