// The address of one cluster node: `system@host:port`, optionally written with the `actor-ts://` scheme.
// Maps keyed by node (for example a strategy's `currentShards`) use `toString()` as the key.
import { isIP } from 'node:net';
import { ActorTsError } from '../errors.js';

const SCHEME = 'actor-ts://';
const SYSTEM = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
// RFC 1123 labels. A name made only of digits and dots would be read as an IPv4 address by resolvers, so
// it must be a valid IPv4 literal (checked by isIP) rather than pass as a name: "1.2.3.999" is rejected.
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const NUMERIC = /^[0-9.]+$/;
const EXPECTED = 'expected "system@host:port" or "actor-ts://system@host:port", e.g. "app@127.0.0.1:7701"';

export class NodeAddress {
  private readonly text: string;

  constructor(
    readonly system: string,
    readonly host: string,
    readonly port: number,
  ) {
    if (!SYSTEM.test(system)) throw invalid(`${system}@${host}:${port}`, `bad system name "${system}"`);
    if (!validHost(host)) {
      throw invalid(`${system}@${host}:${port}`, `bad host "${host}": expected a hostname, an IPv4 address or a bracketed IPv6 address`);
    }
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw invalid(`${system}@${host}:${port}`, `port must be an integer in 1..65535`);
    }
    this.text = `${system}@${host}:${port}`;
  }

  /** Parses `system@host:port`, with or without the `actor-ts://` prefix; throws `invalid_address`. */
  static parse(input: string): NodeAddress {
    if (typeof input !== 'string') throw invalid(String(input), 'not a string');
    const raw = input.startsWith(SCHEME) ? input.slice(SCHEME.length) : input;
    const at = raw.indexOf('@');
    const colon = raw.lastIndexOf(':');
    if (at <= 0 || colon < at + 2 || colon === raw.length - 1) throw invalid(input, 'missing part');
    const portText = raw.slice(colon + 1);
    if (!/^\d{1,5}$/.test(portText)) throw invalid(input, `bad port "${portText}"`);
    return new NodeAddress(raw.slice(0, at), raw.slice(at + 1, colon), Number(portText));
  }

  /** Like `parse`, but returns undefined instead of throwing. */
  static tryParse(input: string): NodeAddress | undefined {
    try {
      return NodeAddress.parse(input);
    } catch {
      return undefined;
    }
  }

  equals(other: NodeAddress): boolean {
    return this.text === other.text;
  }

  toString(): string {
    return this.text;
  }

  /** The form with the scheme, as operators often paste it. */
  toUri(): string {
    return SCHEME + this.text;
  }

  toJSON(): string {
    return this.text;
  }
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
