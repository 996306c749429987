// Issue 23, multi-process, with the CLI's default downing (`--down-after-ms` 10 s): the crash cases of
// reliable-send.test.ts, where the dark window is three times as long. Every send is answered `processed` and
// was applied at least once; only sends unconfirmed at the kill are applied twice.
import { describe, it } from 'vitest';
import { runCrashCase } from './crash-scenario.js';
import { useProcessSet } from './harness.js';

const procs = useProcessSet();

describe('reliable send across a crash of the host, default downing (issue 23)', () => {
  it('SIGKILL of a plain member hosting 20 entities under 50 sends/s: none lost', async () => {
    await runCrashCase(procs, { victim: 'host' });
  }, 120_000);

  it("SIGKILL of the coordinator's node (the oldest) hosting 20 entities under 50 sends/s: none lost", async () => {
    await runCrashCase(procs, { victim: 'coordinator' });
  }, 120_000);
});
