// Whatever a user's entity throws, rejects with or answers, nothing escapes into the event loop and the
// entity keeps handling its mailbox.
import { describe, expect, it } from 'vitest';
import { Entity, describeError } from '../../src/sharding/region/entity.js';
import { TestCluster, settle, useTestClusters } from './harness.js';

describe('entity errors', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  it('describes values whose conversion to text throws', () => {
    expect(describeError(Object.create(null))).toBe('[object Object]');
    expect(
      describeError({
        toString: () => {
          throw new Error('no');
        },
      }),
    ).toBe('[object Object]');
    const weird = new Error('x');
    Object.defineProperty(weird, 'message', {
      get: () => {
        throw new Error('no');
      },
    });
    expect(typeof describeError(weird)).toBe('string');
    expect(describeError(new Error('plain'))).toBe('plain');
  });

  it('fails the ask of an entity that throws a null-prototype object, and keeps serving', async () => {
    const a = cluster.addNode(7101);
    a.sharding.init({
      typeName: 'Odd',
      numberOfShards: 4,
      behavior: () => ({
        receive: (message: unknown) => {
          if (message === 'bad') throw Object.create(null);
          return 'ok';
        },
      }),
    });
    const ref = a.sharding.entityRefFor('Odd', 'e1');
    await expect(settle(ref.ask('bad'))).rejects.toMatchObject({ code: 'entity_failed' });
    expect(await settle(ref.ask('good'))).toBe('ok');
  });

  it('keeps draining the mailbox when a reply callback throws', async () => {
    const errors: unknown[] = [];
    const handled: unknown[] = [];
    const entity = new Entity('e', { receive: (m) => void handled.push(m) }, (_id, _phase, error) =>
      errors.push(error),
    );
    entity.enqueue(1, () => {
      throw new Error('reply failed');
    });
    entity.enqueue(2, undefined);
    await entity.whenIdle();
    expect(handled).toEqual([1, 2]);
    expect(errors).toHaveLength(1);
  });
});
