// A node's TLS material read from PEM files and checked before any of it is used: the certificate parses and is valid
// now, the key parses and belongs to the certificate, a CA file holds at least one certificate. Every problem is a
// TlsFileError naming the file and what is wrong, so a node refuses to start (or, on a reload, keeps what it had)
// instead of serving with material a peer will refuse. Shared by every TLS listener of a node.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ActorTsError } from '../errors.js';

/** Where a listener's material lives. */
export interface TlsFiles {
  /** PEM certificate (chain) presented to peers. */
  readonly cert: string;
  /** PEM private key of that certificate. */
  readonly key: string;
  /** PEM certificates of the authorities whose certificates peers must present; absent: peers are not asked. */
  readonly ca?: string | undefined;
}

/** What the files held, checked: the PEM texts as read, and the certificate's validity. */
export interface TlsMaterial {
  readonly cert: string;
  readonly key: string;
  readonly ca: string | undefined;
  readonly subject: string;
  readonly validFromMs: number;
  readonly validToMs: number;
}

/** Largest PEM file read, in bytes: a certificate chain is a few kilobytes. */
export const MAX_PEM_BYTES = 1024 * 1024;

/** A TLS file cannot be read, does not parse, does not match, or is not valid now. */
export class TlsFileError extends ActorTsError {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super('invalid_argument', `TLS file ${file}: ${problem}`);
    this.name = 'TlsFileError';
  }
}

/** Reads and checks `files` against the clock `nowMs`; throws TlsFileError at the first problem. */
export function loadTlsMaterial(files: TlsFiles, nowMs: number = Date.now()): TlsMaterial {
  const cert = readPem(files.cert);
  const certificate = parseCertificate(files.cert, cert);
  const validFromMs = Date.parse(certificate.validFrom);
  const validToMs = Date.parse(certificate.validTo);
  if (nowMs < validFromMs)
    throw new TlsFileError(files.cert, `the certificate is not valid before ${certificate.validFrom}`);
  if (nowMs > validToMs) throw new TlsFileError(files.cert, `the certificate expired on ${certificate.validTo}`);
  const key = readPem(files.key);
  if (!certificate.checkPrivateKey(parseKey(files.key, key))) {
    throw new TlsFileError(files.key, `the key does not belong to the certificate in ${files.cert}`);
  }
  const ca = files.ca === undefined ? undefined : readPem(files.ca);
  if (files.ca !== undefined && ca !== undefined) checkAuthorities(files.ca, ca);
  return { cert, key, ca, subject: certificate.subject, validFromMs, validToMs };
}

/** Whole days until the certificate expires (negative once it has). */
export function daysUntilExpiry(material: TlsMaterial, nowMs: number = Date.now()): number {
  return Math.floor((material.validToMs - nowMs) / 86_400_000);
}

function readPem(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new TlsFileError(file, `cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  if (bytes.length > MAX_PEM_BYTES)
    throw new TlsFileError(file, `is ${bytes.length} bytes; at most ${MAX_PEM_BYTES} are read`);
  return bytes.toString('utf8');
}

function parseCertificate(file: string, pem: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (error) {
    throw new TlsFileError(
      file,
      `does not parse as a PEM certificate (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

function parseKey(file: string, pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw new TlsFileError(
      file,
      `does not parse as a PEM private key (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function checkAuthorities(file: string, pem: string): void {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new TlsFileError(file, 'holds no PEM certificate');
  for (const block of blocks) parseCertificate(file, block);
}
