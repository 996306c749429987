export { isFamilyMessage } from './wire-message.js';
//# sourceMappingURL=transport.js.map