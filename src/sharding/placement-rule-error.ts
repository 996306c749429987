// The typed error of placement rules (targets and their options). Its codes are stable: the management API
// answers them as 400 `{ error: code, message }`, the CLI prints the message.

/** `invalid_target`: the target; `invalid_placement`: mode, ttlMs, expiresAt, reason or by. */
export type PlacementRuleErrorCode = 'invalid_target' | 'invalid_placement';

export class PlacementRuleError extends Error {
  readonly code: PlacementRuleErrorCode;
  constructor(code: PlacementRuleErrorCode, message: string) {
    super(message);
    this.name = 'PlacementRuleError';
    this.code = code;
  }
}
