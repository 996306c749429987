// Issue 23, multi-process, with `--down-after-ms 3000`: three CLI nodes on loopback; 20 entities hosted on one
// node receive reliable sends (EntityRef.send through the HTTP edge) at 50/s through a surviving node while
// their host is SIGKILLed, a plain member and then the oldest node (the coordinator's). Every send is
// answered `processed` and was applied at least once; only sends unconfirmed at the kill are applied twice.
import { describe, it } from 'vitest';
import { runCrashCase } from './crash-scenario.js';
import { useProcessSet } from './harness.js';

const procs = useProcessSet();

describe('reliable send across a crash of the host, --down-after-ms 3000 (issue 23)', () => {
  it('SIGKILL of a plain member hosting 20 entities under 50 sends/s: none lost', async () => {
    await runCrashCase(procs, { victim: 'host', downAfterMs: 3000 });
  }, 120_000);

  it("SIGKILL of the coordinator's node (the oldest) hosting 20 entities under 50 sends/s: none lost", async () => {
    await runCrashCase(procs, { victim: 'coordinator', downAfterMs: 3000 });
  }, 120_000);

  it('a host of 20 entities that goes silent (SIGSTOP, then SIGKILL once downed) under 50 sends/s: none lost', async () => {
    await runCrashCase(procs, { victim: 'host', downAfterMs: 3000, frozenFirst: true });
  }, 120_000);
});
