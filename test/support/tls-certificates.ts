// Real certificates for the TLS tests, made with the machine's openssl (provisioned by scripts/provision-test-deps.mjs)
// through the same module `local-cluster --tls` uses: an authority and the leaf certificates it signs, in a directory
// of the test's own, valid two days. Without openssl the test fails saying the command that installs it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  issueCertificate,
  makeAuthority as makeCa,
  type Authority,
  type IssuedCertificate,
} from '../../src/tls/throwaway-ca.js';

export type TestAuthority = Authority;
export type TestCertificate = IssuedCertificate;

/** A new certificate authority (P-256, valid two days) in a fresh directory. */
export function makeAuthority(name: string, dir: string = mkdtempSync(join(tmpdir(), 'tls-'))): TestAuthority {
  return makeCa(dir, name, 2);
}

/** A leaf certificate `name` signed by `authority`, for 127.0.0.1 and localhost, valid `days` days from now. */
export function makeCertificate(authority: TestAuthority, name: string, days = 2): TestCertificate {
  return issueCertificate(authority, name, days);
}
