// Run first by `npm test`: installs the Debian packages the tests need when their commands are missing, so the
// README's `npm ci && npm test` passes on a fresh machine. Plain JavaScript (it runs before the build). As root it
// runs `apt-get update` once and `apt-get install -y` of what is missing; otherwise it fails naming the one command
// that fixes it. Add a row to NEEDED when a test starts to need another program.
import { spawnSync } from 'node:child_process';

/** Each program a test runs, the Debian package that brings it, and which tests need it. */
const NEEDED = [
  { command: 'chromium', pkg: 'chromium', why: 'the console tests in a real browser (test/console)' },
  { command: 'nft', pkg: 'nftables', why: 'the partition tests between network namespaces (test/e2e/netns)' },
  { command: 'ip', pkg: 'iproute2', why: 'the network namespaces of the partition tests (test/e2e/netns)' },
  { command: 'faketime', pkg: 'faketime', why: 'a CLI node with a wrong clock refusing writes (issue 41, clock_skew)' },
  { command: 'promtool', pkg: 'prometheus', why: 'the shipped alert rules and dashboard queries (test/docs)' },
  {
    command: 'tcpdump',
    pkg: 'tcpdump',
    why: 'a capture of the cluster port showing no plaintext under TLS (test/e2e)',
  },
  {
    // The server binaries are not on PATH: Debian keeps them per major version.
    command: '/usr/lib/postgresql/15/bin/initdb',
    pkg: 'postgresql-15',
    why: 'a real PostgreSQL server for the durable entity store (test/entity-store, test/e2e)',
  },
  {
    command: 'openssl',
    pkg: 'openssl',
    why: 'real certificates for the TLS and HTTPS tests (test/support/tls-certificates.ts)',
  },
];

function found(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function run(args) {
  const result = spawnSync(args[0], args.slice(1), {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return result.status === 0;
}

const missing = NEEDED.filter((need) => !found(need.command));
if (missing.length > 0) {
  const packages = [...new Set(missing.map((need) => need.pkg))];
  const fix = `apt-get update && apt-get install -y ${packages.join(' ')}`;
  for (const need of missing) console.log(`provision: '${need.command}' is missing; ${need.why} need it`);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !found('apt-get')) {
    console.error(
      `provision: cannot install ${packages.join(', ')} here (needs root and apt-get); run as root: ${fix}`,
    );
    process.exit(1);
  }
  console.log(`provision: ${fix}`);
  if (!run(['apt-get', 'update']) || !run(['apt-get', 'install', '-y', ...packages])) {
    console.error(`provision: the install failed; run as root: ${fix}`);
    process.exit(1);
  }
  const still = missing.filter((need) => !found(need.command));
  if (still.length > 0) {
    console.error(`provision: still missing after the install: ${still.map((need) => need.command).join(', ')}`);
    process.exit(1);
  }
}
