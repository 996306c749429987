// Real certificates for the TLS tests, made with the machine's openssl (provisioned by scripts/provision-test-deps.mjs):
// a certificate authority and leaf certificates it signs for 127.0.0.1 and localhost, each as PEM files in a
// directory of the test's own. Without openssl the test fails saying the command that installs it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestAuthority {
  readonly dir: string;
  /** The authority's certificate (what a peer or client trusts). */
  readonly cert: string;
  readonly key: string;
  readonly name: string;
}

export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
}

function openssl(args: readonly string[], cwd: string): void {
  if (spawnSync('sh', ['-c', 'command -v openssl'], { stdio: 'ignore' }).status !== 0) {
    throw new Error('openssl is missing: run as root: apt-get update && apt-get install -y openssl');
  }
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A new certificate authority (P-256, valid two days) in a fresh directory. */
export function makeAuthority(name: string, dir: string = mkdtempSync(join(tmpdir(), 'tls-'))): TestAuthority {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.pem`);
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ],
    dir,
  );
  return { dir, cert, key, name };
}

/**
 * A leaf certificate `name` signed by `authority`, for 127.0.0.1 and localhost (server and client use), valid
 * `days` days from now.
 */
export function makeCertificate(authority: TestAuthority, name: string, days = 2): TestCertificate {
  const { dir } = authority;
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  const extensions = join(dir, `${name}.ext`);
  writeFileSync(
    extensions,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n',
  );
  openssl(
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/CN=${name}`,
    ],
    dir,
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      authority.cert,
      '-CAkey',
      authority.key,
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      String(days),
      '-extfile',
      extensions,
    ],
    dir,
  );
  return { cert, key };
}
