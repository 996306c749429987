// The tokens file of the management API (`--tokens-file`): named bearer tokens, each stored as the SHA-256 of the
// token (the file holds no secret), each with the scopes it may use. Declared once as a schema; parsed whole or
// refused whole with a typed error naming the file and the problem, so a typo never grants or revokes half a file.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import { ActorTsError } from '../errors.js';

/** What a token may do: `read` every GET, `operate` the writes (pins, rebalance, cordon, drain), `admin` all. */
export const SCOPES = ['read', 'operate', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** Most tokens one file may name: a file is an operator's list, not a user database. */
export const MAX_TOKENS = 1_000;
/** Largest tokens file read, in bytes. */
export const MAX_TOKENS_FILE_BYTES = 1024 * 1024;

/** `{ "tokens": [{ "name": "ops-ann", "sha256": "<hex of the token>", "scopes": ["read", "operate"] }] }` */
export const TokensFile = Type.Object(
  {
    tokens: Type.Array(
      Type.Object(
        {
          /** Recorded as the `by` of what the token writes when the request names nobody. */
          name: Type.String({ minLength: 1, maxLength: 128 }),
          /** Lower-case hex SHA-256 of the token's UTF-8 bytes (`printf %s TOKEN | sha256sum`). */
          sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
          scopes: Type.Array(Type.Enum(SCOPES), { minItems: 1 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: MAX_TOKENS },
    ),
  },
  { additionalProperties: false },
);
export type TokensFile = Static<typeof TokensFile>;

/** One token the node accepts. */
export interface NamedToken {
  readonly name: string;
  readonly scopes: ReadonlySet<Scope>;
}

/** Tokens by the hex SHA-256 of their bytes. */
export type TokenTable = ReadonlyMap<string, NamedToken>;

/** The file cannot be read, is not JSON, or does not match TokensFile. */
export class TokensFileError extends ActorTsError {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super('invalid_argument', `tokens file ${file}: ${problem}`);
    this.name = 'TokensFileError';
  }
}

/** The hex SHA-256 of a presented token, the key of TokenTable. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Parses a tokens file's text; throws TokensFileError naming the first problem. */
export function parseTokensFile(text: string, file: string): TokenTable {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TokensFileError(file, `not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const [first] = Value.Errors(TokensFile, json);
  if (first !== undefined) throw new TokensFileError(file, `${first.instancePath || '/'} ${first.message}`);
  const table = new Map<string, NamedToken>();
  const names = new Set<string>();
  for (const { name, sha256, scopes } of (json as TokensFile).tokens) {
    if (names.has(name)) throw new TokensFileError(file, `the name "${name}" is given twice`);
    if (table.has(sha256)) throw new TokensFileError(file, `"${name}" has the same sha256 as another token`);
    names.add(name);
    table.set(sha256, { name, scopes: new Set(scopes) });
  }
  return table;
}

/** Reads and parses a tokens file; throws TokensFileError when it cannot be read or is too large. */
export function loadTokensFile(file: string): TokenTable {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new TokensFileError(file, `cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  if (bytes.length > MAX_TOKENS_FILE_BYTES) {
    throw new TokensFileError(file, `is ${bytes.length} bytes; at most ${MAX_TOKENS_FILE_BYTES} are read`);
  }
  return parseTokensFile(bytes.toString('utf8'), file);
}
