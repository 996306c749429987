// Browser side of the console: the four read-only panels (nodes, shard maps, pins, store health), rebuilt from
// the latest state on every refresh. Row buttons call back into the actions; this module never fetches.
/// <reference lib="dom" />
import { badge, button, el, replace, table, type Child } from './dom.js';
import { shardMap } from './shard-map.js';
import { nodeColours } from './grid.js';
import type { AuditEntryJson } from './api.js';
import { isWaiting, type SeenMove } from './insight.js';
import {
  coordinatorOf,
  declaredShards,
  typeOnNode,
  hosts,
  pinState,
  shardCounts,
  type HealthAnswer,
  type MemberJson,
  type MembersAnswer,
  type PinRecord,
  type TypeView,
} from './model.js';

export interface ConsoleState {
  readonly health?: HealthAnswer;
  readonly members?: MembersAnswer;
  readonly views: readonly TypeView[];
  /** The node's last audit entries, newest first (absent when it has no audit route). */
  readonly audit?: readonly AuditEntryJson[];
  /** Hand-offs this page saw between refreshes, newest first. */
  readonly moves?: readonly SeenMove[];
}

export interface RowActions {
  /** Absent when the node has no cordon/drain routes. */
  readonly member?: (address: string, action: 'cordon' | 'uncordon' | 'drain') => void;
  readonly unpin: (typeName: string, shardId: number) => void;
  readonly moveNow: (typeName: string, shardId: number) => void;
  readonly pickShard: (typeName: string, shardId: number) => void;
}

export function renderAll(state: ConsoleState, actions: RowActions): void {
  const colours = nodeColours([
    ...(state.members?.members ?? []).map((member) => member.address),
    ...state.views.flatMap((view) => (view.locations?.regions ?? []).map((region) => region.address)),
  ]);
  renderNodes(state, colours, actions);
  renderMaps(state, colours, actions);
  renderPins(state.views, actions, state.members?.members ?? []);
  renderStore(state.health);
  renderActivity(state);
}

/** The last audit entries (who did what and why) and the hand-offs seen, side by side in one panel. */
function renderActivity(state: ConsoleState): void {
  const audit = (state.audit ?? []).slice(0, 8);
  const moves = (state.moves ?? []).slice(0, 8);
  const auditPart =
    state.audit === undefined
      ? el('p', { class: 'muted' }, 'This node has no audit route.')
      : audit.length === 0
        ? el('p', { class: 'muted' }, 'No audited writes yet.')
        : table(
            ['when', 'action', 'what', 'by', 'reason'],
            audit.map((entry) => [
              el('span', { class: 'nowrap' }, shortTime(new Date(entry.at).getTime())),
              entry.action,
              [entry.typeName, entry.shardIds.join(', '), entry.target]
                .filter((part) => part !== undefined && part !== null && part !== '')
                .join(' '),
              entry.by ?? '—',
              entry.reason ?? '—',
            ]),
            { id: 'audit-table' },
          );
  const movesPart =
    moves.length === 0
      ? el('p', { class: 'muted' }, 'No hand-off seen since this page opened.')
      : table(
          ['seen', 'type', 'shard', 'from', 'to'],
          moves.map((move) => [shortTime(move.at), move.typeName, String(move.shardId), move.from, move.to]),
          { id: 'moves-table' },
        );
  replace('activity', el('h3', {}, 'Audit'), auditPart, el('h3', {}, 'Recent hand-offs'), movesPart);
}

function renderNodes(state: ConsoleState, colours: ReadonlyMap<string, number>, actions: RowActions): void {
  const members = state.members?.members ?? [];
  const self = state.members?.self ?? state.health?.self;
  const coordinator = coordinatorOf(members);
  const counts = shardCounts(state.views);
  const withAttributes = members.some((member) => member.attributes !== undefined);
  const withCordon = members.some((member) => member.cordoned !== undefined);
  const headers = ['address', 'status', 'reachable', withAttributes ? 'attributes / roles' : 'roles'];
  if (withCordon) headers.push('cordoned');
  headers.push('shards');
  if (withCordon && actions.member) headers.push('');
  const rows = [...members]
    .sort((a, b) => a.address.localeCompare(b.address))
    .map((member) => {
      const cells: Child[] = [
        el(
          'span',
          { class: 'member' },
          el('span', {
            class: `cell host-${colours.get(member.address) ?? 0}`,
            title: "this node's colour on the shard maps",
          }),
          el('span', { class: 'address' }, member.address),
          ' ',
          member.address === coordinator
            ? badge('coordinator', 'coordinator', 'oldest Up member: where the shard coordinators run')
            : null,
          member.address === self ? badge('this node', 'self') : null,
        ),
        el('span', { class: `status-${member.status}` }, member.status),
        member.reachable === false
          ? el('span', { class: 'unreachable' }, 'unreachable')
          : member.reachable === true
            ? 'yes'
            : '—',
        attributesCell(member),
      ];
      if (withCordon)
        cells.push(member.cordoned === true ? badge('cordoned', 'warn') : member.cordoned === false ? 'no' : '—');
      cells.push(String(counts.get(member.address) ?? 0));
      if (withCordon && actions.member) cells.push(memberButtons(member, actions.member));
      return cells;
    });
  replace(
    'nodes',
    members.length === 0
      ? el('p', { class: 'muted' }, 'No members known yet.')
      : table(headers, rows, { id: 'nodes-table' }),
  );
}

function attributesCell(member: MemberJson): Child {
  const parts: Child[] = [];
  for (const [key, value] of Object.entries(member.attributes ?? {})) parts.push(badge(`${key}=${String(value)}`));
  for (const role of member.roles ?? []) parts.push(badge(role));
  return parts.length === 0 ? '—' : el('span', {}, ...parts);
}

function memberButtons(member: MemberJson, act: NonNullable<RowActions['member']>): Child {
  return el(
    'span',
    { class: 'buttons' },
    member.cordoned === true
      ? button('Uncordon', () => act(member.address, 'uncordon'))
      : button('Cordon', () => act(member.address, 'cordon')),
    button('Drain', () => act(member.address, 'drain'), { class: 'danger' }),
  );
}

function renderMaps(state: ConsoleState, colours: ReadonlyMap<string, number>, actions: RowActions): void {
  replace(
    'maps',
    ...state.views.map((view) =>
      shardMap(view, {
        colours,
        declaredShards: declaredShards(state.health, view.typeName),
        here: typeOnNode(state.health, view.typeName),
        pickShard: actions.pickShard,
        members: state.members?.members ?? [],
      }),
    ),
  );
}

function renderPins(views: readonly TypeView[], actions: RowActions, members: readonly MemberJson[]): void {
  const all = views.flatMap((view) => (view.placements ?? []).map((pin) => ({ view, pin })));
  if (all.length === 0) {
    replace('pins', el('p', { class: 'muted' }, 'No pins.'));
    return;
  }
  const has = (field: keyof PinRecord) => all.some(({ pin }) => pin[field] !== undefined);
  const optional = (['mode', 'expiresAt', 'reason', 'by'] as const).filter(has);
  // The column says where the shard is now, which is what honouring the pin looks like.
  const headers = ['type', 'shard', 'target', ...optional.map(columnOf), 'writer', 'time', 'where now', ''];
  const rows = all.map(({ view, pin }) => {
    const cells: Child[] = [view.typeName, String(pin.shardId), pin.target];
    for (const field of optional) cells.push(formatField(field, pin[field]));
    cells.push(pin.writer ?? '—', pin.hlc ? el('span', { class: 'nowrap' }, shortTime(pin.hlc.wallMs)) : '—');
    cells.push(honouredCell(pin, hosts(view.locations), members));
    cells.push(
      el(
        'span',
        { class: 'buttons' },
        button('Unpin', () => actions.unpin(view.typeName, pin.shardId), {
          class: 'danger',
          'data-unpin': `${view.typeName}/${pin.shardId}`,
        }),
        button('Move now', () => actions.moveNow(view.typeName, pin.shardId)),
      ),
    );
    return cells;
  });
  replace('pins', table(headers, rows, { id: 'pins-table' }));
}

/** The time alone for today, with the date otherwise: the pins table stays one line per pin. */
function shortTime(ms: number): string {
  const date = new Date(ms);
  return date.toDateString() === new Date().toDateString() ? date.toLocaleTimeString() : date.toLocaleString();
}

/** A pin field's column heading. */
function columnOf(field: 'mode' | 'expiresAt' | 'reason' | 'by'): string {
  return field === 'expiresAt' ? 'expires' : field;
}

function formatField(field: string, value: unknown): string {
  if (field === 'expiresAt') return typeof value === 'string' ? shortTime(Date.parse(value)) : 'never';
  if (value === undefined || value === null || value === '') return '—';
  return String(value);
}

function honouredCell(pin: PinRecord, hostOf: ReadonlyMap<number, string>, members: readonly MemberJson[]): Child {
  if (isWaiting(pin, hostOf, members))
    return badge(
      'waiting: no home',
      'bad',
      'a require pin no current member satisfies: the shard has no home and asks to it fail',
    );
  const state = pinState(pin, hostOf, members);
  if (state === 'on-target') return el('span', { class: 'muted' }, 'on target');
  if (state === 'elsewhere')
    return badge(`on ${hostOf.get(pin.shardId) ?? '?'}`, 'warn', 'hosted elsewhere than the pin says');
  return el('span', { class: 'muted' }, 'not allocated');
}

function renderStore(health: HealthAnswer | undefined): void {
  const store = health?.placementStore;
  if (store === undefined) {
    replace('store', el('p', { class: 'muted' }, 'No placement store figures.'));
    return;
  }
  const labels: Record<string, string> = {
    generation: 'generation',
    slots: 'live slots',
    baseSlots: 'compacted slots',
    documentItems: 'history items',
  };
  const items: Child[] = [];
  for (const [key, value] of Object.entries(store)) {
    items.push(
      el('dt', {}, labels[key] ?? key),
      el('dd', {}, typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)),
    );
  }
  const replication = health?.replication;
  if (replication !== undefined) {
    const synced =
      typeof replication.syncedPeers === 'number' && typeof replication.peers === 'number'
        ? `${replication.syncedPeers} of ${replication.peers} peers in sync`
        : '—';
    const problems = Array.isArray(replication.problems)
      ? replication.problems.filter((problem): problem is string => typeof problem === 'string')
      : [];
    items.push(
      el('dt', {}, 'replication'),
      el('dd', {}, synced, ...problems.map((problem) => el('div', { class: 'problem' }, problem))),
    );
  }
  if (health?.status !== undefined)
    items.unshift(el('dt', {}, 'node health'), el('dd', { class: `health-${health.status}` }, health.status));
  replace('store', el('dl', { class: 'kv' }, ...items));
}
