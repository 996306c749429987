// The store-backed cordons: one LWW entry per address in a namespace no entity type can take, hidden from
// every listing of types; bad input refused with nothing written; concurrent cordons and uncordons on
// several replicas converge to one state whatever the delivery order (property).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlacementStore } from '../../crdt/index.js';
import { ActorTsError } from '../../src/errors.js';
import {
  CORDON_NAMESPACE,
  CordonError,
  StoreCordons,
  cordonSlot,
  entityTypeNames,
  isInternalNamespace,
} from '../../src/sharding/placements/cordons.js';
import { TYPE_NAME_PATTERN } from '../../src/sharding/protocol/messages.js';
import { prng, UpdatePool } from '../crdt/helpers.js';

const A = 'app@127.0.0.1:7001';
const B = 'app@127.0.0.1:7002';

function replica(node: string, now?: () => number): { store: PlacementStore; cordons: StoreCordons } {
  const store = new PlacementStore({ node, ...(now === undefined ? {} : { now }) });
  return { store, cordons: new StoreCordons(store) };
}

describe('StoreCordons', () => {
  it('cordons and uncordons an address with by and reason, in a namespace no entity type may use', () => {
    const { store, cordons } = replica('n1');
    const written = cordons.write(`actor-ts://${A}`, { by: 'ops', reason: 'disk' });
    expect(written).toMatchObject({ address: A, by: 'ops', reason: 'disk' });
    expect(cordons.isCordoned(A)).toBe(true);
    expect(cordons.isCordoned(B)).toBe(false);
    expect(cordons.list()).toEqual([{ address: A, by: 'ops', reason: 'disk', hlc: written.hlc }]);
    expect(TYPE_NAME_PATTERN.test(CORDON_NAMESPACE)).toBe(false);
    expect(isInternalNamespace(CORDON_NAMESPACE)).toBe(true);
    store.set('Counter', 1, A);
    expect(store.typeNames()).toContain(CORDON_NAMESPACE);
    expect(entityTypeNames(store)).toEqual(['Counter']);
    expect(cordons.remove(A)).toBeDefined();
    expect(cordons.isCordoned(A)).toBe(false);
    expect(cordons.remove(A)).toBeUndefined();
  });

  it('refuses bad input and writes nothing', () => {
    const { store, cordons } = replica('n1');
    const bad: Array<[() => unknown, string]> = [
      [() => cordons.write('no-address'), 'invalid_address'],
      [() => cordons.write(A, { by: 'x'.repeat(129) }), 'invalid_placement'],
      [() => cordons.write(A, { reason: 7 as unknown as string }), 'invalid_placement'],
      [() => cordons.remove('app@host'), 'invalid_address'],
    ];
    for (const [call, code] of bad) {
      expect(call).toThrow(ActorTsError);
      try {
        call();
      } catch (error) {
        expect((error as ActorTsError).code).toBe(code);
      }
    }
    expect(store.snapshot(CORDON_NAMESPACE).placements.size).toBe(0);
  });

  it('ignores a slot whose target is not the address it digests to, and refuses to overwrite it', () => {
    const { store, cordons } = replica('n1');
    // A foreign write: B stored in A's slot (what a digest collision would look like).
    store.set(CORDON_NAMESPACE, cordonSlot(A), B);
    expect(cordons.isCordoned(A)).toBe(false);
    expect(cordons.isCordoned(B)).toBe(false);
    expect(() => cordons.write(A)).toThrow(CordonError);
    expect(store.snapshot(CORDON_NAMESPACE).placements.get(cordonSlot(A))?.target).toBe(B);
  });

  it('converges: random cordons and uncordons on three replicas, any delivery order, end equal everywhere', () => {
    const addresses = [A, B, 'app@127.0.0.1:7003'];
    const op = fc.record({
      replica: fc.integer({ min: 0, max: 2 }),
      address: fc.integer({ min: 0, max: 2 }),
      cordon: fc.boolean(),
      deliver: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 30 }), fc.integer(), (ops, seed) => {
        const random = prng(seed);
        let wall = 1_000;
        const replicas = ['n1', 'n2', 'n3'].map((node) => replica(node, () => wall));
        const pool = new UpdatePool(replicas.map((r) => r.store));
        for (const { replica: i, address, cordon, deliver } of ops) {
          const { cordons } = replicas[i]!;
          const target = addresses[address]!;
          if (cordon) cordons.write(target, { by: `by-${i}` });
          else cordons.remove(target);
          wall += Math.floor(random() * 3);
          pool.deliverSome(random, deliver);
        }
        pool.deliverAll(random);
        const lists = replicas.map((r) => JSON.stringify(r.cordons.list()));
        expect(new Set(lists).size).toBe(1);
        for (const r of replicas) expect(entityTypeNames(r.store)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});
