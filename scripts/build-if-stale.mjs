// `npm start` (and the other run scripts) build only when something the build reads changed since the last build:
// a full build took about 20 s on every start. The last complete `npm run build` leaves dist/.built; a source,
// config or lock file newer than it, or no stamp at all, means build again. Plain JavaScript: it runs before the
// build exists.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const STAMP = join('dist', '.built');
const INPUTS = ['crdt', 'src', 'bench', 'scripts', 'examples'];
const FILES = ['package.json', 'package-lock.json', 'tsconfig.base.json', 'tsconfig.build.json', 'tsconfig.json'];

/** The newest modification time under `path` (a file or a folder), in ms. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

const built = existsSync(STAMP) ? statSync(STAMP).mtimeMs : -1;
const changed = Math.max(...INPUTS.map(newest), ...FILES.map(newest));
if (built >= changed) process.exit(0);
const result = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
