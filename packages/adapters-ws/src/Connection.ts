/**
 * One open stream connection: its subscriptions and its outbound frames. Frames are queued as
 * references (a subscription's prefix, a change's shared data) and written in one buffer per
 * flush; the hub flushes every connection it queued to once per folded batch.
 *
 * Backpressure (spec "Limits"): frames queued here plus frames handed to the socket but not yet
 * flushed to the kernel are "unsent". While the socket asks to drain nothing more is written, so
 * Node's buffer holds at most one batch; past `maxUnsentFrames` the connection is closed with 4008.
 * A slow reader therefore costs a bounded amount of memory and never delays anyone else.
 */
import type { Duplex } from "node:stream"
import type { WebSocket } from "ws"
import { FrameQueue, WriteArena } from "./Framing.js"
import type { SubscriptionSpec } from "./SubscribeFilters.js"

/** Close codes this service uses (docs/streams.md). */
export const CloseCode = {
  /** Server shutting down. */
  goingAway: 1001,
  /** The API key was revoked or expired while the connection was open. */
  keyRevoked: 4001,
  /** More unsent frames than the limit: the client reads too slowly. */
  tooManyUnsentFrames: 4008
} as const

export interface Subscription {
  readonly id: string
  readonly spec: SubscriptionSpec
  readonly connection: Connection
  /** `{"type":"update","channel":…,"subscriptionId":…,"data":` encoded once. */
  readonly prefix: Buffer
}

export interface ConnectionOwner {
  /** Queues the connection for the next flush. */
  readonly markDirty: (connection: Connection) => void
  /** The connection is closing: drop its subscriptions now. */
  readonly dropConnection: (connection: Connection) => void
}

/** Frames written in one go when a batch queues this many for one connection (fast readers never pile up). */
const flushEvery = 128

/** Scratch memory of every flush: JavaScript runs one flush at a time, so the process needs one. */
const arena = new WriteArena()

export class Connection {
  readonly subscriptions = new Map<string, Subscription>()
  /** Set by any inbound frame or pong; cleared by each keep-alive ping. */
  alive = true
  dirty = false
  closed = false
  /** Keep-alive slot: pinged on this slot's tick (StreamServer.keepAliveTick). */
  pingSlot = 0
  private readonly queue = new FrameQueue()
  /**
   * Writes whose bytes may still sit in Node's socket buffer, oldest first, as [bytes, frames]
   * pairs from `head` on. The socket flushes in order, so its `writableLength` buffered bytes are
   * the newest ones: older writes are gone to the kernel.
   */
  private written: Array<number> = []
  private writtenHead = 0
  private writtenBytes = 0
  private writtenFrames = 0
  private waitingDrain = false
  private subscriptionSeq = 0
  /**
   * Called once when the connection closes, from the server's decision to close it (4008, 4001,
   * 1001, a dead peer) or from its socket closing: its key's connection slot is free from then on.
   */
  onClosed: ((connection: Connection) => void) | undefined = undefined

  constructor(
    readonly ws: WebSocket,
    readonly socket: Duplex,
    readonly keyId: string,
    private readonly owner: ConnectionOwner,
    private readonly maxUnsentFrames: number
  ) {}

  /** Frames not yet handed to the kernel: queued here, or buffered in Node's socket. */
  get unsentFrames(): number {
    return this.queue.length + this.framesInSocketBuffer()
  }

  nextSubscriptionId(): string {
    return `s${++this.subscriptionSeq}`
  }

  enqueueUpdate(prefix: Buffer, data: Buffer): void {
    if (this.closed) return
    if (this.queue.length + this.framesInSocketBuffer() >= this.maxUnsentFrames) return this.overflow()
    this.queue.pushUpdate(prefix, data)
    this.queued()
  }

  enqueueText(text: string): void {
    if (this.closed) return
    if (this.queue.length + this.framesInSocketBuffer() >= this.maxUnsentFrames) return this.overflow()
    this.queue.pushText(Buffer.from(text))
    this.queued()
  }

  private queued(): void {
    if (this.queue.length >= flushEvery) this.write()
    else if (!this.dirty) this.owner.markDirty(this)
  }

  /** Writes every queued frame in one socket write, unless the socket must drain first. */
  flush(): void {
    this.dirty = false
    this.write()
  }

  private write(): void {
    if (this.closed || this.queue.length === 0 || this.waitingDrain) return
    if (this.socket.writableNeedDrain) {
      this.waitingDrain = true
      this.socket.once("drain", this.onDrain)
      return
    }
    const frames = this.queue.length
    const bytes = this.queue.drain(arena)
    const socket = this.socket
    socket.write(bytes)
    // Usually the kernel took it all: nothing to track, and the arena's bytes are free again.
    if (socket.writableLength === 0) {
      arena.releaseLast()
      if (this.writtenFrames !== 0) this.forgetWritten()
      return
    }
    this.written.push(bytes.length, frames)
    this.writtenBytes += bytes.length
    this.writtenFrames += frames
  }

  private framesInSocketBuffer(): number {
    if (this.writtenFrames === 0) return 0
    const buffered = this.socket.writableLength
    if (buffered === 0) {
      this.forgetWritten()
      return 0
    }
    const written = this.written
    while (this.writtenHead < written.length && this.writtenBytes - written[this.writtenHead]! >= buffered) {
      this.writtenBytes -= written[this.writtenHead]!
      this.writtenFrames -= written[this.writtenHead + 1]!
      this.writtenHead += 2
    }
    if (this.writtenHead > 256) {
      this.written = written.slice(this.writtenHead)
      this.writtenHead = 0
    }
    return this.writtenFrames
  }

  /** The socket's buffer is empty: every tracked write went to the kernel. */
  private forgetWritten(): void {
    this.written = []
    this.writtenHead = 0
    this.writtenBytes = 0
    this.writtenFrames = 0
  }

  /** Closes with a close frame (after what is already handed to the socket). */
  close(code: number, reason: string): void {
    if (this.closed) return
    this.markClosed()
    try {
      this.ws.close(code, reason)
    } catch {
      this.ws.terminate()
    }
  }

  /** Drops the connection without a close handshake (dead peer). */
  terminate(): void {
    this.markClosed()
    this.ws.terminate()
  }

  /** Subscriptions end and queued frames are dropped (spec: subscriptions end with the connection). */
  markClosed(): void {
    if (this.closed) return
    this.closed = true
    this.queue.clear()
    this.owner.dropConnection(this)
    this.onClosed?.(this)
  }

  private overflow(): void {
    this.close(CloseCode.tooManyUnsentFrames, "more than the allowed unsent frames: read faster or subscribe to less")
  }

  private readonly onDrain = (): void => {
    this.waitingDrain = false
    this.write()
  }
}
