// Cordon, uncordon and drain as a node carries them out for the management API: the address checked (it
// must be a member), the cordon written to this node's replica once it may take writes and made durable,
// and a drain's hand-offs asked of every type's coordinator, after checking that some other member can
// take the shards (otherwise nothing is written and nothing moves).
import { PlacementStoreError, whenDurable, type Hlc } from '../../crdt/index.js';
import { NodeAddress } from '../cluster/address.js';
import type { MemberInfo } from '../cluster/member.js';
import type { CordonWritten, DrainOutcome } from '../management/backend.js';
import type { ClusterSharding } from '../sharding/cluster-sharding.js';
import { hasRole } from '../sharding/coordinator/membership.js';
import { CordonError, cordonAddress, type CordonProvenance } from '../sharding/placements/cordons.js';
import type { DrainMove } from '../sharding/protocol/messages.js';

export class CordonOperations {
  constructor(
    private readonly members: () => ReadonlyArray<MemberInfo>,
    private readonly sharding: ClusterSharding,
    /** Why this node's clock is too far off its peers' to stamp a cordon (Cluster.clock), or undefined. */
    private readonly clockSkew?: () => string | undefined,
  ) {}

  async cordon(input: string, provenance: CordonProvenance): Promise<CordonWritten> {
    const address = this.memberAddress(input);
    this.refuseOnClockSkew();
    await this.sharding.placementsReady();
    const written = this.sharding.cordons.write(address, provenance);
    await whenDurable(this.sharding.placementStore);
    return { address, cordoned: true, by: written.by ?? null, reason: written.reason ?? null, hlc: written.hlc };
  }

  async uncordon(input: string): Promise<Hlc> {
    // Not checked for membership: a node that left while cordoned must still be uncordonable.
    const address = cordonAddress(input);
    this.refuseOnClockSkew();
    await this.sharding.placementsReady();
    const hlc = this.sharding.cordons.remove(address);
    if (hlc === undefined) throw new CordonError('not_cordoned', `${address} is not cordoned`);
    await whenDurable(this.sharding.placementStore);
    return hlc;
  }

  async drain(input: string, provenance: CordonProvenance): Promise<DrainOutcome> {
    const address = this.memberAddress(input);
    // Before the capacity check and the hand-offs: a drain starts with a cordon this node may not stamp.
    this.refuseOnClockSkew();
    const types = [...this.sharding.entityTypes()];
    // Before anything is written: where the node hosts shards of a type, another member must be able to take them.
    const hosted = await Promise.all(
      types.map(async ([typeName]) => {
        const { regions } = await this.sharding.getShardLocations(typeName);
        return regions.find((region) => region.address === address)?.shards.length ?? 0;
      }),
    );
    types.forEach(([typeName, { role }], i) => {
      const count = hosted[i] ?? 0;
      if (count > 0 && !this.otherCandidate(address, role)) {
        throw new CordonError(
          'no_capacity',
          `${address} hosts ${count} shards of ${typeName} and no other up, uncordoned member${role === undefined ? '' : ` with role ${role}`} could take them; nothing was cordoned or moved`,
        );
      }
    });
    const wasCordoned = this.sharding.cordons.isCordoned(address);
    const cordon = await this.cordon(address, provenance);
    const region = NodeAddress.parse(address);
    const answers = await Promise.all(types.map(([typeName]) => this.sharding.drain(typeName, region)));
    const moves: Record<string, readonly DrainMove[]> = {};
    const warnings: string[] = [];
    types.forEach(([typeName], i) => {
      const answer = answers[i];
      if (answer === undefined) return;
      moves[typeName] = answer.moves;
      if (answer.noCapacity)
        warnings.push(`no region but ${address} may take the shards of ${typeName} now: they stay until one can`);
    });
    const moved = Object.values(moves).some((list) => list.length > 0);
    if (warnings.length > 0 && !moved) {
      // The coordinators saw no capacity the member list promised (a region not registered yet): undo the cordon.
      if (!wasCordoned) await this.uncordon(address);
      throw new CordonError(
        'no_capacity',
        `${warnings.join('; ')}; nothing was moved${wasCordoned ? '' : ' and the cordon was removed again'}`,
      );
    }
    return { address, cordon, moves, warnings };
  }

  /** The canonical address of a member (neither removed nor unknown); CordonError `unknown_member` otherwise. */
  private memberAddress(input: string): string {
    const address = cordonAddress(input);
    const member = this.members().find((m) => m.address.toString() === address);
    if (member === undefined || member.status === 'removed') {
      throw new CordonError(
        'unknown_member',
        `${address} is not a member of this cluster (see GET /actor-ts/cluster/members)`,
      );
    }
    return address;
  }

  private otherCandidate(address: string, role: string | undefined): boolean {
    return this.members().some((member) => {
      const key = member.address.toString();
      return (
        key !== address && member.status === 'up' && hasRole(member, role) && !this.sharding.cordons.isCordoned(key)
      );
    });
  }

  /** A cordon is stamped like a pin: refused (clock_skew) by a node whose clock its peers would hold back. */
  private refuseOnClockSkew(): void {
    const reason = this.clockSkew?.();
    if (reason !== undefined) throw new PlacementStoreError('clock_skew', reason);
  }
}
