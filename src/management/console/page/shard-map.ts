// Browser side of the console: draws one type's shard map from its grid layout. A cell's colour is its host,
// a ring marks a pin (red when the shard sits elsewhere), stripes a hand-off; clicking a cell fills the form.
/// <reference lib="dom" />
import { el, type Child } from './dom.js';
import { gridLayout, type GridCell } from './grid.js';
import type { MemberJson, TypeView } from './model.js';

export interface ShardMapOptions {
  readonly colours: ReadonlyMap<string, number>;
  readonly declaredShards: number | undefined;
  readonly pickShard: (typeName: string, shardId: number) => void;
  /** Members, to tell a shard waiting without a home (a require pin nobody satisfies) from an unallocated one. */
  readonly members?: readonly MemberJson[];
  /** The type on the node serving the console: its active entities there, and whether it is durable. */
  readonly here?: { readonly activeEntities?: number; readonly durable?: boolean } | undefined;
}

export function shardMap(view: TypeView, options: ShardMapOptions): HTMLElement {
  const title = el('h3', {}, view.typeName);
  if (view.locations === undefined)
    return el('div', { class: 'type-map' }, title, el('p', { class: 'muted' }, view.problem ?? 'loading…'));
  const layout = gridLayout(view, options.declaredShards, options.members);
  const summary = [
    layout.declared ? `${layout.extent} shards` : `shards 0–${Math.max(layout.extent - 1, 0)} shown`,
    `${layout.allocated} allocated`,
    `${layout.pinned} pinned`,
    ...(options.here?.activeEntities === undefined ? [] : [`${options.here.activeEntities} entities active here`]),
    ...(options.here?.durable === true ? ['durable'] : []),
  ].join(' · ');
  title.append(' ', el('span', { class: 'muted summary' }, summary));
  if (layout.extent === 0) {
    return el(
      'div',
      { class: 'type-map', 'data-type': view.typeName },
      title,
      el('p', { class: 'muted' }, 'No shard allocated or pinned yet.'),
    );
  }

  const grid = el('div', { class: 'grid', role: 'grid', 'aria-label': `shards of ${view.typeName}` });
  for (const row of layout.rows) {
    grid.append(
      el('span', { class: 'row-label' }, String(row[0]?.shardId ?? 0)),
      ...row.map((cell) => cellNode(view.typeName, cell, options.colours)),
    );
  }
  // One listener for the whole grid: a thousand cells are rebuilt on every refresh.
  grid.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest<HTMLElement>('[data-shard]') : null;
    if (target) options.pickShard(view.typeName, Number(target.dataset['shard']));
  });
  const parts: Child[] = [title, el('div', { class: 'map-body' }, grid, nodeLegend(view, options.colours))];
  if (layout.beyond > 0)
    parts.push(
      el(
        'p',
        { class: 'muted' },
        `${layout.beyond} allocated or pinned shards past id ${layout.extent - 1} are not drawn.`,
      ),
    );
  return el('div', { class: 'type-map', 'data-type': view.typeName }, ...parts);
}

function cellNode(typeName: string, cell: GridCell, colours: ReadonlyMap<string, number>): HTMLElement {
  const classes = ['cell', cell.host === undefined ? 'free' : `host-${colours.get(cell.host) ?? 0}`];
  if (cell.pin) classes.push('pinned');
  if (cell.misplaced) classes.push('misplaced');
  if (cell.handingOff) classes.push('handoff');
  if (cell.waiting) classes.push('waiting');
  const title = [
    `shard ${cell.shardId}`,
    cell.waiting
      ? 'waiting without a home: no member satisfies its require pin'
      : cell.host === undefined
        ? 'not allocated'
        : `on ${cell.host}`,
    cell.pin ? `pinned to ${cell.pin.target}` : '',
    cell.handingOff ? 'handing off' : '',
  ]
    .filter((part) => part !== '')
    .join(' · ');
  return el('span', {
    class: classes.join(' '),
    title,
    role: 'gridcell',
    'data-shard': cell.shardId,
    'data-type': typeName,
    'data-host': cell.host,
    'data-pinned': cell.pin !== undefined,
    'data-handoff': cell.handingOff,
    'data-waiting': cell.waiting,
  });
}

function nodeLegend(view: TypeView, colours: ReadonlyMap<string, number>): HTMLElement {
  const counts = new Map(
    (view.locations?.regions ?? []).map((region) => [region.address, region.shards.length] as const),
  );
  const items = [...colours].map(([address, colour]) =>
    el(
      'li',
      {},
      el('span', { class: `cell host-${colour}` }),
      el('span', { class: 'address' }, address),
      el('span', { class: 'count' }, String(counts.get(address) ?? 0)),
    ),
  );
  items.push(
    el(
      'li',
      {},
      el('span', { class: 'cell free' }),
      el('span', { class: 'address muted' }, 'not allocated'),
      el('span', { class: 'count' }, ''),
    ),
  );
  return el('ul', { class: 'map-legend' }, ...items);
}
