/**
 * Server-to-client WebSocket framing (RFC 6455 §5.2) done by hand, so that one socket write can
 * carry many frames and an update's JSON is copied, never re-encoded, per subscriber.
 *
 * An update frame's text is `prefix + data + "}"`: the prefix
 * (`{"type":"update","channel":…,"subscriptionId":…,"data":`) is encoded once per subscription,
 * the data once per change of the object and shared by every subscriber.
 */

/** Bytes of the frame header of a server frame (unmasked) with this payload length. */
export const headerLength = (payloadLength: number): number => (payloadLength < 126 ? 2 : payloadLength < 65_536 ? 4 : 10)

/** Writes a FIN text-frame header at `at`; returns the offset after it. */
export const writeTextHeader = (out: Buffer, at: number, payloadLength: number): number => {
  out[at] = 0x81
  if (payloadLength < 126) {
    out[at + 1] = payloadLength
    return at + 2
  }
  if (payloadLength < 65_536) {
    // plain byte stores: writeUInt16BE's argument checks cost more than the two bytes
    out[at + 1] = 126
    out[at + 2] = payloadLength >>> 8
    out[at + 3] = payloadLength & 0xff
    return at + 4
  }
  out[at + 1] = 127
  out.writeUInt32BE(Math.floor(payloadLength / 4_294_967_296), at + 2)
  out.writeUInt32BE(payloadLength >>> 0, at + 6)
  return at + 10
}

const closingBrace = 0x7d

/** Queue slots kept between flushes; a bigger backlog's arrays are dropped once drained. */
const keptCapacity = 256

/**
 * Scratch memory for socket writes, so that a flush allocates nothing but the frame bytes' copy.
 * The kernel takes almost every write at once (Node's `socket.write` tries the syscall before it
 * buffers anything); the bytes are then free again, and the next connection's flush reuses them.
 * A write Node has to keep (the socket still holds bytes after it: a slow reader) keeps its slice,
 * and the arena moves on past it — to fresh memory when full; the old block is freed with its
 * last kept write. So a slow reader pins at most one block besides its own write's bytes.
 */
export class WriteArena {
  private block: Buffer
  private used = 0
  private lastTaken = 0

  /** 128 KiB: a batch of ten token updates (~35 KB) fits in half a block. */
  constructor(private readonly blockBytes = 128 * 1024) {
    this.block = Buffer.allocUnsafeSlow(blockBytes)
  }

  /** `length` bytes to fill and write; a write bigger than half a block gets its own memory. */
  take(length: number): Buffer {
    if (length > this.blockBytes >>> 1) {
      this.lastTaken = 0
      return Buffer.allocUnsafe(length)
    }
    if (this.used + length > this.blockBytes) {
      this.block = Buffer.allocUnsafeSlow(this.blockBytes)
      this.used = 0
    }
    const out = this.block.subarray(this.used, this.used + length)
    this.used += length
    this.lastTaken = length
    return out
  }

  /** The bytes of the last `take` were consumed (handed to the kernel): reuse them. */
  releaseLast(): void {
    this.used -= this.lastTaken
    this.lastTaken = 0
  }
}

/**
 * Frames queued for one socket, as parallel arrays: `heads[i]` is a whole JSON text (control
 * frames) or an update prefix, in which case `bodies[i]` is the shared data and a `}` follows.
 * Encodes every queued frame into one buffer for one write. The arrays keep their capacity
 * between flushes (no regrowth per batch) unless a backlog made them big; drained slots are
 * cleared so that shared data is not kept alive by an idle connection.
 */
export class FrameQueue {
  private heads: Array<Buffer | undefined> = []
  private bodies: Array<Buffer | undefined> = []
  private count = 0

  get length(): number {
    return this.count
  }

  pushUpdate(prefix: Buffer, data: Buffer): void {
    this.heads[this.count] = prefix
    this.bodies[this.count++] = data
  }

  pushText(text: Buffer): void {
    this.heads[this.count] = text
    this.bodies[this.count++] = undefined
  }

  clear(): void {
    this.heads = []
    this.bodies = []
    this.count = 0
  }

  /** Every queued frame, framed, in one buffer (from `arena` when given); the queue is left empty. */
  drain(arena?: WriteArena): Buffer {
    const heads = this.heads
    const bodies = this.bodies
    const n = this.count
    let total = 0
    for (let i = 0; i < n; i++) {
      const body = bodies[i]
      const payload = body === undefined ? heads[i]!.length : heads[i]!.length + body.length + 1
      total += headerLength(payload) + payload
    }
    const out = arena === undefined ? Buffer.allocUnsafe(total) : arena.take(total)
    let at = 0
    for (let i = 0; i < n; i++) {
      const head = heads[i]!
      const body = bodies[i]
      // TypedArray#set is a plain memcpy: Buffer#copy's argument handling costs more than a prefix's bytes
      if (body === undefined) {
        at = writeTextHeader(out, at, head.length)
        out.set(head, at)
        at += head.length
      } else {
        at = writeTextHeader(out, at, head.length + body.length + 1)
        out.set(head, at)
        at += head.length
        out.set(body, at)
        at += body.length
        out[at++] = closingBrace
        bodies[i] = undefined
      }
      heads[i] = undefined
    }
    if (n > keptCapacity) {
      this.heads = []
      this.bodies = []
    }
    this.count = 0
    return out
  }
}
