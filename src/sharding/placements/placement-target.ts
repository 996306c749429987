// Placement targets: where a pin wants its shard. A target is a node address (`system@host:port`, with or
// without `actor-ts://`) or a selector `KEY=VALUE[,KEY=VALUE...]` over node attributes, all of whose terms
// must hold (`role=NAME` holds on a node with that role). Targets are parsed once at the edges (HTTP API,
// CLI, controller) and travel as their canonical string from there on: an address as `system@host:port`,
// a selector with its terms sorted by key then value and exact duplicates dropped, so `zone=b,rack=1` and
// `rack=1,zone=b,rack=1` are one target, `rack=1,zone=b`.
import { NodeAddress } from '../../cluster/address.js';
import { PlacementRuleError } from './placement-rule-error.js';
import { MAX_PLACEMENT_TARGET_LENGTH } from './text-limits.js';

export { PlacementRuleError, type PlacementRuleErrorCode } from './placement-rule-error.js';

/** One `KEY=VALUE` term of a selector. */
export interface SelectorTerm {
  readonly key: string;
  readonly value: string;
}

/**
 * Where a pin sends its shard: one node by address, or any node whose attributes and roles match a selector.
 * `canonical` is the form stored and listed.
 */
export type PlacementTarget =
  | { readonly kind: 'address'; readonly address: NodeAddress; readonly canonical: string }
  | { readonly kind: 'selector'; readonly terms: ReadonlyArray<SelectorTerm>; readonly canonical: string };

/**
 * What a target is matched against: a member as the cluster view describes it. `MemberInfo` fits (its
 * `attributes` are optional until every node gossips them; a node without them matches no attribute term).
 */
export interface PlacementNode {
  readonly address: NodeAddress;
  readonly roles?: ReadonlyArray<string> | ReadonlySet<string>;
  readonly attributes?: Readonly<Record<string, string>>;
}

/** The selector key that names a role rather than an attribute. */
export const ROLE_KEY = 'role';
export { MAX_PLACEMENT_TARGET_LENGTH };
const TOKEN = /^[A-Za-z0-9_.-]{1,64}$/;
const SELECTOR_HINT = 'expected an address (system@host:port) or a selector KEY=VALUE[,KEY=VALUE...]';

/**
 * Parses a target (see the file header). Throws `PlacementRuleError` `invalid_target` for anything that is
 * neither, with a message naming the problem, and `ActorTsError` `invalid_address` for a string with `@`
 * that is not an address.
 */
export function parsePlacementTarget(input: unknown): PlacementTarget {
  if (input instanceof NodeAddress) return addressTarget(input);
  if (typeof input !== 'string') throw invalidTarget(`target must be a string, got ${typeof input}`);
  if (input.length > MAX_PLACEMENT_TARGET_LENGTH) {
    throw invalidTarget(`target is longer than ${MAX_PLACEMENT_TARGET_LENGTH} characters`);
  }
  if (input.includes('@')) return addressTarget(NodeAddress.parse(input));
  if (input.includes('=')) return parseSelector(input);
  if (input.length === 0) throw invalidTarget(`target is empty: ${SELECTOR_HINT}`);
  throw invalidTarget(`target ${JSON.stringify(input)} is neither an address nor a selector: ${SELECTOR_HINT}`);
}

/** Like parsePlacementTarget, but undefined for what it would reject (a stored target from a foreign writer). */
export function tryParsePlacementTarget(input: string): PlacementTarget | undefined {
  try {
    return parsePlacementTarget(input);
  } catch {
    return undefined;
  }
}

/** The canonical string of a target given in any accepted form; throws as parsePlacementTarget. */
export function canonicalPlacementTarget(input: unknown): string {
  return parsePlacementTarget(input).canonical;
}

/** The canonical string: what the store holds and the API lists. */
export function printPlacementTarget(target: PlacementTarget): string {
  return target.canonical;
}

/** Whether `node` is a home the target allows: the address itself, or a node on which every term holds. */
export function targetMatches(target: PlacementTarget, node: PlacementNode): boolean {
  if (target.kind === 'address') return node.address.toString() === target.canonical;
  for (const { key, value } of target.terms) {
    if (key === ROLE_KEY) {
      if (!hasRole(node.roles, value)) return false;
    } else if (
      node.attributes === undefined ||
      !Object.hasOwn(node.attributes, key) ||
      node.attributes[key] !== value
    ) {
      return false;
    }
  }
  return true;
}

function hasRole(roles: ReadonlyArray<string> | ReadonlySet<string> | undefined, role: string): boolean {
  if (roles === undefined) return false;
  return Array.isArray(roles) ? roles.includes(role) : (roles as ReadonlySet<string>).has(role);
}

function addressTarget(address: NodeAddress): PlacementTarget {
  return Object.freeze({ kind: 'address', address, canonical: address.toString() });
}

function parseSelector(input: string): PlacementTarget {
  const byKey = new Map<string, Set<string>>();
  for (const term of input.split(',')) {
    if (term.length === 0) throw invalidTarget(`selector ${JSON.stringify(input)} has an empty term: ${SELECTOR_HINT}`);
    const eq = term.indexOf('=');
    if (eq < 0) throw invalidTarget(`selector term ${JSON.stringify(term)} is not KEY=VALUE`);
    const key = term.slice(0, eq);
    const value = term.slice(eq + 1);
    if (key.length === 0) throw invalidTarget(`selector term ${JSON.stringify(term)} has an empty key`);
    if (value.length === 0) throw invalidTarget(`selector term ${JSON.stringify(term)} has an empty value`);
    if (!TOKEN.test(key)) throw invalidTarget(`selector key ${JSON.stringify(key)} must match [A-Za-z0-9_.-]{1,64}`);
    if (!TOKEN.test(value))
      throw invalidTarget(`selector value ${JSON.stringify(value)} of ${key} must match [A-Za-z0-9_.-]{1,64}`);
    let values = byKey.get(key);
    if (values === undefined) byKey.set(key, (values = new Set()));
    values.add(value);
    // A node has several roles but one value per attribute: two values of one attribute can never both hold.
    if (key !== ROLE_KEY && values.size > 1) {
      throw invalidTarget(`selector ${JSON.stringify(input)} can never match: ${key} is given two different values`);
    }
  }
  const terms: SelectorTerm[] = [];
  for (const key of [...byKey.keys()].sort()) {
    for (const value of [...(byKey.get(key) as Set<string>)].sort()) terms.push(Object.freeze({ key, value }));
  }
  const canonical = terms.map(({ key, value }) => `${key}=${value}`).join(',');
  return Object.freeze({ kind: 'selector', terms: Object.freeze(terms), canonical });
}

function invalidTarget(message: string): PlacementRuleError {
  return new PlacementRuleError('invalid_target', message);
}
