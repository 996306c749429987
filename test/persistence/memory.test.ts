// The in-memory persistence against the shared contract (a MemoryVolume plays the data directory).
import { describe, expect, it } from 'vitest';
import { createMemoryVolume, memoryPersistence } from '../../crdt/persistence/memory-persistence.js';
import { expectCode, persistenceContract } from './contract.js';

persistenceContract('memory', async () => {
  const volume = createMemoryVolume();
  return { open: async (options) => memoryPersistence({ ...options, volume }) };
});

describe('memory persistence', () => {
  it('without a volume, nothing survives the instance (what the store does today)', async () => {
    const p = memoryPersistence();
    await p.append(new Uint8Array([1]));
    await p.close();
    expect(await memoryPersistence().load()).toEqual({ snapshot: undefined, log: [] });
    expect(p.stats()).toMatchObject({ path: null, bytesOnDisk: 0 });
  });

  it('refuses a volume it did not make', async () => {
    await expectCode(
      Promise.resolve().then(() => memoryPersistence({ volume: { name: 'forged' } })),
      'invalid_option',
    );
  });
});
