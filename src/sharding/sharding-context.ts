// What a region and a coordinator need from the node they run on: who it is, its settings and membership,
// and how to reach other nodes' regions and coordinators.
import type { NodeAddress } from '../cluster/address.js';
import type { Membership } from '../cluster/member.js';
import type { ShardingConfig } from './config.js';
import type { CoordinatorEvents } from './coordinator/settings.js';
import type { EntityOutcome } from './region/entity.js';
import type { ReplyTo, ShardingMessage } from './protocol/messages.js';

export interface ShardingContext {
  readonly self: NodeAddress;
  readonly selfKey: string;
  readonly config: ShardingConfig;
  readonly membership: Membership;
  /** Sends over the transport, or dispatches locally (asynchronously) when `to` is this node. Never throws. */
  send(to: string, message: ShardingMessage): void;
  /** What regions report as it happens (metrics); absent when nobody listens. */
  readonly events?: CoordinatorEvents | undefined;
  /** Delivers an entity's answer to the asking node. */
  reply(replyTo: ReplyTo, outcome: EntityOutcome): void;
}
