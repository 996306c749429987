// What the coordinator's rooms have in common: the values each is built with (RoomBasics) and the port
// members several rooms call (SendPort, RequestPort). Each room declares its own port in its own file,
// extending these, and says in each member's comment who answers the call; rooms.ts wires them all.
import type { Logger } from '../../logging.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { HandOffCause } from './shard-life.js';
import type { CoordinatorState } from './state.js';

/** The values most rooms read: the entity type, the coordinator's one state, its logger. */
export interface RoomBasics {
  readonly typeName: string;
  readonly state: CoordinatorState;
  readonly logger: Logger;
}

export interface SendPort {
  /**
   * Sends one message to a node: the coordinator's one send (rooms.ts), which puts a moved shard's entity
   * state in transit (hand-off-state.ts) ahead of each HostShard, on the same connection.
   */
  send(to: string, message: ShardingMessage): void;
}

/** What the rooms answering operator requests call (operator-requests.ts, drain.ts). */
export interface RequestPort extends SendPort {
  /** Runs the action once the coordinator is warm, at once if it is (WarmUpGate.whenWarm): answers need the full map. */
  whenWarm(action: () => void): void;
  /** Starts a hand-off of a shard that has a home (HandOffs.begin); nothing for one without a home or moving. */
  handOff(shardId: number, cause: HandOffCause): void;
}
