// What the transports carry: opaque messages with a string `type`, grouped into families that each layer
// defines and registers itself (membership, sharding, placement sync). The transport knows no family; it
// only lets through what a registered family's parse accepts, so no layer depends on the one above it.
import { ActorTsError } from '../../errors.js';

/**
 * Bumped on any incompatible change of a message shape; carried in every frame. 2: placement sync payloads
 * carry the store's generation envelope (compaction) and ShardLocations names hand-offs in progress.
 * 3: slot values gained optional meta (a pin's mode, expiry, reason and author), gossip members (and Join)
 * gained optional attributes. 4: gossip carries the reachability table (who observes whom as unreachable),
 * which the leader's downing decision reads: a node of version 3 would still down by its own view.
 * 5: GossipStatus (a hash and a seen bitset instead of the full state once peers agree) and GossipNews
 * (deltas of urgent changes in a large cluster); a node of version 4 would drop both.
 * 6: GossipAsk (a receiver asks the author of a change it held back, gossip-guard.ts), and the handshake's
 * Challenge no longer carries the acceptor's incarnation; a node of version 5 would believe relayed gossip.
 * 7: RegisterRegion names the hand-off states the region keeps (`retained`), with ShardStateHeld and
 * ShardStateReleased, and EntityReplies acknowledges many sends in one frame; a node of version 6 would drop
 * its registrations and never settle those sends.
 * 8: a hand-off state chunk carries its entities as one binary (`packed`, sharding/protocol/packed-states.ts)
 * instead of a list of maps; a node sends it so only to a peer whose agreed version is 8 (stateOnWire), and a
 * peer of version 7 still gets and sends the list.
 * 9: a hand-off state chunk may carry `last` on a transfer's final part instead of every chunk naming `parts`, so
 * the old host sends each chunk as soon as it is packed (sharding/protocol/transfer-parts.ts); a node streams
 * chunks so only to a peer whose agreed version is 9, and a peer of version 7 or 8 still gets `parts`.
 * 10: a hand-off's state goes straight from the old host to the new home (HandOff names it, `to`; HostShard names
 * the transfer to start with, `transferId`), not through the coordinator; a coordinator asks for it so only when
 * the old host and the new home both agreed 10 with it, and relays it as before otherwise.
 * 11: a hand-off state chunk carries the old host's progress of the senders whose sends the shard processed
 * (`progress`), so the new home forgets the processed sends the old host forgot; a node sends it so only to a
 * peer whose agreed version is 11, and a peer of version 10 or older gets the chunk without it.
 * 12: BeginHandOff tells the shard's owner the coming HandOff's id and the shard's likely next home (`handOffId`,
 * `to`), and the owner sends the states it holds for entities never woken there ahead of its stop, as the first
 * parts of that transfer; a coordinator names them so only to an owner whose agreed version is 12 (an older one
 * would ignore them).
 */
export const PROTOCOL_VERSION = 12;

/** What every message on the wire has: a string discriminator. */
export interface WireMessage {
  readonly type: string;
}

/** A decoded but not yet trusted message: an object with a string `type`. */
export type RawMessage = { readonly type: string } & Readonly<Record<string, unknown>>;

/** A closed set of messages one layer speaks, with the gate its untrusted input passes. */
export interface MessageFamily<M extends WireMessage> {
  /** 'cluster' | 'sharding' | 'placement-sync' ... */
  readonly name: string;
  /** Every `type` of the family. */
  readonly types: ReadonlySet<string>;
  /** Validates; undefined means drop. Only called with a `type` in `types`. */
  parse(raw: RawMessage): M | undefined;
}

/** Narrows a delivered message to a family's type (a transport delivers only what the family parsed). */
export function isFamilyMessage<M extends WireMessage>(family: MessageFamily<M>, message: WireMessage): message is M {
  return family.types.has(message.type);
}

/** Treats an untrusted decoded value as a raw message when it is an object with a string `type`. */
export function asRawMessage(value: unknown): RawMessage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const raw = value as RawMessage;
  return typeof raw.type === 'string' ? raw : undefined;
}

/** The families one transport (or one parse gate) accepts, indexed by message type. */
export class FamilyRegistry {
  private readonly byType = new Map<string, MessageFamily<WireMessage>>();
  private readonly byName = new Map<string, MessageFamily<WireMessage>>();

  /** Idempotent for the same family; throws `invalid_argument` when a name or a type is already taken by another. */
  register<M extends WireMessage>(family: MessageFamily<M>): void {
    const known = this.byName.get(family.name);
    if (known === family) return;
    if (known !== undefined)
      throw new ActorTsError(
        'invalid_argument',
        `a different message family named "${family.name}" is already registered`,
      );
    for (const type of family.types) {
      const owner = this.byType.get(type);
      if (owner !== undefined) {
        throw new ActorTsError(
          'invalid_argument',
          `message type "${type}" of family "${family.name}" is already registered by "${owner.name}"`,
        );
      }
    }
    this.byName.set(family.name, family);
    for (const type of family.types) this.byType.set(type, family);
  }

  /** The family claiming `type`, if any. */
  familyOf(type: string): MessageFamily<WireMessage> | undefined {
    return this.byType.get(type);
  }

  /** Validates an untrusted decoded value; undefined unless a registered family parses it. */
  parse(value: unknown): WireMessage | undefined {
    const raw = asRawMessage(value);
    if (raw === undefined) return undefined;
    const family = this.byType.get(raw.type);
    if (family === undefined) return undefined;
    try {
      const message = family.parse(raw);
      // A family must not turn a message into another family's (the narrowing of listeners relies on it).
      return message !== undefined && message.type === raw.type ? message : undefined;
    } catch {
      return undefined;
    }
  }
}
