// Which members this node confirmed dead stay out of its reachability row for a moment (issue 40). When a process
// dies, every survivor sees its connection close and confirms the death (death-confirmation.ts), but only the
// decision's leader acts on a row, and the leader confirms the death itself. Every survivor sending its row to
// every member at once was N x N merges on busy event loops ahead of the leader's downing (25 processes on 2 cores:
// the downing reached the others 0.3-0.95 s after it was decided, bench/README.md S12). So a member this node
// confirmed dead joins its row only once the leader has had CONFIRMED_ROW_DELAY_MS to down it, and at once when this
// node is that leader; a member downed meanwhile needs no row. A row still travels only from its author (the
// gossip guard asks an author for a row that reaches it otherwise, gossip-guard.ts). Anything the leader would not
// act on at once (a member only silent, a cut, one that waits for stable-after) is not held.
import { liveEdgesOf, type GossipState } from './gossip.js';
import { decideSplitBrain, type SplitBrainInput } from './split-brain-decision.js';

/** How long a member this node confirmed dead stays out of its row while another node is the leader. */
export const CONFIRMED_ROW_DELAY_MS = 500;

export interface RowCandidates {
  readonly selfKey: string;
  /** The live members this node observes as unreachable and has not put in its row yet, and since when. */
  readonly unreachableSince: ReadonlyMap<string, number>;
  /** Whether this node's own probes confirm the member's process gone. */
  readonly confirmed: (key: string) => boolean;
  /** The decision's input with every one of them in this node's row (asked only when one could be held). */
  readonly table: () => SplitBrainInput;
  readonly now: number;
}

export interface HeldOutOfRow {
  readonly held: ReadonlySet<string>;
  /** When the first of them joins the row (undefined when none is held). */
  readonly dueAt: number | undefined;
}

const NONE: HeldOutOfRow = { held: new Set(), dueAt: undefined };

/** The members to leave out of this node's row now, and when to look again. */
export function heldOutOfRow(row: RowCandidates): HeldOutOfRow {
  const fresh = [...row.unreachableSince].filter(
    ([key, since]) => row.confirmed(key) && row.now - since < CONFIRMED_ROW_DELAY_MS,
  );
  if (fresh.length === 0) return NONE;
  const decision = decideSplitBrain(row.table());
  if (decision.kind !== 'down-unreachable' || decision.indirectlyConnected.length > 0) return NONE;
  if (decision.leader === undefined || decision.leader === row.selfKey) return NONE;
  // A decision that also downs a member this node has not confirmed waits out stable-after: the rows count then.
  if (!decision.down.every(row.confirmed)) return NONE;
  const dueAt = Math.min(...fresh.map(([, since]) => since + CONFIRMED_ROW_DELAY_MS));
  return { held: new Set(fresh.map(([key]) => key)), dueAt };
}

/** The decision's input from a gossip state: its members, and its table's edges between live members. */
export function decisionInput(state: GossipState): SplitBrainInput {
  const members = [...state.members.entries()].map(([key, r]) => ({ key, address: r.address, status: r.status }));
  return { members, edges: liveEdgesOf(state) };
}
