/**
 * GET /v1/stream: the handshake (admission before the upgrade, the per-key connection cap), the
 * client frames (subscribe, unsubscribe, ping), keep-alive and the key re-check. Fan-out is the
 * hub's. The `ws` package does the WebSocket protocol (handshake, client frame parsing, control
 * frames); update frames are framed and written by the connection itself (Framing.ts).
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage } from "node:http"
import type { Duplex } from "node:stream"
import { WebSocket, WebSocketServer } from "ws"
import type { MarketShape } from "@spot/application"
import { CloseCode, Connection } from "./Connection.js"
import type { Admitted, HandshakeGate, KeyRecheck, Verdict } from "./Handshake.js"
import { envelope, malformedUpgrade, refuse, webSocketVersions } from "./Handshake.js"
import type { Encoders } from "./StreamHub.js"
import { StreamHub } from "./StreamHub.js"
import { parseSubscription } from "./SubscribeFilters.js"

export interface StreamLimits {
  /** Open connections per API key (spec: 100). */
  readonly connectionsPerKey: number
  /** Subscriptions per connection (spec: 100). */
  readonly subscriptionsPerConnection: number
  /** Unsent frames per connection before it is closed with 4008 (spec: 1,024). */
  readonly unsentFramesPerConnection: number
  /** Retry-After of a handshake refused for the connection cap (waiting alone frees no slot). */
  readonly connectionCapRetryAfterSeconds: number
  /** Protocol ping interval; a connection silent for a whole interval after a ping is dropped. */
  readonly pingIntervalMs: number
  /** How often the keys of open connections are checked again (revoked/expired: close 4001). */
  readonly keyRecheckMs: number
  /** Largest client frame accepted (bigger: ws closes with 1009). */
  readonly maxClientFrameBytes: number
}

export const specLimits: StreamLimits = {
  connectionsPerKey: 100,
  subscriptionsPerConnection: 100,
  unsentFramesPerConnection: 1_024,
  connectionCapRetryAfterSeconds: 10,
  pingIntervalMs: 30_000,
  keyRecheckMs: 60_000,
  maxClientFrameBytes: 64 * 1024
}

/**
 * Keep-alive ticks per ping interval: each connection belongs to one slot (round robin at open)
 * and is pinged on its slot's tick, once per interval.
 */
export const pingSlots = 30

export interface StreamServerOptions {
  readonly gate: HandshakeGate
  readonly encoders: Encoders
  readonly limits?: Partial<StreamLimits>
}

interface KeySlots {
  readonly connections: Set<Connection>
  /** Handshakes admitted and still upgrading (they hold a slot too). */
  pending: number
  recheck: KeyRecheck | undefined
}

const connectionOf = Symbol("spot.connection")
const admissionOf = Symbol("spot.admission")
type TaggedSocket = WebSocket & { [connectionOf]?: Connection }
type TaggedRequest = IncomingMessage & { [admissionOf]?: Admitted }

const maxClientIdLength = 128

export class StreamServer {
  readonly hub: StreamHub
  readonly limits: StreamLimits
  private readonly wss: WebSocketServer
  private readonly keys = new Map<string, KeySlots>()
  private readonly timers: Array<ReturnType<typeof setInterval>> = []
  private readonly gate: HandshakeGate
  private closing = false
  /** The keep-alive slot of the next tick, and of the next connection (round robin). */
  private pingTick = 0
  private nextPingSlot = 0

  constructor(market: MarketShape, options: StreamServerOptions) {
    this.limits = { ...specLimits, ...options.limits }
    this.gate = options.gate
    this.hub = new StreamHub(market, options.encoders)
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: this.limits.maxClientFrameBytes,
      // The stream speaks no subprotocol: agree to none a client offers (ws would otherwise echo
      // the first one, telling a client probing for "graphql-ws" that it is spoken)
      handleProtocols: () => false
    })
    this.wss.on("headers", (headers: Array<string>, request: TaggedRequest) => {
      const admission = request[admissionOf]
      if (admission !== undefined) {
        headers.push(`X-Request-ID: ${admission.requestId}`, `X-RateLimit-Remaining: ${admission.remaining}`)
      }
    })
    this.timers.push(setInterval(() => this.keepAliveTick(), Math.max(1, Math.floor(this.limits.pingIntervalMs / pingSlots))).unref())
    this.timers.push(setInterval(() => void this.recheckKeys(), this.limits.keyRecheckMs).unref())
  }

  get connectionCount(): number {
    return this.hub.connections.size
  }

  /** The Node `upgrade` listener for the stream path. */
  readonly handleUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on("error", ignore)
    if (this.closing) {
      socket.destroy()
      return
    }
    let verdict: Verdict | Promise<Verdict>
    try {
      verdict = this.gate(request)
    } catch {
      verdict = internalRefusal()
    }
    if (verdict instanceof Promise) {
      verdict.then(
        (v) => this.admit(v, request, socket, head),
        () => this.admit(internalRefusal(), request, socket, head)
      )
    } else this.admit(verdict, request, socket, head)
  }

  private admit(verdict: Verdict, request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (socket.destroyed) return
    if (!verdict.admitted) return refuse(socket, verdict)
    const malformed = malformedUpgrade(request)
    if (malformed !== undefined) {
      return refuse(socket, {
        admitted: false,
        status: 400,
        headers: {
          "X-Request-ID": verdict.requestId,
          "X-RateLimit-Remaining": String(verdict.remaining),
          ...(malformed.field === "Sec-WebSocket-Version" ? { "Sec-WebSocket-Version": webSocketVersions } : {})
        },
        body: envelope("VALIDATION_ERROR", `Invalid WebSocket handshake: ${malformed.message}. Fix the request and retry.`, [malformed])
      })
    }
    let slots = this.keys.get(verdict.keyId)
    if (slots === undefined) {
      slots = { connections: new Set(), pending: 0, recheck: verdict.recheck }
      this.keys.set(verdict.keyId, slots)
    }
    if (slots.connections.size + slots.pending >= this.limits.connectionsPerKey) {
      return refuse(socket, {
        admitted: false,
        status: 429,
        headers: {
          "X-Request-ID": verdict.requestId,
          "X-RateLimit-Remaining": String(verdict.remaining),
          "Retry-After": String(this.limits.connectionCapRetryAfterSeconds)
        },
        body: connectionCapBody(this.limits.connectionsPerKey)
      })
    }
    slots.pending++
    const keySlots = slots
    let settled = false
    const release = () => {
      if (settled) return
      settled = true
      keySlots.pending--
      this.releaseKey(verdict.keyId, keySlots)
    }
    // Checked above as ws checks it; should ws still refuse the upgrade, it answers itself and never calls back.
    socket.once("close", release)
    ;(request as TaggedRequest)[admissionOf] = verdict
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      socket.off("close", release)
      settled = true
      keySlots.pending--
      this.open(ws as TaggedSocket, socket, verdict, keySlots)
    })
  }

  private open(ws: TaggedSocket, socket: Duplex, admission: Admitted, slots: KeySlots): void {
    const connection = new Connection(ws, socket, admission.keyId, this.hub, this.limits.unsentFramesPerConnection)
    connection.pingSlot = this.nextPingSlot
    this.nextPingSlot = (this.nextPingSlot + 1) % pingSlots
    ws[connectionOf] = connection
    slots.connections.add(connection)
    connection.onClosed = this.releaseSlot
    this.hub.addConnection(connection)
    ws.on("message", onMessage)
    ws.on("pong", onHeard)
    // A client's own protocol ping is a sign of life too (docs/streams.md: clients may send them);
    // a client that pings but leaves the server's pings unanswered was dropped every 30-60 s.
    ws.on("ping", onHeard)
    ws.on("error", ignore)
    ws.on("close", onClose)
    ;(ws as unknown as { server: StreamServer }).server = this
    if (this.closing) connection.close(CloseCode.goingAway, "server shutting down")
  }

  /** @internal called when a connection's socket has closed. */
  connectionClosed(connection: Connection): void {
    connection.markClosed()
  }

  /**
   * A connection counts against its key until it closes: when the server decides to close it (its
   * close frame may wait behind a stalled reader's full buffer until ws gives up, 30 s later) or
   * when its socket closes, whichever comes first.
   */
  private readonly releaseSlot = (connection: Connection): void => {
    const slots = this.keys.get(connection.keyId)
    if (slots !== undefined && slots.connections.delete(connection)) this.releaseKey(connection.keyId, slots)
  }

  private releaseKey(keyId: string, slots: KeySlots): void {
    if (slots.connections.size === 0 && slots.pending === 0 && this.keys.get(keyId) === slots) this.keys.delete(keyId)
  }

  // --- client frames --------------------------------------------------------------------------

  /** @internal one client frame. */
  receive(connection: Connection, data: Buffer | ArrayBuffer | Array<Buffer>, isBinary: boolean): void {
    connection.alive = true
    if (connection.closed) return
    if (isBinary) return this.refuseFrame(connection, undefined, "frame", "binary frames are not accepted: send JSON text frames")
    let frame: unknown
    try {
      frame = JSON.parse(Array.isArray(data) ? Buffer.concat(data).toString() : data.toString())
    } catch {
      return this.refuseFrame(connection, undefined, "frame", "is not valid JSON")
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      return this.refuseFrame(connection, undefined, "frame", "must be a JSON object with an action")
    }
    const f = frame as Record<string, unknown>
    const rawId = f.id
    if (rawId !== undefined && (typeof rawId !== "string" || rawId.length > maxClientIdLength)) {
      return this.refuseFrame(connection, undefined, "id", `id must be a string of at most ${maxClientIdLength} characters`)
    }
    const id = rawId as string | undefined
    switch (f.action) {
      case "subscribe":
        return this.onSubscribe(connection, f, id)
      case "unsubscribe":
        return this.onUnsubscribe(connection, f, id)
      case "ping":
        if (!this.onlyFields(connection, f, id, pingFields)) return
        connection.enqueueText(JSON.stringify(id === undefined ? { type: "pong", time: Date.now() } : { type: "pong", id, time: Date.now() }))
        return this.hub.flush()
      default:
        return this.refuseFrame(connection, id, "action", "action must be subscribe, unsubscribe or ping")
    }
  }

  private onSubscribe(connection: Connection, frame: Record<string, unknown>, id: string | undefined): void {
    if (!this.onlyFields(connection, frame, id, subscribeFields)) return
    const parsed = parseSubscription(frame.channel, frame.filters)
    if (!parsed.ok) return this.sendError(connection, id, parsed.refusal.code, parsed.refusal.message, parsed.refusal.details)
    const limit = this.limits.subscriptionsPerConnection
    if (connection.subscriptions.size >= limit) {
      return this.sendError(
        connection,
        id,
        "RATE_LIMITED",
        `This connection already holds ${limit} subscriptions, the most allowed. Unsubscribe one, or open another connection.`,
        { limit }
      )
    }
    const subscription = this.hub.subscribe(connection, parsed.spec)
    const ack = id === undefined
      ? { type: "subscribed", channel: parsed.spec.channel, subscriptionId: subscription.id }
      : { type: "subscribed", channel: parsed.spec.channel, subscriptionId: subscription.id, id }
    connection.enqueueText(JSON.stringify(ack))
    this.hub.flush()
  }

  private onUnsubscribe(connection: Connection, frame: Record<string, unknown>, id: string | undefined): void {
    if (!this.onlyFields(connection, frame, id, unsubscribeFields)) return
    const subscriptionId = frame.subscriptionId
    if (typeof subscriptionId !== "string") {
      return this.refuseFrame(connection, id, "subscriptionId", "subscriptionId is required: the id from the subscribed frame")
    }
    if (!this.hub.unsubscribe(connection, subscriptionId)) {
      return this.refuseFrame(connection, id, "subscriptionId", `no subscription ${JSON.stringify(subscriptionId.slice(0, 64))} on this connection`)
    }
    connection.enqueueText(JSON.stringify(id === undefined ? { type: "unsubscribed", subscriptionId } : { type: "unsubscribed", subscriptionId, id }))
    this.hub.flush()
  }

  private onlyFields(connection: Connection, frame: Record<string, unknown>, id: string | undefined, allowed: ReadonlyArray<string>): boolean {
    const unknown = Object.keys(frame).filter((k) => !allowed.includes(k))
    if (unknown.length === 0) return true
    this.sendError(
      connection,
      id,
      "VALIDATION_ERROR",
      // worded as every other refused frame (`refuseFrame`)
      `The frame was refused: ${unknown.join(", ")}: not ${unknown.length === 1 ? "a field" : "fields"} of a ${String(frame.action)} frame (it takes ${allowed.join(", ")}).`,
      unknown.map((field) => ({ field, message: `${field} is not a field of a ${String(frame.action)} frame` }))
    )
    return false
  }

  private refuseFrame(connection: Connection, id: string | undefined, field: string, message: string): void {
    this.sendError(connection, id, "VALIDATION_ERROR", `The frame was refused: ${field}: ${message}.`, [{ field, message }])
  }

  private sendError(connection: Connection, id: string | undefined, code: string, message: string, details?: unknown): void {
    const error = details === undefined ? { code, message } : { code, message, details }
    connection.enqueueText(JSON.stringify(id === undefined ? { type: "error", error } : { type: "error", id, error }))
    this.hub.flush()
  }

  // --- keep-alive, key re-check, shutdown -----------------------------------------------------

  /**
   * One keep-alive tick (every `pingIntervalMs / pingSlots`): pings the connections of this tick's
   * slot, so each connection is pinged once per `pingIntervalMs` and a connection that sent
   * nothing since its previous ping is dropped. Pinging every connection in one turn held the
   * event loop for one socket write per connection (23 ms for 1,000 connections in the stream
   * bench: every batch and request waited); a tick writes to a `pingSlots`-th of them.
   */
  keepAliveTick(): void {
    const slot = this.pingTick
    this.pingTick = (slot + 1) % pingSlots
    for (const connection of this.hub.connections) {
      if (connection.pingSlot !== slot) continue
      if (!connection.alive) {
        connection.terminate()
        continue
      }
      connection.alive = false
      try {
        connection.ws.ping()
      } catch {
        connection.terminate()
      }
    }
  }

  /** Closes the connections of keys revoked or expired since their handshake (close code 4001). */
  async recheckKeys(): Promise<void> {
    for (const [keyId, slots] of [...this.keys]) {
      if (slots.recheck === undefined || slots.connections.size === 0) continue
      let usable: boolean | undefined
      try {
        usable = await slots.recheck()
      } catch {
        usable = undefined
      }
      if (usable !== false) continue
      for (const connection of [...slots.connections]) connection.close(CloseCode.keyRevoked, "the API key was revoked or has expired")
    }
  }

  /** Stops accepting, closes every connection with 1001, and stops listening to the market. */
  async close(graceMs = 500): Promise<void> {
    this.closing = true
    for (const timer of this.timers) clearInterval(timer)
    this.hub.stop()
    const open = [...this.hub.connections].map((c) => c.ws)
    for (const connection of [...this.hub.connections]) connection.close(CloseCode.goingAway, "server shutting down")
    if (open.length > 0) {
      await new Promise<void>((resolve) => {
        let remaining = open.length
        const timer = setTimeout(() => {
          for (const ws of open) ws.terminate()
          resolve()
        }, graceMs)
        for (const ws of open) {
          if (ws.readyState === WebSocket.CLOSED) remaining--
          else ws.once("close", () => {
            if (--remaining === 0) {
              clearTimeout(timer)
              resolve()
            }
          })
        }
        if (remaining === 0) {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
  }
}

const subscribeFields = ["action", "channel", "filters", "id"]
const unsubscribeFields = ["action", "subscriptionId", "id"]
const pingFields = ["action", "id"]

function ignore(): void {}

// Shared listeners (`this` is the WebSocket): no closure per connection.
function onMessage(this: TaggedSocket, data: Buffer | ArrayBuffer | Array<Buffer>, isBinary: boolean): void {
  const connection = this[connectionOf]
  if (connection !== undefined) (this as unknown as { server: StreamServer }).server.receive(connection, data, isBinary)
}

/** A pong, or the client's own ping: the connection is alive. */
function onHeard(this: TaggedSocket): void {
  const connection = this[connectionOf]
  if (connection !== undefined) connection.alive = true
}

function onClose(this: TaggedSocket): void {
  const connection = this[connectionOf]
  if (connection !== undefined) (this as unknown as { server: StreamServer }).server.connectionClosed(connection)
}

const internalRefusal = (): Verdict => ({
  admitted: false,
  status: 500,
  headers: { "X-Request-ID": randomUUID() },
  body: envelope("INTERNAL_ERROR", "Unexpected server failure. Retry later; if it persists, report the X-Request-ID.")
})

const connectionCapBody = (limit: number): string =>
  envelope(
    "RATE_LIMITED",
    `This API key already has ${limit} open stream connections, the most allowed. Close one of them first: ` +
      "waiting alone frees no slot; Retry-After only says how long to wait before asking again."
  )
