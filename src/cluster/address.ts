// The address of one cluster node: `system@host:port`, optionally written with the `actor-ts://` scheme.
// Maps keyed by node (for example a strategy's `currentShards`) use `toString()` as the key. Addresses are
// frozen values, so `parse` interns them: every gossip message names every member, and re-running the regexes
// for the same few strings on each one cost more than the rest of its validation.
import { isIP } from 'node:net';
import { ActorTsError } from '../errors.js';

const SCHEME = 'actor-ts://';
const SYSTEM = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
// RFC 1123 labels. A name made only of digits and dots would be read as an IPv4 address by resolvers, so
// it must be a valid IPv4 literal (checked by isIP) rather than pass as a name: "1.2.3.999" is rejected.
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const NUMERIC = /^[0-9.]+$/;
const EXPECTED = 'expected "system@host:port" or "actor-ts://system@host:port", e.g. "app@127.0.0.1:7701"';

/** Most parsed inputs remembered; past it the oldest goes, so a peer naming new addresses cannot grow memory. */
export const ADDRESS_CACHE_LIMIT = 4_096;
// A valid address is short (the system name and a hostname are bounded), except an IPv6 literal with a zone
// (`[fe80::1%eth0]`), whose zone isIP does not bound: longer inputs are parsed every time, never kept.
const MAX_CACHED_INPUT_LENGTH = 512;
/** Valid inputs only, by the exact input string; insertion order is age. */
const parsed = new Map<string, NodeAddress>();

/**
 * One node's address, an immutable value. It also answers actor-ts's `NodeAddress` vocabulary (`systemName`,
 * `equals`, `compareTo`), so code written against actor-ts's address can read ours.
 */
export class NodeAddress {
  private readonly text: string;

  constructor(
    readonly system: string,
    readonly host: string,
    readonly port: number,
  ) {
    if (!SYSTEM.test(system)) throw invalid(`${system}@${host}:${port}`, `bad system name "${system}"`);
    if (!validHost(host)) {
      throw invalid(
        `${system}@${host}:${port}`,
        `bad host "${host}": expected a hostname, an IPv4 address or a bracketed IPv6 address`,
      );
    }
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw invalid(`${system}@${host}:${port}`, `port must be an integer in 1..65535`);
    }
    this.text = `${system}@${host}:${port}`;
    // Interned instances are shared by everyone who parsed the same string: nobody may change one.
    Object.freeze(this);
  }

  /**
   * Parses `system@host:port`, with or without the `actor-ts://` prefix; throws `invalid_address`. The same
   * valid input string usually yields the same (frozen) instance; compare with `equals`, never with `===`.
   */
  static parse(input: string): NodeAddress {
    if (typeof input !== 'string') throw invalid(String(input), 'not a string');
    const known = parsed.get(input);
    if (known !== undefined) return known;
    const address = parseAddressUncached(input);
    if (input.length <= MAX_CACHED_INPUT_LENGTH) {
      if (parsed.size >= ADDRESS_CACHE_LIMIT) {
        const oldest = parsed.keys().next();
        if (oldest.done !== true) parsed.delete(oldest.value);
      }
      parsed.set(input, address);
    }
    return address;
  }

  /** Like `parse`, but returns undefined instead of throwing. */
  static tryParse(input: string): NodeAddress | undefined {
    try {
      return NodeAddress.parse(input);
    } catch {
      return undefined;
    }
  }

  /** actor-ts's name for `system`: the same string. */
  get systemName(): string {
    return this.system;
  }

  /**
   * Same system, host and port: two addresses of one node, whichever instance each is. Compares string
   * forms, so an actor-ts address of the same node is equal too.
   */
  equals(other: NodeAddress): boolean {
    return this.text === other.toString();
  }

  /**
   * Orders by `toString()` in UTF-16 code-unit order: negative, 0 or positive. actor-ts compares with
   * `localeCompare`, which depends on the process locale; code units give every node the same order,
   * the order the built-in strategies already break ties by.
   */
  compareTo(other: NodeAddress): number {
    const that = other.toString();
    return this.text < that ? -1 : this.text > that ? 1 : 0;
  }

  /** `system@host:port`: the key of every map keyed by node. */
  toString(): string {
    return this.text;
  }

  /** The form with the scheme, as operators often paste it. */
  toUri(): string {
    return SCHEME + this.text;
  }

  /** JSON carries the string form (actor-ts's `toJSON` gives an object instead). */
  toJSON(): string {
    return this.text;
  }
}

/** `NodeAddress.parse` without the cache: the reference the cache must agree with (tests compare the two). */
export function parseAddressUncached(input: string): NodeAddress {
  if (typeof input !== 'string') throw invalid(String(input), 'not a string');
  const raw = input.startsWith(SCHEME) ? input.slice(SCHEME.length) : input;
  const at = raw.indexOf('@');
  const colon = raw.lastIndexOf(':');
  if (at <= 0 || colon < at + 2 || colon === raw.length - 1) throw invalid(input, 'missing part');
  const portText = raw.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) throw invalid(input, `bad port "${portText}"`);
  return new NodeAddress(raw.slice(0, at), raw.slice(at + 1, colon), Number(portText));
}

/** How many parsed inputs are remembered now (at most ADDRESS_CACHE_LIMIT); for tests and diagnostics. */
export function addressCacheSize(): number {
  return parsed.size;
}

/** A hostname of RFC 1123 labels, an IPv4 literal, or an IPv6 literal in brackets (as it appears in `host:port`). */
function validHost(host: string): boolean {
  if (host.startsWith('[') && host.endsWith(']')) return isIP(host.slice(1, -1)) === 6;
  if (NUMERIC.test(host)) return isIP(host) === 4;
  return HOSTNAME.test(host);
}

function invalid(input: string, why: string): ActorTsError {
  return new ActorTsError('invalid_address', `invalid node address "${input}": ${why}; ${EXPECTED}`);
}
