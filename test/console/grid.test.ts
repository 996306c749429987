// The console's shard map layout: every shard id one cell in rows of 50, coloured by its host, pins and hand-offs
// marked; how far the grid reaches with and without a declared shard count; node colours stable by address.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GRID_COLUMNS, MAX_GRID_CELLS, gridLayout, nodeColours } from '../../src/management/console/page/grid.js';
import { declaredShards, type TypeView } from '../../src/management/console/page/model.js';
import { healthAnswer, memberJson, pinRecord } from './answers.js';

const A = 'app@127.0.0.1:7701';
const B = 'app@127.0.0.1:7702';

describe('console shard grid', () => {
  it('draws whole rows up to the highest shard seen, marking hosts, pins, misplaced pins and hand-offs', () => {
    const view: TypeView = {
      typeName: 'Counter',
      locations: {
        regions: [
          { address: A, shards: [3, 479] },
          { address: B, shards: [7] },
        ],
        handingOff: [7],
      },
      placements: [
        pinRecord({ shardId: 479, target: B }),
        pinRecord({ shardId: 3, target: A }),
        pinRecord({ shardId: 520, target: A }),
      ],
    };
    const layout = gridLayout(view, undefined);
    expect(layout.extent).toBe(550);
    expect(layout.declared).toBe(false);
    expect(layout.rows).toHaveLength(11);
    expect(layout.rows.every((row) => row.length === GRID_COLUMNS)).toBe(true);
    const cell = (id: number) => layout.rows.flat().find((candidate) => candidate.shardId === id);
    expect(cell(479)).toMatchObject({ host: A, misplaced: true, handingOff: false, pin: { target: B } });
    expect(cell(3)).toMatchObject({ host: A, misplaced: false });
    expect(cell(7)).toMatchObject({ host: B, handingOff: true });
    expect(cell(7)?.pin).toBeUndefined();
    // Pinned but not allocated: drawn, not misplaced, with no host.
    expect(cell(520)).toMatchObject({ misplaced: false });
    expect(cell(520)?.host).toBeUndefined();
    expect(cell(0)?.host).toBeUndefined();
    expect([layout.allocated, layout.pinned, layout.beyond]).toEqual([3, 3, 0]);
  });

  it('takes a selector pin on a node whose attributes match it as in place, and elsewhere as misplaced', () => {
    const view: TypeView = {
      typeName: 'Counter',
      locations: {
        regions: [
          { address: A, shards: [42] },
          { address: B, shards: [17] },
        ],
        handingOff: [],
      },
      placements: [
        pinRecord({ shardId: 42, target: 'zone=eu-west', mode: 'require' }),
        pinRecord({ shardId: 17, target: 'zone=eu-west' }),
      ],
    };
    const members = [memberJson({ address: A, attributes: { zone: 'eu-west' } }), memberJson({ address: B })];
    const cells = gridLayout(view, undefined, members).rows.flat();
    expect(cells.find((cell) => cell.shardId === 42)).toMatchObject({ host: A, misplaced: false });
    expect(cells.find((cell) => cell.shardId === 17)).toMatchObject({ host: B, misplaced: true });
  });

  it('takes the declared shard count when health gives one, and caps what it draws', () => {
    const view: TypeView = {
      typeName: 'Counter',
      locations: { regions: [{ address: A, shards: [5] }], handingOff: [] },
    };
    const health = healthAnswer({ entityTypes: [{ typeName: 'Counter', numberOfShards: 12 }] });
    const declared = declaredShards(health, 'Counter');
    expect(declared).toBe(12);
    expect(declaredShards(health, 'Cart')).toBeUndefined();
    expect(declaredShards(healthAnswer({}), 'Counter')).toBeUndefined();
    expect(declaredShards(undefined, 'Counter')).toBeUndefined();
    const small = gridLayout(view, declared);
    expect(small.extent).toBe(12);
    expect(small.rows.map((row) => row.length)).toEqual([12]);
    expect(gridLayout({ typeName: 'Counter', locations: { regions: [], handingOff: [] } }, undefined).rows).toEqual([]);

    const huge = gridLayout(
      { typeName: 'Counter', locations: { regions: [{ address: A, shards: [1, 20_000, 30_000] }], handingOff: [] } },
      undefined,
    );
    expect(huge.extent).toBe(MAX_GRID_CELLS);
    expect(huge.beyond).toBe(2);
  });

  it('has one cell per shard id in order, each with the host the regions give it', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.integer({ min: 0, max: 1500 }).map(String), fc.constantFrom(A, B)), (assignment) => {
        const byNode = new Map<string, number[]>();
        for (const [shard, node] of Object.entries(assignment))
          byNode.set(node, [...(byNode.get(node) ?? []), Number(shard)]);
        const layout = gridLayout(
          {
            typeName: 'T',
            locations: { regions: [...byNode].map(([address, shards]) => ({ address, shards })), handingOff: [] },
          },
          undefined,
        );
        const cells = layout.rows.flat();
        expect(cells.map((cell) => cell.shardId)).toEqual([...Array(layout.extent).keys()]);
        expect(layout.extent % GRID_COLUMNS).toBe(0);
        for (const cell of cells) expect(cell.host).toBe(assignment[String(cell.shardId)]);
        expect(layout.allocated).toBe(Object.keys(assignment).length);
      }),
    );
  });

  it('gives nodes colours in address order (ports as numbers), the same whatever order they come in', () => {
    const colours = nodeColours(['app@h:10000', 'app@h:9999', 'app@h:10000', 'app@g:1']);
    expect([...colours]).toEqual([
      ['app@g:1', 0],
      ['app@h:9999', 1],
      ['app@h:10000', 2],
    ]);
    const many = nodeColours(Array.from({ length: 12 }, (_, i) => `app@h:${100 + i}`));
    expect(many.get('app@h:110')).toBe(0);
    expect(nodeColours(['app@h:2', 'app@h:1']).get('app@h:2')).toBe(1);
  });
});
