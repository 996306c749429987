// Real partitions between CLI node processes, each in its own Linux network namespace on a private bridge;
// links are cut with nft drop rules. Cases: a clean 2|3 split of five nodes, a non-transitive cut of three
// (n1-n3) and of five (n2-n4) nodes (the leader downs the higher address of the cut link, once, from the
// gossiped reachability table), and a flapping link (2 s / 2 s, and 7 s cut / 3 s up) with the default
// downing settings. Each case polls every entity through every node and checks that no
// two processes answer for one entity at the same time, that the side that must go downs itself, that after
// the heal the cluster settles on one member list, and that every placement acknowledged by a node that stays
// a member is on every surviving node. Figures are printed as [netns figures].
// Needs root, `ip` and `nft` (CI runs as root; .ci/run installs nftables); without them every case fails
// saying why.
import { describe, it } from 'vitest';
import { cleanSplit } from './clean-split.js';
import { flapping } from './flapping.js';
import { nonTransitive } from './non-transitive.js';
import { usePartitionLab } from './partition-lab.js';

const partitionLab = usePartitionLab();

describe('partitions between network namespaces', () => {
  it('clean 2|3 split of five nodes (the coordinator n1 in the minority): the minority downs itself and stops before the majority starts its shards; no entity answered twice; heal settles; acknowledged placements everywhere', async () => {
    await cleanSplit(partitionLab);
  }, 180_000);

  it('non-transitive cut n1-n3 of three nodes: exactly one node is downed, the higher address of the cut link (n3), by the leader n2 alone; no entity answered twice', async () => {
    await nonTransitive(partitionLab, 3, 1, 3, 2);
  }, 150_000);

  it('non-transitive cut n2-n4 of five nodes: exactly n4 is downed, by the leader n1 alone; no entity answered twice', async () => {
    await nonTransitive(partitionLab, 5, 2, 4, 1);
  }, 180_000);

  it('a link flapping every 2 s for 30 s downs nobody (default settings)', async () => {
    await flapping(partitionLab, 'flapping n1-n3 2 s / 2 s', 2000, 2000, 30_000);
  }, 150_000);

  it('a link cut 7 s and up 3 s, for 30 s, downs nobody (default settings: the link must work again once restored)', async () => {
    await flapping(partitionLab, 'flapping n1-n3 7 s cut / 3 s up', 7000, 3000, 30_000);
  }, 150_000);
});
