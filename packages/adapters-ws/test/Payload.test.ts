/**
 * Lazy payloads: a change's data is encoded once, when the first connection carrying it is
 * written, never for a connection that closed first, and by the end of its batch at the latest
 * (a socket that must drain keeps its frames queued: they are encoded then, so a frame never
 * carries a later state of its object).
 */
import { describe, expect, it } from "@effect/vitest"
import { Connection, type ConnectionOwner } from "../src/Connection.js"
import { FrameQueue, Payload } from "../src/Framing.js"

/** A payload whose bytes are its state at encoding time, counting encodings. */
class Counted extends Payload {
  encodings = 0
  constructor(public state: string) {
    super()
  }

  protected encode(): Buffer {
    this.encodings++
    return Buffer.from(JSON.stringify(this.state))
  }
}

/** A socket stub: records writes; `needDrain` makes the connection hold its frames until `drain()`. */
const stubSocket = (needDrain = false) => {
  const writes: Array<Buffer> = []
  let onDrain: (() => void) | undefined
  const socket = {
    writableLength: 0,
    writableNeedDrain: needDrain,
    write: (bytes: Buffer) => {
      writes.push(Buffer.from(bytes))
      return true
    },
    once: (event: string, listener: () => void) => {
      if (event === "drain") onDrain = listener
      return socket
    },
    on: () => socket
  }
  const drain = () => {
    socket.writableNeedDrain = false
    onDrain?.()
  }
  return { socket, writes, drain }
}

const stubWs = { close: () => undefined, terminate: () => undefined }

/** The hub's part: remembers dirty connections, flushes them like the hub at the end of a batch. */
const owner = () => {
  const dirty: Array<Connection> = []
  const self: ConnectionOwner & { flush: () => void } = {
    markDirty: (connection) => {
      connection.dirty = true
      dirty.push(connection)
    },
    dropConnection: () => undefined,
    flush: () => {
      for (const connection of dirty.splice(0)) connection.flush()
    }
  }
  return self
}

const connection = (hub: ConnectionOwner, needDrain = false) => {
  const { socket, writes, drain } = stubSocket(needDrain)
  return { connection: new Connection(stubWs as never, socket as never, "k", hub, 1_024), writes, drain }
}

const prefix = Buffer.from(`{"data":`)
/** A text frame as the server writes it (short payloads: a 2-byte header). */
const frame = (text: string) => `\x81${String.fromCharCode(text.length)}${text}`

describe("Payload", () => {
  it("is encoded once for every connection that writes it, and not at all for a closed one", () => {
    const hub = owner()
    const a = connection(hub)
    const b = connection(hub)
    const closed = connection(hub)
    const shared = new Counted("v1")
    const unread = new Counted("never")
    a.connection.enqueueUpdate(prefix, shared)
    b.connection.enqueueUpdate(prefix, shared)
    closed.connection.enqueueUpdate(prefix, unread)
    closed.connection.markClosed()
    expect(shared.encodings).toBe(0)
    hub.flush()
    expect(shared.encodings).toBe(1)
    expect(unread.encodings).toBe(0)
    expect(a.writes.map((w) => w.toString("latin1"))).toEqual([frame(`{"data":"v1"}`)])
    expect(b.writes.map((w) => w.toString("latin1"))).toEqual([frame(`{"data":"v1"}`)])
  })

  it("held by a socket that must drain, is encoded at the end of its batch with the state of its batch", () => {
    const hub = owner()
    const held = connection(hub, true)
    const payload = new Counted("batch 1")
    held.connection.enqueueUpdate(prefix, payload)
    hub.flush()
    expect(held.writes).toEqual([])
    expect(payload.encodings).toBe(1)
    // the object moves on; the queued frame keeps the state it was queued with
    payload.state = "batch 2"
    held.drain()
    expect(payload.encodings).toBe(1)
    expect(held.writes.map((w) => w.toString("latin1"))).toEqual([frame(`{"data":"batch 1"}`)])
  })

  it("a queue drains payloads and bytes alike, and settle() encodes what stays queued", () => {
    const queue = new FrameQueue()
    const payload = new Counted("x")
    queue.pushUpdate(prefix, Buffer.from(`"bytes"`))
    queue.pushUpdate(prefix, payload)
    queue.settle()
    expect(payload.encodings).toBe(1)
    queue.settle()
    expect(payload.encodings).toBe(1)
    expect(queue.drain().toString("latin1")).toBe(frame(`{"data":"bytes"}`) + frame(`{"data":"x"}`))
  })
})
