// The warnings a placement write answers with: a pin whose target no current member satisfies is stored
// (the node may join later) but cannot be honoured now, and the operator should hear so at once; the same
// for a pin whose every matching member is cordoned (it takes no new shards until uncordoned).
import type { MemberInfo } from '../cluster/member.js';
import { isGone } from '../cluster/member.js';
import type { PinRecord } from '../sharding/index.js';
import { targetMatches, tryParsePlacementTarget } from '../sharding/placements/placement-target.js';

export interface PlacementWarning {
  readonly shardId: number;
  readonly target: string;
  readonly message: string;
}

/** One warning per written pin that no member (neither down nor removed) matches now, or only cordoned ones. */
export function placementWarnings(
  written: ReadonlyArray<Pick<PinRecord, 'shardId' | 'target' | 'mode'>>,
  members: ReadonlyArray<MemberInfo>,
  cordoned: ReadonlySet<string> = new Set(),
): PlacementWarning[] {
  const live = members.filter((member) => !isGone(member.status));
  const warnings: PlacementWarning[] = [];
  for (const placement of written) {
    const target = tryParsePlacementTarget(placement.target);
    const matching = target === undefined ? [] : live.filter((member) => targetMatches(target, member));
    if (matching.some((member) => !cordoned.has(member.address.toString()))) continue;
    if (matching.length > 0) {
      const consequence =
        placement.mode === 'require'
          ? `unless shard ${placement.shardId} already runs there, it waits without a home (asks to it fail) until then`
          : `shard ${placement.shardId} stays with the fallback strategy until then`;
      const what =
        target?.kind === 'selector'
          ? `every member matching ${placement.target} is cordoned`
          : `target ${placement.target} is cordoned`;
      warnings.push({
        shardId: placement.shardId,
        target: placement.target,
        message: `${what}: it takes no new shards until uncordoned; ${consequence}`,
      });
      continue;
    }
    const what =
      target?.kind === 'selector'
        ? `no current member matches ${placement.target}`
        : `target ${placement.target} is not a current member`;
    const consequence =
      placement.mode === 'require'
        ? `shard ${placement.shardId} has no home (asks to it fail) until a matching node joins`
        : `shard ${placement.shardId} stays with the fallback strategy until ${target?.kind === 'selector' ? 'a matching node joins' : 'that node joins'}`;
    warnings.push({ shardId: placement.shardId, target: placement.target, message: `${what}; ${consequence}` });
  }
  return warnings;
}
