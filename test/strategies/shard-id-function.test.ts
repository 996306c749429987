// The shardIdFunction option of an entity type: checked at init (a typed error, nothing registered), and the
// function entityRefFor routes by, so a type declared with 'actor-ts' puts every id in actor-ts's shard; the
// CLI's `node --shard-id-function` and `shard-of`, and startNode refusing a bad value before it serves.
import { describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { shardIdFor, type ShardIdFunction } from '../../src/sharding/core/shard-id.js';
import { main } from '../../src/cli/main.js';
import type { NodeConfigInput } from '../../src/node/config.js';
import { startNode } from '../../src/node/node.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import { TestCluster, counter, useTestClusters } from '../sharding/harness.js';

async function cli(
  ...args: string[]
): Promise<{ code: number; out: string[]; err: string[]; input: NodeConfigInput | undefined }> {
  const out: string[] = [];
  const err: string[] = [];
  let input: NodeConfigInput | undefined;
  const runNode = (given: NodeConfigInput): Promise<number> => {
    input = given;
    return Promise.resolve(0);
  };
  const code = await main(
    ['node', 'actor-ts-placement', ...args],
    { out: (l) => out.push(...l.split('\n')), err: (l) => err.push(...l.split('\n')) },
    { runNode },
  );
  return { code, out, err, input };
}

describe('ShardedTypeOptions.shardIdFunction', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  it("routes by actor-ts's shard ids when asked, by the default otherwise", () => {
    const [a] = cluster.addNodes(7001);
    a!.sharding.init({ typeName: 'Compat', behavior: counter(), numberOfShards: 1000, shardIdFunction: 'actor-ts' });
    a!.sharding.init({ typeName: 'Plain', behavior: counter(), numberOfShards: 1000 });
    // 817 is the shard actor-ts itself computes for "alice" out of 1000 (see shard-id.test.ts).
    expect(a!.sharding.entityRefFor('Compat', 'alice').shardId).toBe(817);
    expect(a!.sharding.entityRefFor('Plain', 'alice').shardId).toBe(shardIdFor('alice', 1000, 'fnv1a-utf8'));
    expect(a!.sharding.entityRefFor('Plain', 'alice').shardId).not.toBe(817);
  });

  it.each(['actor_ts', 'FNV1A', '', 7])(
    'rejects shardIdFunction %j at init with invalid_argument, registering nothing',
    (bad) => {
      const [a] = cluster.addNodes(7001);
      const init = () =>
        a!.sharding.init({ typeName: 'Bad', behavior: counter(), shardIdFunction: bad as unknown as ShardIdFunction });
      expect(init).toThrow(ActorTsError);
      expect(init).toThrow(
        expect.objectContaining({
          code: 'invalid_argument',
          message: expect.stringMatching(/shardIdFunction must be one of 'fnv1a-utf8', 'actor-ts'/),
        }),
      );
      expect(a!.sharding.entityTypes().has('Bad')).toBe(false);
    },
  );
});

describe('the CLI and startNode', () => {
  it('`shard-of` answers which shard an id is in, under either function', async () => {
    const actorTs = await cli('shard-of', 'alice', 'bob', '--shards', '1000', '--shard-id-function', 'actor-ts');
    expect(actorTs.code).toBe(0);
    expect(actorTs.out.join('\n')).toMatch(/alice\s+817\n.*bob\s+52/);
    const plain = await cli('shard-of', 'alice', '--shards', '100');
    expect(plain.out.join('\n')).toMatch(new RegExp(`alice\\s+${shardIdFor('alice', 100)}$`, 'm'));
  });

  it("`shard-of --type` asks the node for the type's shard count and function; offline it needs --shards", async () => {
    const behavior: EntityBehavior = () => ({ receive: () => 'ok' });
    const node = await startNode({
      port: 0,
      http: { port: 0 },
      logLevel: 'silent',
      entityTypes: [{ typeName: 'Cart', behavior, numberOfShards: 100, shardIdFunction: 'actor-ts' }],
    });
    try {
      const url = node.httpUrl;
      const asked = await cli('shard-of', 'ann', 'bob', '--type', 'Cart', '--url', url);
      expect(asked.code, asked.err.join('\n')).toBe(0);
      const shards = [shardIdFor('ann', 100, 'actor-ts'), shardIdFor('bob', 100, 'actor-ts')];
      expect(asked.out.join('\n')).toMatch(new RegExp(`ann\\s+${shards[0]}\\n.*bob\\s+${shards[1]}`));
      // The default 1000 shards of the demo type would have named another shard for at least one of them.
      expect(shards).not.toEqual([shardIdFor('ann', 1000, 'actor-ts'), shardIdFor('bob', 1000, 'actor-ts')]);
      const unknown = await cli('shard-of', 'ann', '--type', 'Basket', '--url', url);
      expect([unknown.code, unknown.err.join('\n')]).toEqual([1, expect.stringMatching(/unknown_type.*it runs: Cart/)]);
      const both = await cli('shard-of', 'ann', '--type', 'Cart', '--shards', '100', '--url', url);
      expect([both.code, both.err.join('\n')]).toEqual([2, expect.stringMatching(/offline use/)]);
    } finally {
      await node.stop();
    }
    const offline = await cli('shard-of', 'ann');
    expect([offline.code, offline.err.join('\n')]).toEqual([2, expect.stringMatching(/--type .* or --shards/)]);
    const nobody = await cli('shard-of', 'ann', '--type', 'Cart', '--url', 'http://127.0.0.1:9');
    expect([nobody.code, nobody.err.join('\n')]).toEqual([
      1,
      expect.stringMatching(/unreachable.*--shards <n>.*npm start/),
    ]);
  });

  it('passes `node --shard-id-function` into the node config, and refuses an unknown one as a usage error', async () => {
    expect((await cli('node', '--shard-id-function', 'actor-ts')).input?.shardIdFunction).toBe('actor-ts');
    expect((await cli('node')).input?.shardIdFunction).toBeUndefined();
    for (const args of [
      ['node', '--shard-id-function', 'fnv'],
      ['shard-of', 'alice', '--shards', '10', '--shard-id-function', 'ActorTs'],
    ]) {
      const bad = await cli(...args);
      expect(bad.code).toBe(2);
      expect(bad.input).toBeUndefined();
      expect(bad.err.join('\n')).toMatch(/Allowed choices are fnv1a-utf8, actor-ts/);
    }
  });

  it('startNode refuses an unknown shardIdFunction with a typed error, before it serves', async () => {
    const start = startNode({
      port: 0,
      http: { port: 0 },
      logLevel: 'silent',
      shardIdFunction: 'murmur' as unknown as ShardIdFunction,
    });
    await expect(start).rejects.toThrow(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringMatching(/shardIdFunction/) }),
    );
  });
});
