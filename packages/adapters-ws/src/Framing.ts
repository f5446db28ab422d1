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
    out[at + 1] = 126
    out.writeUInt16BE(payloadLength, at + 2)
    return at + 4
  }
  out[at + 1] = 127
  out.writeUInt32BE(Math.floor(payloadLength / 4_294_967_296), at + 2)
  out.writeUInt32BE(payloadLength >>> 0, at + 6)
  return at + 10
}

const closingBrace = 0x7d

/**
 * Frames queued for one socket, as parallel arrays: `heads[i]` is a whole JSON text (control
 * frames) or an update prefix, in which case `bodies[i]` is the shared data and a `}` follows.
 * Encodes every queued frame into one buffer for one write.
 */
export class FrameQueue {
  private heads: Array<Buffer> = []
  private bodies: Array<Buffer | undefined> = []

  get length(): number {
    return this.heads.length
  }

  pushUpdate(prefix: Buffer, data: Buffer): void {
    this.heads.push(prefix)
    this.bodies.push(data)
  }

  pushText(text: Buffer): void {
    this.heads.push(text)
    this.bodies.push(undefined)
  }

  clear(): void {
    this.heads.length = 0
    this.bodies.length = 0
  }

  /** Every queued frame, framed, in one buffer; the queue is left empty. */
  drain(): Buffer {
    const heads = this.heads
    const bodies = this.bodies
    const n = heads.length
    let total = 0
    for (let i = 0; i < n; i++) {
      const body = bodies[i]
      const payload = body === undefined ? heads[i]!.length : heads[i]!.length + body.length + 1
      total += headerLength(payload) + payload
    }
    const out = Buffer.allocUnsafe(total)
    let at = 0
    for (let i = 0; i < n; i++) {
      const head = heads[i]!
      const body = bodies[i]
      if (body === undefined) {
        at = writeTextHeader(out, at, head.length)
        at += head.copy(out, at)
      } else {
        at = writeTextHeader(out, at, head.length + body.length + 1)
        at += head.copy(out, at)
        at += body.copy(out, at)
        out[at++] = closingBrace
      }
    }
    heads.length = 0
    bodies.length = 0
    return out
  }
}
