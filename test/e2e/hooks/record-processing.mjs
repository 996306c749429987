// Preloaded (`node --import <this file's URL>?dir=<dir>`) into node processes by the reliable-send tests of
// issue 23: with the loader beside it, each reliable increment carries the test's tag (header x-e2e-tag) to the
// entity, and each increment the demo Counter processes is written at once to <dir>/<pid>.log as
// `entityId<TAB>tag<TAB>value<TAB>epochMs`. The write is synchronous, so a line survives a SIGKILL right after.
import { openSync, writeSync } from 'node:fs';
import { register } from 'node:module';

const dir = new URL(import.meta.url).searchParams.get('dir');
if (dir === null) throw new Error('record-processing.mjs needs ?dir=<directory> in its import URL');
const fd = openSync(`${dir}/${process.pid}.log`, 'a');
globalThis.__e2eProcessed = (entityId, tag, value) => {
  writeSync(fd, `${entityId}\t${tag ?? ''}\t${value}\t${Date.now()}\n`);
};
register('./record-processing-loader.mjs', import.meta.url);
