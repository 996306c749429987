// The previous release, built from this repository's own history for the rolling-upgrade test: the commit named
// in baseline.json is extracted with `git archive` into a cache directory under the system's temp directory and
// built there once; later runs (and CI on the same machine) reuse the build. When the baseline's lock file is the
// same as ours (but for the package's own version) its node_modules is a link to ours, since it would install
// identical packages; otherwise it gets its own `npm ci`. Anything missing (git, the commit) fails with what to do.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../e2e/harness.js';

/** `test/upgrade/baseline.json`: the release every change must stay compatible with. */
export interface Baseline {
  readonly version: string;
  readonly commit: string;
}

/** A baseline release ready to run. */
export interface BuiltBaseline extends Baseline {
  readonly dir: string;
  /** Its CLI, to start with `node <bin> node ...`. */
  readonly bin: string;
}

const BUILT_MARKER = '.actor-ts-baseline-built';

/** Reads and checks baseline.json. */
export function readBaseline(): Baseline {
  const file = join(ROOT, 'test', 'upgrade', 'baseline.json');
  const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const { version, commit } = (raw ?? {}) as Partial<Record<string, unknown>>;
  if (typeof version !== 'string' || typeof commit !== 'string' || !/^[0-9a-f]{40}$/.test(commit)) {
    throw new Error(`${file} must be { "version": "x.y.z", "commit": "<40 hex digits>" }`);
  }
  return { version, commit };
}

function git(...args: string[]): string {
  return execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function checkCommit(baseline: Baseline): void {
  try {
    git('cat-file', '-e', `${baseline.commit}^{commit}`);
  } catch (error) {
    throw new Error(
      `the upgrade test needs the baseline commit ${baseline.commit} (release ${baseline.version}) in this ` +
        `repository's history; in a shallow clone run \`git fetch --unshallow\` (${String(error)})`,
    );
  }
}

function run(command: string, args: readonly string[], cwd: string): void {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

/** A lock file's dependencies: the whole file but the package's own version, which every release changes. */
function lockedDependencies(dir: string): string {
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as {
    version?: string;
    packages?: Record<string, { version?: string }>;
  };
  delete lock.version;
  delete lock.packages?.['']?.version;
  return JSON.stringify(lock);
}

/**
 * The baseline's dependencies, checked on every run: a link to ours while the lock files agree (re-made each time,
 * so a cache built from another clone never points at a node_modules that is gone), else its own `npm ci`.
 */
function installDependencies(dir: string): void {
  const modules = join(dir, 'node_modules');
  const linked = existsSync(modules) && lstatSync(modules).isSymbolicLink();
  if (lockedDependencies(dir) === lockedDependencies(ROOT)) {
    if (existsSync(modules) && !linked) return;
    rmSync(modules, { recursive: true, force: true });
    symlinkSync(join(ROOT, 'node_modules'), modules, 'dir');
    return;
  }
  if (existsSync(modules) && !linked) return;
  rmSync(modules, { recursive: true, force: true });
  // Scripts off: the baseline is built below with its own build script, once.
  run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], dir);
}

/** The baseline release built and ready; extracts and builds it on the first call on this machine. */
export function prepareBaseline(baseline: Baseline = readBaseline()): BuiltBaseline {
  const dir = join(tmpdir(), 'actor-ts-upgrade-baseline', baseline.commit);
  const built = { ...baseline, dir, bin: join(dir, 'bin', 'actor-ts-placement.js') };
  const ready = existsSync(join(dir, BUILT_MARKER));
  if (!ready) {
    checkCommit(baseline);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git -C "${ROOT}" archive --format=tar ${baseline.commit} | tar -x -C "${dir}"`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  installDependencies(dir);
  if (ready) return built;
  run('npm', ['run', 'build', '--silent'], dir);
  if (!existsSync(join(dir, 'dist', 'src', 'cli', 'main.js'))) {
    throw new Error(`building the baseline ${baseline.version} in ${dir} produced no dist/src/cli/main.js`);
  }
  writeFileSync(join(dir, BUILT_MARKER), `${baseline.version} ${baseline.commit}\n`);
  return built;
}
