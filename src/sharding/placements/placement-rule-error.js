// The typed error of placement rules (targets and their options). Its codes are stable: the management API
// answers them as 400 `{ error: code, message }`, the CLI prints the message.
import { ActorTsError } from '../../errors.js';
/**
 * Thrown for a pin that cannot be written as given (bad target, mode, expiry, reason); `code` says which rule,
 * nothing is written.
 */
export class PlacementRuleError extends ActorTsError {
    constructor(code, message) {
        super(code, message);
        this.name = 'PlacementRuleError';
    }
}
//# sourceMappingURL=placement-rule-error.js.map