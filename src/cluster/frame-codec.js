// Framing of the TCP byte stream: `[u32 big-endian length][u8 protocol version][u8 kind][payload]`, where
// length counts version + kind + payload. The decoder is incremental (a frame may arrive in any number of
// chunks, several frames in one chunk) and refuses a frame header it cannot trust before buffering its body,
// so a peer cannot make us allocate an arbitrary amount of memory.
import { ActorTsError } from '../errors.js';
import { PROTOCOL_VERSION } from './wire-message.js';
export { PROTOCOL_VERSION } from './wire-message.js';
/** Length prefix + version + kind. */
export const FRAME_HEADER_BYTES = 6;
/** Default limit on one frame's payload; placement state transfers are the largest frames we send. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
const KIND_CODES = { handshake: 1, message: 2 };
/** Builds one frame; throws `frame_too_large` when the payload exceeds `maxFrameBytes`. */
export function encodeFrame(kind, payload, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {
    if (payload.byteLength > maxFrameBytes) {
        throw new ActorTsError('frame_too_large', `frame payload of ${payload.byteLength} bytes exceeds the maximum frame size of ${maxFrameBytes} bytes`);
    }
    const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.byteLength);
    frame.writeUInt32BE(payload.byteLength + 2, 0);
    frame.writeUInt8(PROTOCOL_VERSION, 4);
    frame.writeUInt8(KIND_CODES[kind], 5);
    frame.set(payload, FRAME_HEADER_BYTES);
    return frame;
}
/** Incremental decoder for one connection's byte stream. */
export class FrameDecoder {
    maxFrameBytes;
    chunks = [];
    buffered = 0;
    failure;
    counters = { frames: 0, bytes: 0, errors: 0 };
    constructor(options = {}) {
        this.maxFrameBytes = checkedMax(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
    }
    /**
     * Changes the limit for frames whose header has not been read yet; a connection raises it once its peer has
     * authenticated (before that, only small handshake frames are allowed).
     */
    setMaxFrameBytes(max) {
        this.maxFrameBytes = checkedMax(max);
    }
    /** Bytes held that do not yet form a complete frame (0 between frames). */
    get bufferedBytes() {
        return this.buffered;
    }
    /** True once a bad frame was seen; every later push is refused with the same error. */
    get failed() {
        return this.failure !== undefined;
    }
    stats() {
        return { ...this.counters };
    }
    /**
     * Drops the bytes of the incomplete frame and refuses every later push: the connection is over. Without it a
     * decoder still referenced somewhere keeps up to a whole frame's worth of chunks alive.
     */
    discard() {
        this.failure ??= new ActorTsError('invalid_argument', 'the connection of this decoder has ended');
        this.chunks = [];
        this.buffered = 0;
    }
    push(chunk) {
        if (this.failure)
            return { ok: false, frames: [], error: this.failure };
        if (chunk.byteLength > 0) {
            this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            this.buffered += chunk.byteLength;
        }
        const frames = [];
        while (this.buffered >= FRAME_HEADER_BYTES) {
            const header = this.peek(FRAME_HEADER_BYTES);
            const length = header.readUInt32BE(0);
            const error = this.checkHeader(length, header.readUInt8(4), header.readUInt8(5));
            if (error)
                return this.fail(frames, error);
            if (this.buffered < 4 + length)
                break;
            const frame = this.take(4 + length);
            const kind = frame.readUInt8(5) === KIND_CODES.handshake ? 'handshake' : 'message';
            frames.push({ kind, payload: frame.subarray(FRAME_HEADER_BYTES) });
            this.counters.frames++;
            this.counters.bytes += frame.byteLength;
        }
        return { ok: true, frames };
    }
    checkHeader(length, version, kind) {
        if (length < 2)
            return new ActorTsError('malformed_message', `corrupt frame: length ${length} is below the header size`);
        if (length - 2 > this.maxFrameBytes) {
            return new ActorTsError('frame_too_large', `frame of ${length - 2} bytes exceeds the maximum frame size of ${this.maxFrameBytes} bytes`);
        }
        if (version !== PROTOCOL_VERSION) {
            return new ActorTsError('malformed_message', `frame has protocol version ${version}, this node speaks version ${PROTOCOL_VERSION}`);
        }
        if (kind !== KIND_CODES.handshake && kind !== KIND_CODES.message) {
            return new ActorTsError('malformed_message', `corrupt frame: unknown frame kind ${kind}`);
        }
        return undefined;
    }
    fail(frames, error) {
        this.failure = error;
        this.counters.errors++;
        this.chunks = [];
        this.buffered = 0;
        return { ok: false, frames, error };
    }
    /** The first `n` buffered bytes, without consuming them (n <= buffered). */
    peek(n) {
        const first = this.chunks[0];
        if (first && first.byteLength >= n)
            return first.subarray(0, n);
        this.chunks = [Buffer.concat(this.chunks, this.buffered)];
        return this.chunks[0].subarray(0, n);
    }
    /** Consumes exactly `n` buffered bytes (n <= buffered); copies only when a frame spans chunks. */
    take(n) {
        const first = this.chunks[0];
        let out;
        if (first && first.byteLength >= n) {
            out = first.subarray(0, n);
            if (first.byteLength === n)
                this.chunks.shift();
            else
                this.chunks[0] = first.subarray(n);
        }
        else {
            const all = Buffer.concat(this.chunks, this.buffered);
            out = all.subarray(0, n);
            this.chunks = all.byteLength > n ? [all.subarray(n)] : [];
        }
        this.buffered -= n;
        return out;
    }
}
function checkedMax(max) {
    if (!Number.isInteger(max) || max < 1 || max > 0xffffffff - 2) {
        throw new ActorTsError('invalid_argument', `maxFrameBytes must be an integer in 1..${0xffffffff - 2}, got ${max}`);
    }
    return max;
}
//# sourceMappingURL=frame-codec.js.map