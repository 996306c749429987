// A short, safe rendering of a rejected value for error messages, shared by the sharding runtime (crdt/ has
// its own, which is not part of its public surface).
import { NodeAddress } from '../../cluster/address.js';

const MAX_SHOWN = 80;

/** Strings quoted and cut, addresses as `system@host:port`, numbers as such, objects by their kind only. */
export function describe(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}...` : value);
  if (value instanceof NodeAddress) return value.toString();
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
