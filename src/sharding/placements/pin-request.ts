// A pin request parsed once, where it comes in (the management API's routes; the controller's public methods for
// programmatic callers): the shard id checked against its type's range, the target parsed, the options turned into
// the rule with its expiry fixed. From there on it travels as a ParsedPin (a ShardId alone for unpin, rebalance and
// explain), and the layers below take it as it is: no second range check, no second parse of target or mode.
import type { NodeAddress } from '../../cluster/address.js';
import { ActorTsError } from '../../errors.js';
import { parseShardId, type ShardId, type ShardRange } from './shard-range.js';
import { validatePlacementOptions, type PlacementOptions, type PlacementRule } from './placement-options.js';
import { parsePlacementTarget, type PlacementTarget } from './placement-target.js';

/** What a pin is parsed against: its type's shard range and the clock its expiry counts from (epoch ms). */
export interface PinScope extends ShardRange {
  readonly now: number;
}

/** A placement to write: the target (address, with or without `actor-ts://`, or selector) and its options. */
export interface PinRequest extends PlacementOptions {
  readonly shardId: number;
  readonly target: NodeAddress | string;
}

/** A pin request parsed: the shard in range, the target parsed (its `canonical` is what is stored), the rule. */
export interface ParsedPin {
  readonly shardId: ShardId;
  readonly target: PlacementTarget;
  readonly rule: PlacementRule;
}

/**
 * Parses every entry before any is used, each as shard id, options, target: throws at the first problem
 * (`invalid_argument`, `invalid_shard`, `invalid_address`, PlacementRuleError `invalid_placement` / `invalid_target`).
 */
export function parsePins(entries: ReadonlyArray<unknown>, scope: PinScope): ParsedPin[] {
  return entries.map((entry) => {
    if (typeof entry !== 'object' || entry === null)
      throw new ActorTsError('invalid_argument', 'each entry must be { shardId, target, ...options }');
    const { shardId, target, ...options } = entry as { readonly shardId?: unknown; readonly target?: unknown };
    const shard = parseShardId(shardId, scope);
    const rule = validatePlacementOptions(options, scope.now);
    return { shardId: shard, target: parsePlacementTarget(target), rule };
  });
}
