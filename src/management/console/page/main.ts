// Browser side of the console: entry point. Reads health, members and, per entity type, the shard map and the
// pins every 2 s (and after each action), renders them, and asks for the bearer token when the node answers 401.
/// <reference lib="dom" />
import { Actions } from './actions.js';
import { ApiError, api, setToken, token, type AuditEntryJson } from './api.js';
import { movesBetween } from './insight.js';
import { byId } from './dom.js';
import { typesToShow, type TypeView } from './model.js';
import { renderAll, type ConsoleState } from './render.js';

export const REFRESH_MS = 2_000;
/** Hand-offs the activity panel keeps. */
const KEPT_MOVES = 20;

let state: ConsoleState = { views: [] };
/** What was last drawn: an unchanged poll leaves the DOM alone, so a tooltip or a hovered cell survives it. */
let drawn: string | undefined;

function draw(): void {
  const key = JSON.stringify([state, actions.memberActionsAvailable, location.search]);
  if (key === drawn) return;
  drawn = key;
  renderAll(state, actions.rowActions());
}
let timer: ReturnType<typeof setTimeout> | undefined;
let running: Promise<void> | undefined;

const actions = new Actions({
  views: () => state.views,
  members: () => state.members?.members ?? [],
  refresh: () => refresh(),
  fail: (error) => showError(error, 'action'),
});

/**
 * What the error banner shows came from: a refresh (the next refresh that works clears it) or an action (it stays
 * until dismissed or the next action: a 2 s refresh used to wipe it before it could be read).
 */
let bannerFrom: 'refresh' | 'action' | undefined;

function hideError(): void {
  byId('error').hidden = true;
  bannerFrom = undefined;
}

function showError(error: unknown, from: 'refresh' | 'action'): void {
  const banner = byId('error');
  if (error instanceof ApiError && error.status === 401) {
    byId('auth').hidden = false;
    byId('auth-message').textContent =
      token() === null ? 'This node needs a bearer token.' : 'The node refused this token: give the right one.';
    banner.hidden = true;
    return;
  }
  // A refresh that fails does not replace what an action said.
  if (from === 'refresh' && bannerFrom === 'action') return;
  bannerFrom = from;
  banner.hidden = false;
  byId('error-text').textContent =
    error instanceof ApiError ? `${error.code}: ${error.message}` : `The node did not answer: ${String(error)}`;
}

byId('error-dismiss').addEventListener('click', () => hideError());
// The next action clears what the last one said (capture: before the action's own handler runs and may fail).
document.addEventListener(
  'click',
  (event) => {
    const target = event.target as Element | null;
    if (bannerFrom === 'action' && target?.closest('button') && !target.closest('#error')) hideError();
  },
  true,
);

async function readType(typeName: string): Promise<TypeView> {
  try {
    const [locations, placements] = await Promise.all([api.shards(typeName), api.placements(typeName)]);
    return { typeName, ...(locations ? { locations } : {}), placements: placements?.placements ?? [] };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return { typeName, problem: error.message };
    throw error;
  }
}

/** Set once the node answered 404 for the audit: an older API; it is not asked again. */
let auditMissing = false;

/** The audit trail, or undefined when this node has none. */
async function readAudit(): Promise<readonly AuditEntryJson[] | undefined> {
  if (auditMissing) return undefined;
  try {
    return (await api.audit())?.entries ?? [];
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    auditMissing = true;
    return undefined;
  }
}

async function readAll(): Promise<void> {
  try {
    const [health, members, audit] = await Promise.all([api.health(), api.members(), readAudit()]);
    const types = typesToShow(location.search, health);
    const views = await Promise.all(types.map(readType));
    const moves = [...movesBetween(state.views, views, Date.now()), ...(state.moves ?? [])].slice(0, KEPT_MOVES);
    state = {
      ...(health ? { health } : {}),
      ...(members ? { members } : {}),
      views,
      ...(audit ? { audit } : {}),
      moves,
    };
    byId('auth').hidden = true;
    if (bannerFrom === 'refresh') hideError();
    byId('self').textContent = members?.self ?? health?.self ?? '';
    byId('refreshed').textContent = `updated ${new Date().toLocaleTimeString()}`;
    draw();
    actions.syncForm();
    const input = byId<HTMLInputElement>('types-input');
    if (document.activeElement !== input) input.value = types.join(',');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      // With --auth-reads nothing may stay on screen without the token.
      state = { views: [] };
      draw();
    }
    showError(error, 'refresh');
  }
}

/** One read at a time: an action's refresh joins a poll already under way rather than racing it. */
async function refresh(): Promise<void> {
  if (running) await running;
  running = readAll().finally(() => {
    running = undefined;
  });
  await running;
  schedule();
}

function schedule(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = setTimeout(() => void refresh(), REFRESH_MS);
}

byId<HTMLFormElement>('auth-form').addEventListener('submit', (event) => {
  event.preventDefault();
  setToken(byId<HTMLInputElement>('auth-token').value);
  void refresh();
});

byId<HTMLFormElement>('types-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const params = new URLSearchParams(location.search);
  params.set('type', byId<HTMLInputElement>('types-input').value);
  history.replaceState(null, '', `${location.pathname}?${params.toString()}`);
  void refresh();
});

void refresh();
