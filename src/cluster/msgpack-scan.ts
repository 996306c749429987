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

/** Returns undefined when `bytes` is exactly one admissible value within `limits`, else why not. */
export function scanMsgpack(bytes: Uint8Array, limits: DecodeConfig = DEFAULT_DECODE_LIMITS): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.byteLength;
  let pos = 0;
  let elements = 0;
  /** Items still to read in each open container, innermost last. */
  const open: number[] = [];

  const need = (n: number): boolean => pos + n <= end;
  const length = (size: 1 | 2 | 4): number => {
    const value = size === 1 ? view.getUint8(pos) : size === 2 ? view.getUint16(pos) : view.getUint32(pos);
    pos += size;
    return value;
  };

  for (;;) {
    if (!need(1)) return 'truncated value';
    const token = view.getUint8(pos++);
    let items = 0;
    let skip = 0;
    let sizeKind: 'str' | 'bin' | undefined;
    if (token < 0x80 || token >= 0xe0) skip = 0;
    else if (token < 0x90) items = (token & 0x0f) * 2;
    else if (token < 0xa0) items = token & 0x0f;
    else if (token < 0xc0) {
      skip = token & 0x1f;
      sizeKind = 'str';
    } else {
      const fixed = FIXED_SIZES[token];
      if (fixed !== undefined) skip = fixed;
      else if (token === 0xd4 && bytes[pos] === 0x00)
        skip = 2; // msgpackr's `undefined`: ext type 0, one filler byte
      else {
        const prefix = LENGTH_PREFIX[token];
        if (prefix === undefined) return describeToken(token, bytes, pos);
        if (!need(prefix.size)) return 'truncated header';
        const n = length(prefix.size);
        if (prefix.kind === 'array') items = n;
        else if (prefix.kind === 'map') items = n * 2;
        else {
          skip = n;
          sizeKind = prefix.kind;
        }
      }
    }
    if (sizeKind === 'str' && skip > limits.maxStringBytes)
      return `string of ${skip} bytes exceeds ${limits.maxStringBytes}`;
    if (sizeKind === 'bin' && skip > limits.maxBinaryBytes)
      return `binary of ${skip} bytes exceeds ${limits.maxBinaryBytes}`;
    if (!need(skip)) return 'truncated value';
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
