// A pre-scan of untrusted msgpack bytes that walks the headers without materialising any value, so a
// message's depth, element count and string/binary sizes are checked against a budget before msgpackr does
// work proportional to them. It also admits only the msgpack the protocol speaks: no extension types (which
// msgpackr would otherwise honour on unpack: structured-clone references, records, sets, errors, typed
// arrays, dates) except msgpackr's one-byte `undefined`, no reserved 0xc1, and exactly one value per buffer.

/** Budgets one decoded value must fit in. */
export interface DecodeConfig {
  /** Nesting of arrays and maps; default 64. */
  readonly maxDepth: number;
  /** Array items plus map keys and values, summed over the whole value; default 500,000. */
  readonly maxElements: number;
  /** Bytes of one string; default 1 MiB. */
  readonly maxStringBytes: number;
  /** Bytes of one binary value (Uint8Array); default 16 MiB (placement state transfers). */
  readonly maxBinaryBytes: number;
}

export const DEFAULT_DECODE_LIMITS: DecodeConfig = {
  maxDepth: 64,
  maxElements: 500_000,
  maxStringBytes: 1024 * 1024,
  maxBinaryBytes: 16 * 1024 * 1024,
};

/** One header as `readHeader` read it: what follows it and where the next one starts. */
interface Header {
  /** Elements the header opens (array items, or map keys and values). */
  items: number;
  /** Payload bytes after the header (a scalar's, a string's or a binary's). */
  skip: number;
  sizeKind: 'str' | 'bin' | undefined;
  /** Where the header's payload starts. */
  pos: number;
}

/**
 * Reads the header at `pos` into `out`; why not, when it is truncated or a token the protocol does not speak. Reads
 * bytes, not a DataView: one made per call cost more than a state's whole outline (msgpackValueEnd, bench S10).
 */
function readHeader(bytes: Uint8Array, pos: number, out: Header): string | undefined {
  // `length`: a typed array's byteLength getter is a call per use in Node 20, and this runs for every header.
  const end = bytes.length;
  if (pos >= end) return 'truncated value';
  const token = bytes[pos++] as number;
  out.items = 0;
  out.skip = 0;
  out.sizeKind = undefined;
  if (token < 0x80 || token >= 0xe0) out.skip = 0;
  else if (token < 0x90) out.items = (token & 0x0f) * 2;
  else if (token < 0xa0) out.items = token & 0x0f;
  else if (token < 0xc0) {
    out.skip = token & 0x1f;
    out.sizeKind = 'str';
  } else {
    const fixed = FIXED_SIZES[token];
    if (fixed !== undefined) out.skip = fixed;
    else if (token === 0xd4 && bytes[pos] === 0x00)
      out.skip = 2; // msgpackr's `undefined`: ext type 0, one filler byte
    else {
      const prefix = LENGTH_PREFIX[token];
      if (prefix === undefined) return describeToken(token, bytes, pos);
      if (pos + prefix.size > end) return 'truncated header';
      const { size } = prefix;
      const n = bigEndian(bytes, pos, size);
      pos += size;
      if (prefix.kind === 'array') out.items = n;
      else if (prefix.kind === 'map') out.items = n * 2;
      else {
        out.skip = n;
        out.sizeKind = prefix.kind;
      }
    }
  }
  out.pos = pos;
  return undefined;
}

/** The unsigned big-endian integer of `size` bytes at `pos` (within the bytes: the caller checked). */
function bigEndian(bytes: Uint8Array, pos: number, size: 1 | 2 | 4): number {
  const first = bytes[pos] as number;
  if (size === 1) return first;
  if (size === 2) return (first << 8) | (bytes[pos + 1] as number);
  // Multiplied, not shifted: a shift of the top byte would make the count negative.
  return (
    first * 0x1000000 +
    (((bytes[pos + 1] as number) << 16) | ((bytes[pos + 2] as number) << 8) | (bytes[pos + 3] as number))
  );
}

/** Returns undefined when `bytes` is exactly one admissible value within `limits`, else why not. */
export function scanMsgpack(bytes: Uint8Array, limits: DecodeConfig = DEFAULT_DECODE_LIMITS): string | undefined {
  const end = bytes.length;
  const header: Header = { items: 0, skip: 0, sizeKind: undefined, pos: 0 };
  let pos = 0;
  let elements = 0;
  /** Items still to read in each open container, innermost last. */
  const open: number[] = [];

  for (;;) {
    const refused = readHeader(bytes, pos, header);
    if (refused !== undefined) return refused;
    const { items, skip, sizeKind } = header;
    pos = header.pos;
    if (sizeKind === 'str' && skip > limits.maxStringBytes)
      return `string of ${skip} bytes exceeds ${limits.maxStringBytes}`;
    if (sizeKind === 'bin' && skip > limits.maxBinaryBytes)
      return `binary of ${skip} bytes exceeds ${limits.maxBinaryBytes}`;
    if (pos + skip > end) return 'truncated value';
    pos += skip;
    if (items > 0) {
      elements += items;
      if (elements > limits.maxElements) return `more than ${limits.maxElements} elements`;
      // Every element takes at least one byte: a count the rest of the buffer cannot hold is a lie.
      if (items > end - pos) return 'container larger than the buffer';
      if (open.length >= limits.maxDepth) return `nesting deeper than ${limits.maxDepth}`;
      open.push(items);
      continue;
    }
    // One value complete: close every container it completes.
    while (open.length > 0) {
      const last = open.length - 1;
      const left = (open[last] as number) - 1;
      if (left > 0) {
        open[last] = left;
        break;
      }
      open.pop();
    }
    if (open.length === 0) return pos === end ? undefined : 'trailing bytes after the value';
  }
}

/**
 * Where the one value starting at `start` ends, its headers walked and nothing decoded (for reading a value's
 * outline in place: a map's keys and where each value lies); why not, when it runs past the end or speaks a
 * token the protocol does not. Every header takes a byte, so the walk is bounded by the bytes' length.
 */
export function msgpackValueEnd(bytes: Uint8Array, start: number): number | string {
  const header: Header = { items: 0, skip: 0, sizeKind: undefined, pos: 0 };
  let pos = start;
  let left = 1;
  while (left > 0) {
    left--;
    const refused = readHeader(bytes, pos, header);
    if (refused !== undefined) return refused;
    pos = header.pos + header.skip;
    if (pos > bytes.length) return 'truncated value';
    left += header.items;
  }
  return pos;
}

/**
 * Whether `bytes` hold `expected` from `at` (false where they end first). Compared in place, byte by byte: the
 * bytes read in place are a few keys or a short text, where a view and a native comparison cost more than the loop.
 */
export function bytesAt(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  const n = expected.length;
  if (at + n > bytes.length) return false;
  for (let i = 0; i < n; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/** The pair count of the map whose header is at `start` and where its first key starts; undefined for no map. */
export function msgpackMapHeader(bytes: Uint8Array, start: number): { pairs: number; next: number } | undefined {
  const header: Header = { items: 0, skip: 0, sizeKind: undefined, pos: 0 };
  const token = bytes[start];
  const isMap = token !== undefined && ((token >= 0x80 && token < 0x90) || token === 0xde || token === 0xdf);
  if (!isMap || readHeader(bytes, start, header) !== undefined) return undefined;
  return { pairs: header.items / 2, next: header.pos };
}

/** Payload bytes after the token of fixed-size types (nil, booleans, numbers, msgpackr's `undefined`). */
const FIXED_SIZES: Readonly<Record<number, number>> = {
  0xc0: 0,
  0xc2: 0,
  0xc3: 0,
  0xca: 4,
  0xcb: 8,
  0xcc: 1,
  0xcd: 2,
  0xce: 4,
  0xcf: 8,
  0xd0: 1,
  0xd1: 2,
  0xd2: 4,
  0xd3: 8,
};

const LENGTH_PREFIX: Readonly<
  Record<number, { readonly size: 1 | 2 | 4; readonly kind: 'str' | 'bin' | 'array' | 'map' }>
> = {
  0xc4: { size: 1, kind: 'bin' },
  0xc5: { size: 2, kind: 'bin' },
  0xc6: { size: 4, kind: 'bin' },
  0xd9: { size: 1, kind: 'str' },
  0xda: { size: 2, kind: 'str' },
  0xdb: { size: 4, kind: 'str' },
  0xdc: { size: 2, kind: 'array' },
  0xdd: { size: 4, kind: 'array' },
  0xde: { size: 2, kind: 'map' },
  0xdf: { size: 4, kind: 'map' },
};

/** Why a token the tables do not admit is refused. */
function describeToken(token: number, bytes: Uint8Array, pos: number): string {
  if (token === 0xc1) return 'reserved token 0xc1';
  if (token >= 0xc7 && token <= 0xc9) return 'extension types are not part of the protocol';
  if (token >= 0xd4 && token <= 0xd8) return 'extension types are not part of the protocol';
  return `unknown token 0x${token.toString(16)} at ${pos - 1} of ${bytes.byteLength}`;
}
