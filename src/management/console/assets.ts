// The console's static files, read once from one flat directory into memory: the served set is exactly the
// files found there at start-up, so a request can only name one of them (no path ever reaches the file system).
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { ActorTsError } from '../../errors.js';

export interface ConsoleAsset {
  readonly body: Buffer;
  readonly contentType: string;
  /** Strong validator: a hash of the bytes, so a rebuilt asset is never answered with a stale 304. */
  readonly etag: string;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

/** Plain file names only: no separators, no leading dot. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const CONSOLE_INDEX = 'index.html';

export function contentTypeOf(name: string): string | undefined {
  return CONTENT_TYPES[extname(name)];
}

export interface ConsoleAssets {
  readonly index: ConsoleAsset;
  readonly byName: ReadonlyMap<string, ConsoleAsset>;
}

/** Every servable file of `dir` (not its subdirectories), by name. Throws when the directory has no index.html. */
export function loadConsoleAssets(dir: string): ConsoleAssets {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    throw new ActorTsError(
      'invalid_argument',
      `console assets directory ${dir} cannot be read (${String(error)}): run npm run build`,
    );
  }
  const assets = new Map<string, ConsoleAsset>();
  for (const entry of entries) {
    const contentType = contentTypeOf(entry.name);
    if (!entry.isFile() || !SAFE_NAME.test(entry.name) || contentType === undefined) continue;
    const body = readFileSync(join(dir, entry.name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    assets.set(entry.name, { body, contentType, etag });
  }
  const index = assets.get(CONSOLE_INDEX);
  if (index === undefined) {
    throw new ActorTsError(
      'invalid_argument',
      `console assets directory ${dir} has no ${CONSOLE_INDEX}: run npm run build`,
    );
  }
  return { index, byName: assets };
}
