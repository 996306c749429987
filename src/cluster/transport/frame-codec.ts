// Framing of the TCP byte stream: `[u32 big-endian length][u8 protocol version][u8 kind][payload]`, where
// length counts version + kind + payload. Handshake frames carry the frozen HANDSHAKE_FRAME_VERSION; message frames
// the version agreed on their connection (protocol-versions.ts). The decoder is incremental (a frame may arrive in any number of
// chunks, several frames in one chunk) and refuses a frame header it cannot trust before buffering its body,
// so a peer cannot make us allocate an arbitrary amount of memory.
import { ActorTsError } from '../../errors.js';
import { HANDSHAKE_FRAME_VERSION } from './protocol-versions.js';
import { PROTOCOL_VERSION } from './wire-message.js';

export { PROTOCOL_VERSION } from './wire-message.js';

/** Length prefix + version + kind. */
export const FRAME_HEADER_BYTES = 6;
/** Default limit on one frame's payload; placement state transfers are the largest frames we send. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

const KIND_CODES = { handshake: 1, message: 2 } as const;
export type FrameKind = keyof typeof KIND_CODES;

export interface Frame {
  readonly kind: FrameKind;
  readonly payload: Uint8Array;
}

/**
 * Builds one frame with `version` in its header (by default the frozen HANDSHAKE_FRAME_VERSION for a handshake
 * frame, this release's newest for a message frame); throws `frame_too_large` when the payload exceeds
 * `maxFrameBytes`.
 */
export function encodeFrame(
  kind: FrameKind,
  payload: Uint8Array,
  maxFrameBytes = DEFAULT_MAX_FRAME_BYTES,
  version = kind === 'handshake' ? HANDSHAKE_FRAME_VERSION : PROTOCOL_VERSION,
): Buffer {
  checkFrameSize(payload.byteLength, maxFrameBytes);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.byteLength);
  frame.set(payload, FRAME_HEADER_BYTES);
  writeFrameHeader(frame, kind, version);
  return frame;
}

/**
 * Writes the header into the first FRAME_HEADER_BYTES of `frame`, whose payload already follows them: an encoder
 * that reserved the room frames its output without copying it into a new buffer. `frameBytes` is the whole
 * frame's size when more of it follows `frame` on the socket (an OutgoingFrame's tail).
 */
export function writeFrameHeader(frame: Buffer, kind: FrameKind, version: number, frameBytes = frame.length): void {
  frame.writeUInt32BE(frameBytes - 4, 0);
  frame.writeUInt8(version, 4);
  frame.writeUInt8(KIND_CODES[kind], 5);
}

/** Throws `frame_too_large` when a payload of `payloadBytes` exceeds `maxFrameBytes`. */
export function checkFrameSize(payloadBytes: number, maxFrameBytes: number): void {
  if (payloadBytes > maxFrameBytes) {
    throw new ActorTsError(
      'frame_too_large',
      `frame payload of ${payloadBytes} bytes exceeds the maximum frame size of ${maxFrameBytes} bytes`,
    );
  }
}

/**
 * A message frame as it is written: `head` (the header, then the message's bytes), then `tail` when the message
 * ends with a large binary, whose bytes go on the socket after the rest instead of being copied behind it
 * (message-codec.ts); the receiver reads the same bytes as from one buffer.
 */
export interface OutgoingFrame {
  readonly head: Buffer;
  readonly tail: Uint8Array | undefined;
  /** Bytes of the whole frame, header included. */
  readonly byteLength: number;
}

/** `frame` as it goes on a connection of `version`: itself when its header says so, else a copy restamped. */
export function frameAtVersion(frame: Buffer, version: number): Buffer {
  if (frame.readUInt8(4) === version) return frame;
  const copy = Buffer.from(frame);
  copy.writeUInt8(version, 4);
  return copy;
}

/** The message bytes of an outgoing frame in one buffer: a view of its head, or both parts joined (a copy). */
export function messageBytes(frame: OutgoingFrame): Uint8Array {
  const { head, tail } = frame;
  if (tail === undefined) return head.subarray(FRAME_HEADER_BYTES);
  const bytes = new Uint8Array(frame.byteLength - FRAME_HEADER_BYTES);
  bytes.set(head.subarray(FRAME_HEADER_BYTES));
  bytes.set(tail, head.length - FRAME_HEADER_BYTES);
  return bytes;
}

/** `frame` as it goes on a connection of `version`: only its head restamped (a copy) when it says another. */
export function outgoingAtVersion(frame: OutgoingFrame, version: number): OutgoingFrame {
  const head = frameAtVersion(frame.head, version);
  return head === frame.head ? frame : { head, tail: frame.tail, byteLength: frame.byteLength };
}

export interface FrameDecoderStats {
  readonly frames: number;
  readonly bytes: number;
  /** Oversized, corrupt or wrong-version frames seen; after the first one the decoder is failed. */
  readonly errors: number;
}

export type FrameDecodeResult =
  | { readonly ok: true; readonly frames: ReadonlyArray<Frame> }
  /** The frames decoded before the bad header, then the reason; the stream cannot be resynchronised. */
  | { readonly ok: false; readonly frames: ReadonlyArray<Frame>; readonly error: ActorTsError };

/** Incremental decoder for one connection's byte stream. */
export class FrameDecoder {
  private maxFrameBytes: number;
  /** The version message frames must carry: the one agreed on the connection. */
  private messageVersion: number;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private failure: ActorTsError | undefined;
  private counters = { frames: 0, bytes: 0, errors: 0 };

  constructor(options: { readonly maxFrameBytes?: number; readonly messageVersion?: number } = {}) {
    this.maxFrameBytes = checkedMax(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
    this.messageVersion = options.messageVersion ?? PROTOCOL_VERSION;
  }

  /** Sets the version message frames must carry from now on: the one the handshake agreed. */
  setMessageVersion(version: number): void {
    this.messageVersion = version;
  }

  /**
   * Changes the limit for frames whose header has not been read yet; a connection raises it once its peer has
   * authenticated (before that, only small handshake frames are allowed).
   */
  setMaxFrameBytes(max: number): void {
    this.maxFrameBytes = checkedMax(max);
  }

  /** Bytes held that do not yet form a complete frame (0 between frames). */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** True once a bad frame was seen; every later push is refused with the same error. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  stats(): FrameDecoderStats {
    return { ...this.counters };
  }

  /**
   * Drops the bytes of the incomplete frame and refuses every later push: the connection is over. Without it a
   * decoder still referenced somewhere keeps up to a whole frame's worth of chunks alive.
   */
  discard(): void {
    this.failure ??= new ActorTsError('invalid_argument', 'the connection of this decoder has ended');
    this.chunks = [];
    this.buffered = 0;
  }

  push(chunk: Uint8Array): FrameDecodeResult {
    if (this.failure) return { ok: false, frames: [], error: this.failure };
    if (chunk.byteLength > 0) {
      this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      this.buffered += chunk.byteLength;
    }
    const frames: Frame[] = [];
    while (this.buffered >= FRAME_HEADER_BYTES) {
      const header = this.peek(FRAME_HEADER_BYTES);
      const length = header.readUInt32BE(0);
      const error = this.checkHeader(length, header.readUInt8(4), header.readUInt8(5));
      if (error) return this.fail(frames, error);
      if (this.buffered < 4 + length) break;
      const frame = this.take(4 + length);
      const kind = frame.readUInt8(5) === KIND_CODES.handshake ? 'handshake' : 'message';
      frames.push({ kind, payload: frame.subarray(FRAME_HEADER_BYTES) });
      this.counters.frames++;
      this.counters.bytes += frame.byteLength;
    }
    return { ok: true, frames };
  }

  private checkHeader(length: number, version: number, kind: number): ActorTsError | undefined {
    if (length < 2)
      return new ActorTsError('malformed_message', `corrupt frame: length ${length} is below the header size`);
    if (length - 2 > this.maxFrameBytes) {
      return new ActorTsError(
        'frame_too_large',
        `frame of ${length - 2} bytes exceeds the maximum frame size of ${this.maxFrameBytes} bytes`,
      );
    }
    if (kind !== KIND_CODES.handshake && kind !== KIND_CODES.message) {
      return new ActorTsError('malformed_message', `corrupt frame: unknown frame kind ${kind}`);
    }
    const expected = kind === KIND_CODES.handshake ? HANDSHAKE_FRAME_VERSION : this.messageVersion;
    if (version !== expected) {
      const what = kind === KIND_CODES.handshake ? 'handshake frames carry' : 'this connection speaks';
      return new ActorTsError(
        'malformed_message',
        `frame has protocol version ${version}, ${what} version ${expected}`,
      );
    }
    return undefined;
  }

  private fail(frames: Frame[], error: ActorTsError): FrameDecodeResult {
    this.failure = error;
    this.counters.errors++;
    this.chunks = [];
    this.buffered = 0;
    return { ok: false, frames, error };
  }

  /** The first `n` buffered bytes, without consuming them (n <= buffered); copies only a header split by reads. */
  private peek(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.byteLength >= n) return first.subarray(0, n);
    const head = Buffer.allocUnsafe(n);
    let filled = 0;
    for (let i = 0; filled < n; i++) {
      const chunk = this.chunks[i] as Buffer;
      const part = Math.min(chunk.byteLength, n - filled);
      head.set(chunk.subarray(0, part), filled);
      filled += part;
    }
    return head;
  }

  /**
   * Consumes exactly `n` buffered bytes (n <= buffered). A frame that arrived within one read is a view of it; one
   * spread over reads is copied once into a buffer of its own size (never with the bytes of the frames after it,
   * so the payload owns its memory and its decoder may hand out views of it: message-codec.ts).
   */
  private take(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    this.buffered -= n;
    if (first.byteLength >= n) {
      if (first.byteLength === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    let used = 0;
    while (filled < n) {
      const chunk = this.chunks[used] as Buffer;
      const want = n - filled;
      if (chunk.byteLength > want) {
        out.set(chunk.subarray(0, want), filled);
        this.chunks[used] = chunk.subarray(want);
        break;
      }
      out.set(chunk, filled);
      filled += chunk.byteLength;
      used++;
    }
    // One splice: a frame sent a byte per read must not cost a shift of the whole list per byte.
    this.chunks.splice(0, used);
    return out;
  }
}

function checkedMax(max: number): number {
  if (!Number.isInteger(max) || max < 1 || max > 0xffffffff - 2) {
    throw new ActorTsError('invalid_argument', `maxFrameBytes must be an integer in 1..${0xffffffff - 2}, got ${max}`);
  }
  return max;
}
