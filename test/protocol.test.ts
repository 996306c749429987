// The protocol's top-level list of families: parseMessage over all of them, and the layering it no longer breaks.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MESSAGE_FAMILIES, parseMessage } from '../src/protocol.js';

describe('parseMessage, the gate every incoming message passes', () => {
  it('accepts well-formed placement replication messages', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    expect(parseMessage({ type: 'PlacementUpdate', update: bytes })).toEqual({
      type: 'PlacementUpdate',
      update: bytes,
    });
    expect(parseMessage({ type: 'PlacementSyncStep1', stateVector: bytes })).toEqual({
      type: 'PlacementSyncStep1',
      stateVector: bytes,
    });
  });

  it.each([
    null,
    undefined,
    42,
    'PlacementUpdate',
    [],
    {},
    { type: 7 },
    { type: 'NoSuchMessage' },
    { type: 'PlacementUpdate' },
    { type: 'PlacementUpdate', update: 'not bytes' },
    { type: 'PlacementSyncStep1', update: new Uint8Array(1) },
  ])('rejects %j', (value) => {
    expect(parseMessage(value)).toBeUndefined();
  });
});

describe('layering: no layer knows the one above it', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');
  const importsOf = (dir: string): Array<[string, string]> =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        [...readFileSync(join(root, dir, f), 'utf8').matchAll(/from '([^']+)'/g)].map(
          (m) => [`${dir}/${f}`, m[1] ?? ''] as [string, string],
        ),
      );

  it('src/cluster imports neither src/protocol.ts nor sharding, management, node or cli', () => {
    const bad = importsOf('cluster').filter(([, spec]) =>
      /^\.\.\/(protocol|sharding|management|node|cli)(\.js|\/)/.test(spec),
    );
    expect(bad).toEqual([]);
  });

  it('src/sharding does not import src/protocol.ts', () => {
    expect(importsOf('sharding').filter(([, spec]) => spec === '../protocol.js')).toEqual([]);
  });

  it('every family claims its own types, and parseMessage is the union of the registered families', () => {
    const seen = new Set<string>();
    for (const family of MESSAGE_FAMILIES) {
      for (const type of family.types) {
        expect(seen.has(type)).toBe(false);
        seen.add(type);
      }
    }
    expect(seen.has('Heartbeat') && seen.has('EntityEnvelope') && seen.has('PlacementUpdate')).toBe(true);
    expect(parseMessage({ type: 'Heartbeat', sequence: 1, incarnation: 'i' })).toEqual({
      type: 'Heartbeat',
      sequence: 1,
      incarnation: 'i',
    });
  });
});
