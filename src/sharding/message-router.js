import { isRoutedTo } from './protocol/messages.js';
/** Returns false when nothing here handles the message (a type not initialised, or no coordinator here). */
export function routeShardingMessage(from, message, targets) {
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
//# sourceMappingURL=message-router.js.map