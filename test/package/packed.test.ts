// The package as a user gets it: `npm pack`, installed offline into a fresh project (one install shared by
// every case). What the tarball ships and leaves out, that its types resolve under moduleResolution node16,
// nodenext and bundler, that the README's TypeScript snippets compile against it as written, and that a small
// consumer runs there: the store alone (examples/store-alone) and a two-node cluster through startNode.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, installPackedPackage, type PackedInstall } from './packed-install.js';
import { typescriptBlocks } from './readme-blocks.js';

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
let installed: PackedInstall;
/** The nodenext compile, started once installed: its case reports it, the running cases need its output. */
let nodenextBuild: Promise<void>;

type Resolution = 'node16' | 'nodenext' | 'bundler';

/**
 * A tsconfig for the consumer under one module resolution; @types/node comes from this repository. The
 * nodenext one also emits (the consumer runs from it) and checks every declaration file, ours included; the
 * other two check that imports and types resolve, trusting the declaration files (half the time).
 */
function tsconfig(resolution: Resolution): object {
  const full = resolution === 'nodenext';
  return {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022', 'DOM'],
      module: resolution === 'bundler' ? 'ESNext' : resolution,
      moduleResolution: resolution,
      strict: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: !full,
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      types: ['node'],
      ...(full ? { outDir: 'out', rootDir: '.' } : { noEmit: true }),
    },
    include: ['src', 'readme'],
  };
}

async function tsc(config: string): Promise<void> {
  try {
    await run(process.execPath, [TSC, '-p', config], { cwd: installed.dir, maxBuffer: 16 << 20 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc -p ${config} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

beforeAll(async () => {
  installed = await installPackedPackage();
  mkdirSync(join(installed.dir, 'src'));
  mkdirSync(join(installed.dir, 'readme'));
  cpSync(join(ROOT, 'examples', 'store-alone', 'main.ts'), join(installed.dir, 'src', 'store-alone.ts'));
  cpSync(join(ROOT, 'test', 'package', 'consumer', 'cluster.ts'), join(installed.dir, 'src', 'cluster.ts'));
  typescriptBlocks(readme).forEach((block, i) =>
    writeFileSync(join(installed.dir, 'readme', `block-${i + 1}.ts`), `${block}\nexport {};\n`),
  );
  for (const resolution of ['node16', 'nodenext', 'bundler'] as const) {
    writeFileSync(join(installed.dir, `tsconfig.${resolution}.json`), JSON.stringify(tsconfig(resolution)));
  }
  nodenextBuild = tsc('tsconfig.nodenext.json');
  // Reported by its own case; kept from being an unhandled rejection meanwhile.
  nodenextBuild.catch(() => undefined);
}, 180_000);

afterAll(() => {
  if (installed !== undefined) rmSync(installed.dir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the runtime, the store, the CLI, README, LICENSE and docs, and no bench, tests, scripts or examples', () => {
    const files = installed.files;
    for (const expected of [
      'LICENSE',
      'README.md',
      'package.json',
      'bin/actor-ts-placement.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/crdt/index.js',
      'dist/crdt/index.d.ts',
      'dist/src/cli/main.js',
      'docs/design.md',
      'docs/external-allocation.md',
    ]) {
      expect(files, expected).toContain(expected);
    }
    const strays = files.filter(
      (f) =>
        /^dist\/(bench|test|scripts|examples)\//.test(f) ||
        f.startsWith('examples/') ||
        f.startsWith('docs/api/') ||
        f === 'dist/src/demo.js',
    );
    expect(strays).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(installed.packageDir, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest['private']).toBeUndefined();
    expect(manifest['license']).toBe('MIT');
    expect(manifest['repository']).toBeDefined();
    expect(readFileSync(join(installed.packageDir, 'LICENSE'), 'utf8')).toMatch(
      /MIT License[\s\S]*the actor-ts placement contributors/,
    );
  });

  it('ships no source map without its sources', () => {
    const maps = filesUnder(installed.packageDir).filter((f) => f.endsWith('.map'));
    const bare = maps.filter((f) => {
      const map = JSON.parse(readFileSync(f, 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
      return map.sourcesContent?.length !== map.sources.length || map.sourcesContent.some((s) => typeof s !== 'string');
    });
    expect(bare.map((f) => relative(installed.packageDir, f))).toEqual([]);
  });

  it('has every docs/ file the README links to', () => {
    const links = [...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1] ?? '');
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((link) => !installed.files.includes(link))).toEqual([]);
  });

  it.each(['nodenext', 'node16', 'bundler'])(
    'type-checks a consumer and the README snippets under moduleResolution %s',
    async (resolution) => {
      expect(typescriptBlocks(readme).length).toBeGreaterThanOrEqual(4);
      await (resolution === 'nodenext' ? nodenextBuild : tsc(`tsconfig.${resolution}.json`));
    },
    60_000,
  );

  it("opens the README's code with startNode: an own entity type whose state moves, a timer, a reliable send, signals", () => {
    // The embedding snippet comes first and is type-checked with the others above; this holds what it shows.
    const first = typescriptBlocks(readme)[0] ?? '';
    for (const shown of [
      'startNode(',
      'entityTypes:',
      'snapshot:',
      'ctx.restored',
      'ctx.timers.',
      '.send(',
      'handleSignals: true',
    ])
      expect(first, shown).toContain(shown);
  });

  it('shows the store-alone example in the README as it is in examples/store-alone', () => {
    const example = readFileSync(join(ROOT, 'examples', 'store-alone', 'main.ts'), 'utf8');
    // The file's header comment says how to run it; the README says that in prose.
    const body = example.replace(/^(\/\/.*\n)+/, '');
    expect(typescriptBlocks(readme)).toContain(body);
  });

  describe('running a consumer', () => {
    beforeAll(async () => nodenextBuild, 60_000);

    it('runs the store alone: three replicas linked in one process converge on one winner', async () => {
      const { stdout } = await run(process.execPath, ['out/src/store-alone.js'], { cwd: installed.dir });
      const lines = stdout.trim().split('\n');
      expect(lines.at(-1)).toBe('converged');
      const seen = new Set(lines.slice(0, 3).map((line) => line.replace(/^node-. sees /, '')));
      expect(seen.size).toBe(1);
    }, 30_000);

    it('runs a two-node cluster through startNode on free ports, an entity answering from one home', async () => {
      const { stdout } = await run(process.execPath, ['out/src/cluster.js'], { cwd: installed.dir });
      const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
      expect(line, stdout).toBeDefined();
      const result = JSON.parse((line ?? '').slice('RESULT '.length)) as {
        members: number;
        reply: { value: number; node: string };
        again: { value: number; node: string };
        health: number;
      };
      expect(result.members).toBe(2);
      expect(result.reply.value).toBe(1);
      expect(result.again).toEqual(expect.objectContaining({ value: 2, node: result.reply.node }));
      expect(result.health).toBe(200);
    }, 45_000);
  });
});
