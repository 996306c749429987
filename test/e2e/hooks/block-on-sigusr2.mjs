// Preloaded (`node --import`) into node processes by test/e2e/false-downing.test.ts: SIGUSR2 blocks the event
// loop with CPU work for 3 s, as a long synchronous computation in an application would.
process.on('SIGUSR2', () => {
  const end = Date.now() + 3_000;
  while (Date.now() < end) {
    // busy: nothing else runs on this thread meanwhile
  }
});
