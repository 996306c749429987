// The sharding runtime's one use of the transport: sends sharding messages to node keys (`system@host:port`)
// and hands every sharding message that arrives to one receiver. A message to this node skips the transport
// but stays asynchronous, so no handler ever re-enters another.
import { NodeAddress } from '../../cluster/address.js';
import { isFamilyMessage } from '../../cluster/wire-message.js';
import { SHARDING_MESSAGES } from './messages.js';
export class ShardingLink {
    transport;
    logger;
    selfKey;
    /** Parsed addresses by key, so a key is parsed once (and a sender's address is reused as is). */
    addresses = new Map();
    receiver;
    unsubscribe;
    sendFailureCount = 0;
    constructor(transport, logger) {
        this.transport = transport;
        this.logger = logger;
        this.selfKey = transport.self.toString();
        this.addresses.set(this.selfKey, transport.self);
        transport.register(SHARDING_MESSAGES);
    }
    /** Sends the transport refused (a message that cannot be encoded, or an invalid address). */
    get sendFailures() {
        return this.sendFailureCount;
    }
    /** Starts delivering arriving sharding messages (and messages to self) to `receiver`. */
    listen(receiver) {
        this.receiver = receiver;
        this.unsubscribe ??= this.transport.onMessage((from, message) => this.onTransportMessage(from, message));
    }
    /** Stops delivering; later sends are refused. */
    close() {
        this.unsubscribe?.();
        this.unsubscribe = undefined;
        this.receiver = undefined;
    }
    /**
     * Returns false when the message was refused here or by the transport (it cannot be encoded); a loss on
     * the way is not seen here.
     */
    send(to, message) {
        const receiver = this.receiver;
        if (receiver === undefined)
            return false;
        if (to === this.selfKey) {
            queueMicrotask(() => {
                if (this.receiver === receiver)
                    receiver(this.selfKey, message);
            });
            return true;
        }
        const address = this.addressOf(to);
        if (address === undefined) {
            this.sendFailureCount++;
            this.logger.warn({ to, type: message.type }, 'cannot send to an invalid address');
            return false;
        }
        try {
            this.transport.send(address, message);
            return true;
        }
        catch (error) {
            this.sendFailureCount++;
            this.logger.warn({ to, type: message.type, err: error instanceof Error ? error.message : String(error) }, 'send failed');
            return false;
        }
    }
    /** The address of a node key; undefined for a key that is not an address. */
    addressOf(key) {
        let address = this.addresses.get(key);
        if (address === undefined) {
            address = NodeAddress.tryParse(key);
            if (address !== undefined)
                this.addresses.set(key, address);
        }
        return address;
    }
    /** Remembers an address already parsed elsewhere (a member's). */
    remember(address) {
        const key = address.toString();
        if (!this.addresses.has(key))
            this.addresses.set(key, address);
        return key;
    }
    onTransportMessage(from, message) {
        const receiver = this.receiver;
        if (receiver === undefined || !isFamilyMessage(SHARDING_MESSAGES, message))
            return;
        receiver(this.remember(from), message);
    }
}
//# sourceMappingURL=sharding-link.js.map