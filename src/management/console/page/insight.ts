// Browser side of the console: pure derivations from what the server said, never guesses of its own: the
// lines of a pin's dry run (the server's moves and warnings), shards a require pin leaves without a home,
// and the hand-offs seen between two refreshes (the page's record of recent moves).
import type { RebalanceDryRun } from '../../api-shapes.js';
import { hosts, matchesTarget, type MemberJson, type PinRecord, type TypeView } from './model.js';

export { matchesTarget };

export interface Line {
  readonly text: string;
  readonly warning: boolean;
}

/** What the page knows (where the shard is, the pin it replaces), then what the server says would happen. */
export function dryRunLines(
  view: TypeView | undefined,
  shardId: number,
  target: string,
  answer: RebalanceDryRun | undefined,
): Line[] {
  const typeName = view?.typeName ?? '?';
  const host = hosts(view?.locations).get(shardId);
  const current = view?.placements?.find((pin) => pin.shardId === shardId);
  const lines: Line[] = [
    {
      text: `Shard ${shardId} of ${typeName} is ${host === undefined ? 'not allocated' : `on ${host}`}.`,
      warning: false,
    },
  ];
  if (current !== undefined) {
    const same = current.target === target;
    lines.push({
      text: same
        ? `It is already pinned to ${target}: the pin is rewritten.`
        : `It is pinned to ${current.target}: this pin replaces it.`,
      warning: !same,
    });
  }
  const moves = answer?.moves ?? [];
  for (const move of moves) {
    lines.push(
      move.to === null
        ? {
            text: `Shard ${move.shardId} would leave ${move.from} now and have no home: asks to it fail until a matching node joins.`,
            warning: true,
          }
        : { text: `Shard ${move.shardId} moves now from ${move.from} to ${move.to}.`, warning: false },
    );
  }
  const listed = new Set(moves.filter((move) => move.to === null).map((move) => move.shardId));
  for (const shard of answer?.waiting ?? []) {
    if (!listed.has(shard)) lines.push({ text: `Shard ${shard} would be left without a home.`, warning: true });
  }
  if (moves.length === 0) {
    const why =
      host === undefined ? ': the shard is not allocated yet; its first message starts it where the pin says' : '';
    lines.push({ text: `Nothing moves now${why}.`, warning: false });
  }
  for (const warning of answer?.warnings ?? []) lines.push({ text: warning.message, warning: true });
  return lines;
}

/**
 * A `require` pin whose shard is not hosted and that no live, uncordoned member satisfies: the shard waits
 * without a home (its asks fail), which is not the same as a shard nobody has asked for yet.
 */
export function isWaiting(
  pin: PinRecord,
  hostOf: ReadonlyMap<number, string>,
  members: readonly MemberJson[],
): boolean {
  if (pin.mode !== 'require' || hostOf.has(pin.shardId)) return false;
  return !members.some(
    (member) =>
      member.status !== 'down' &&
      member.status !== 'removed' &&
      member.cordoned !== true &&
      matchesTarget(member, pin.target),
  );
}

export interface SeenMove {
  readonly typeName: string;
  readonly shardId: number;
  readonly from: string;
  readonly to: string;
  /** When the page saw it (epoch ms). */
  readonly at: number;
}

/** Shards whose host changed between two reads of the same types. */
export function movesBetween(before: readonly TypeView[], after: readonly TypeView[], at: number): SeenMove[] {
  const moves: SeenMove[] = [];
  for (const view of after) {
    const old = before.find((candidate) => candidate.typeName === view.typeName);
    if (old?.locations === undefined || view.locations === undefined) continue;
    const was = hosts(old.locations);
    for (const [shardId, to] of hosts(view.locations)) {
      const from = was.get(shardId);
      if (from !== undefined && from !== to) moves.push({ typeName: view.typeName, shardId, from, to, at });
    }
  }
  return moves;
}
