// Explain and dry runs asked from any node: each request goes to the type's coordinator (wherever it runs
// at each retry, as the other operator requests do) and its answer comes back as plain values.
import { ActorTsError } from '../../errors.js';
import type { ClusterSharding } from '../cluster-sharding.js';
import type { DryRunMoves, ProposedPin, ShardExplanation } from '../protocol/insight-messages.js';

export type {
  DryRunMove,
  DryRunMoves,
  DryRunWarning,
  ExplainDecision,
  ExplainNode,
  ProposedPin,
  ShardExplanation,
} from '../protocol/insight-messages.js';

/** Why the shard is where it is, in the coordinator's words; `invalid_shard` when it is out of range. */
export async function askExplain(
  sharding: ClusterSharding,
  typeName: string,
  shardId: number,
): Promise<ShardExplanation> {
  const { explanation } = await sharding.request(typeName, { type: 'ExplainShard', typeName, shardId });
  if (explanation === null)
    throw new ActorTsError('invalid_shard', `shard id ${shardId} is out of range for ${typeName}`);
  return explanation;
}

/** The hand-offs the coordinator would start if these pins were written now; nothing is written. */
export async function askDryRunPlacements(
  sharding: ClusterSharding,
  typeName: string,
  pins: ReadonlyArray<ProposedPin>,
): Promise<DryRunMoves> {
  const { moves, warnings } = await sharding.request(typeName, { type: 'DryRunPlacements', typeName, pins: [...pins] });
  return { moves, warnings };
}

/** The hand-offs a manual rebalance of these shards would start, and where each would land; none starts. */
export async function askDryRunRebalance(
  sharding: ClusterSharding,
  typeName: string,
  shardIds: ReadonlyArray<number>,
): Promise<DryRunMoves> {
  const { moves, warnings } = await sharding.request(typeName, {
    type: 'DryRunRebalance',
    typeName,
    shardIds: [...new Set(shardIds)],
  });
  return { moves, warnings };
}
