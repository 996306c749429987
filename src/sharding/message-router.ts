// Delivers one arriving sharding message to its handler on this node, by the route SHARDING_ROUTES gives its
// type: the type's region, the type's coordinator, the pending asks, or the coordinator client.
import type { CoordinatorAnswer } from './coordinator-client.js';
import { isRoutedTo, type MessageRoutedTo, type ShardingMessage } from './protocol/messages.js';

/** The handlers of one node; `region` and `coordinator` are undefined where the type has none here. */
export interface RouteTargets {
  region(typeName: string): { handle(from: string, message: MessageRoutedTo<'region'>): void } | undefined;
  coordinator(typeName: string): { handle(from: string, message: MessageRoutedTo<'coordinator'>): void } | undefined;
  entityReply(message: MessageRoutedTo<'asker'>): void;
  coordinatorAnswer(message: CoordinatorAnswer): void;
}

/** Returns false when nothing here handles the message (a type not initialised, or no coordinator here). */
export function routeShardingMessage(from: string, message: ShardingMessage, targets: RouteTargets): boolean {
  if (isRoutedTo(message, 'asker')) {
    targets.entityReply(message);
    return true;
  }
  if (isRoutedTo(message, 'requester')) {
    targets.coordinatorAnswer(message);
    return true;
  }
  if (isRoutedTo(message, 'region')) {
    const region = targets.region(message.typeName);
    region?.handle(from, message);
    return region !== undefined;
  }
  if (isRoutedTo(message, 'coordinator')) {
    const coordinator = targets.coordinator(message.typeName);
    coordinator?.handle(from, message);
    return coordinator !== undefined;
  }
  return false;
}
