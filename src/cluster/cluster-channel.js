import { CLUSTER_MESSAGES } from './messages.js';
import { isFamilyMessage } from './wire-message.js';
export function clusterChannel(transport) {
    transport.register(CLUSTER_MESSAGES);
    return {
        send: (to, message) => transport.send(to, message),
        reconnect: (to) => transport.reconnect?.(to),
        listen: (handler) => transport.onMessage((from, message) => {
            if (isFamilyMessage(CLUSTER_MESSAGES, message))
                handler(from, message);
        }),
    };
}
//# sourceMappingURL=cluster-channel.js.map