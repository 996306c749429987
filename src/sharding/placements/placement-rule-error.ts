// The typed error of placement rules (targets and their options). Its codes are stable: the management API
// answers them as 400 `{ error: code, message }`, the CLI prints the message.
import { ActorTsError } from '../../errors.js';

/**
 * `invalid_target`: the target; `invalid_placement`: mode, ttlMs, expiresAt, reason or by; `unknown_target`:
 * no current member matches the target (answered 409; `allowUnknownTarget` writes it anyway).
 */
export type PlacementRuleErrorCode = 'invalid_target' | 'invalid_placement' | 'unknown_target';

/**
 * Thrown for a pin that cannot be written as given (bad target, mode, expiry, reason); `code` says which rule,
 * nothing is written.
 */
export class PlacementRuleError extends ActorTsError {
  declare readonly code: PlacementRuleErrorCode;
  constructor(code: PlacementRuleErrorCode, message: string) {
    super(code, message);
    this.name = 'PlacementRuleError';
  }
}
