// One shard's hand-off, read from its record in the coordinator's state (state.ts HandOffRecord): when it may
// enter its HandOff phase, which report ends it, and what it sends in each phase. Also the source of
// hand-off ids.
import { randomInt } from 'node:crypto';
import type { ShardingMessage } from '../protocol/messages.js';
import type { HandOffRecord } from './shard-life.js';

export interface Outgoing {
  readonly to: string;
  readonly message: ShardingMessage;
}

/** True once every region stopped routing to the shard and the HandOff may be sent. */
export function readyToHandOff(handOff: HandOffRecord): boolean {
  return handOff.phase === 'begin' && handOff.pendingAcks.size === 0;
}

/**
 * Only the owner's answer to this hand-off's HandOff ends it. Anything else (a copy stopping elsewhere, a
 * late or duplicated report of an earlier stop, one answering a former coordinator) is no news, and acting
 * on it could allocate a shard that still runs.
 */
export function isEndedBy(handOff: HandOffRecord, from: string, handOffId: number): boolean {
  return handOff.phase === 'handoff' && from === handOff.owner && handOffId === handOff.id;
}

/** What to (re-)send for the hand-off's current phase. */
export function handOffMessages(shardId: number, handOff: HandOffRecord, typeName: string): Outgoing[] {
  if (handOff.phase === 'begin')
    return [...handOff.pendingAcks].map((to) => ({ to, message: { type: 'BeginHandOff', typeName, shardId } }));
  return [{ to: handOff.owner, message: { type: 'HandOff', typeName, shardId, handOffId: handOff.id } }];
}

/**
 * Hand-off ids. A random start, so the ids of earlier coordinators (whose HandOffs a region may still answer
 * late) do not collide with this one's; wraps before leaving the safe integers.
 */
export class HandOffIds {
  private nextId: number;

  constructor(start: number = randomInt(1, 2 ** 47)) {
    if (!Number.isSafeInteger(start) || start < 1)
      throw new RangeError(`hand-off ids start at a positive safe integer, got ${start}`);
    this.nextId = start;
  }

  take(): number {
    const id = this.nextId;
    this.nextId = id >= Number.MAX_SAFE_INTEGER ? 1 : id + 1;
    return id;
  }
}
