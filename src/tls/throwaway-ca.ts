// A throwaway certificate authority and the node certificates it signs, made with the machine's openssl: what
// `local-cluster --tls` (and the TLS tests) give their nodes so mutual TLS can be shown without a real CA. Each
// certificate is for 127.0.0.1 and localhost, for server and client use (every node is both). Not for production:
// the authority's key lies next to its certificate.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ActorTsError } from '../errors.js';

export interface Authority {
  readonly dir: string;
  readonly name: string;
  /** The authority's certificate: what every node trusts (`--tls-ca`). */
  readonly cert: string;
  readonly key: string;
}

export interface IssuedCertificate {
  readonly cert: string;
  readonly key: string;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function openssl(args: readonly string[], cwd: string): void {
  if (spawnSync('sh', ['-c', 'command -v openssl'], { stdio: 'ignore' }).status !== 0) {
    throw new ActorTsError(
      'invalid_argument',
      'openssl is missing: run as root: apt-get update && apt-get install -y openssl',
    );
  }
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A new authority in `dir` (created when missing), valid `days` days. */
export function makeAuthority(dir: string, name: string, days = 365): Authority {
  mkdirSync(dir, { recursive: true });
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.pem`);
  openssl(
    ['req', '-x509', ...EC_KEY, '-keyout', key, '-out', cert, '-days', String(days), '-subj', `/CN=${name}`],
    dir,
  );
  return { dir, name, cert, key };
}

/** A certificate `name` the authority signs, for 127.0.0.1 and localhost, valid `days` days from now. */
export function issueCertificate(authority: Authority, name: string, days = 365): IssuedCertificate {
  const { dir } = authority;
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  const extensions = join(dir, `${name}.ext`);
  writeFileSync(
    extensions,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n',
  );
  openssl(['req', ...EC_KEY, '-keyout', key, '-out', csr, '-subj', `/CN=${name}`], dir);
  const sign = ['-CA', authority.cert, '-CAkey', authority.key, '-CAcreateserial', '-extfile', extensions];
  openssl(['x509', '-req', '-in', csr, ...sign, '-out', cert, '-days', String(days)], dir);
  return { cert, key };
}
