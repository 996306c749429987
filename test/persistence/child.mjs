// A separate node process for the multi-process persistence tests (processes.test.ts), running the
// compiled lmdb persistence from dist/. Modes:
//   hold <dir>       open, print "open", stay until killed
//   try-open <dir>   open and close; print one JSON line: {"ok":true} or the error's code and message
//   writer <dir>     append numbered records in concurrent bursts with a snapshot now and then; print
//                    "ready <recovered>" once open and "ack <n>" for every acknowledged record, until killed
//   fill <dir>       append 4 kB records until a commit fails (run under a file size limit), then print
//                    what the failed append and the one after it were rejected with, and "closed" once
//                    close() resolved
import { openLmdbPersistence } from '../../dist/crdt/persistence/lmdb-persistence.js';

const [mode, dir] = process.argv.slice(2);
const out = (line) => process.stdout.write(`${line}\n`);

/** Record n: 8 bytes of n, then filler derived from n, so the parent can check contents. */
export function record(n, length) {
  const bytes = new Uint8Array(8 + length);
  new DataView(bytes.buffer).setFloat64(0, n);
  for (let i = 8; i < bytes.length; i++) bytes[i] = (n + i) & 255;
  return bytes;
}

if (mode === 'hold') {
  await openLmdbPersistence(dir);
  out('open');
  setInterval(() => {}, 1 << 30);
} else if (mode === 'try-open') {
  try {
    const p = await openLmdbPersistence(dir);
    await p.close();
    out(JSON.stringify({ ok: true }));
  } catch (error) {
    out(JSON.stringify({ ok: false, name: error.name, code: error.code, message: error.message }));
  }
} else if (mode === 'writer') {
  const p = await openLmdbPersistence(dir);
  const { snapshot, log } = await p.load();
  let next = snapshot === undefined ? 0 : new DataView(snapshot.buffer, snapshot.byteOffset).getFloat64(0);
  next += log.length;
  out(`ready ${next}`);
  for (;;) {
    const burst = 1 + Math.floor(Math.random() * 20);
    const writes = [];
    for (let i = 0; i < burst; i++) {
      const n = next++;
      writes.push(p.append(record(n, Math.floor(Math.random() * 3000))).then(() => out(`ack ${n}`)));
      // The snapshot covers every record issued before it: it records how many that is.
      if (Math.random() < 0.03) writes.push(p.writeSnapshot(record(next, Math.floor(Math.random() * 20_000))));
    }
    await Promise.all(writes);
  }
} else if (mode === 'fill') {
  const p = await openLmdbPersistence(dir);
  let n = 0;
  const error = await (async () => {
    for (;;) {
      try {
        await p.append(record(n, 4000));
        out(`ack ${n++}`);
      } catch (failure) {
        return failure;
      }
    }
  })();
  const after = await p.append(record(n, 10)).then(
    () => ({ code: 'resolved' }),
    (e) => e,
  );
  out(
    JSON.stringify({
      failed: { name: error.name, code: error.code, message: error.message },
      after: { code: after.code, message: after.message },
      needsSnapshot: p.stats().needsSnapshot,
    }),
  );
  await p.close();
  out('closed');
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
