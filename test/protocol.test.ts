import { describe, expect, it } from 'vitest';
import { parseMessage } from '../src/protocol.js';

describe('parseMessage, the gate every incoming message passes', () => {
  it('accepts well-formed placement replication messages', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    expect(parseMessage({ type: 'PlacementUpdate', update: bytes })).toEqual({ type: 'PlacementUpdate', update: bytes });
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
