// A look at an lmdb data file's two meta pages before lmdb maps it: lmdb-js crashes the whole process
// (SIGSEGV) on a file that is not an lmdb environment, where a typed "corrupt" error is wanted.
import { closeSync, openSync, readSync } from 'node:fs';

// The liblmdb bundled with lmdb-js 3: a 24-byte page header, then the meta's magic, version and, in the
// free-list db record, the page size.
const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const P_META = 0x08;
const FLAGS_AT = 18;
const MAGIC_AT = 24;
const VERSION_AT = 28;
const PAGE_SIZE_AT = 48;

/** Why the file cannot be an lmdb environment of the version lmdb-js reads, or null when it may be. */
export function lmdbFileProblem(path: string, size: number): string | null {
  const fd = openSync(path, 'r');
  try {
    const head = read(fd, 0, 64);
    if (head === undefined) return `it is ${size} bytes long, shorter than an lmdb meta page`;
    const pageSize = head.readUInt32LE(PAGE_SIZE_AT);
    const problem = metaProblem(head, 0);
    if (problem !== null) return problem;
    if (pageSize < 512 || pageSize > 65_536 || (pageSize & (pageSize - 1)) !== 0)
      return `its meta page names an impossible page size ${pageSize}`;
    if (size < 2 * pageSize) return `it is ${size} bytes long, shorter than lmdb's two meta pages of ${pageSize} bytes`;
    const second = read(fd, pageSize, 64);
    return second === undefined ? 'its second meta page is missing' : metaProblem(second, 1);
  } finally {
    closeSync(fd);
  }
}

function metaProblem(page: Buffer, index: number): string | null {
  if ((page.readUInt16LE(FLAGS_AT) & P_META) === 0 || page.readUInt32LE(MAGIC_AT) !== MAGIC) {
    return `meta page ${index} does not carry lmdb's signature: this is not an lmdb file, or its start was overwritten`;
  }
  const version = page.readUInt32LE(VERSION_AT) & 0xffff;
  if (version !== DATA_VERSION)
    return `meta page ${index} has lmdb data version ${version}, lmdb-js here reads ${DATA_VERSION}`;
  return null;
}

function read(fd: number, position: number, length: number): Buffer | undefined {
  const buffer = Buffer.alloc(length);
  return readSync(fd, buffer, 0, length, position) === length ? buffer : undefined;
}
