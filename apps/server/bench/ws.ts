/**
 * Stream benchmark (`npm run bench -- ws`). The stream server runs without auth (the gate admits
 * everyone: this measures fan-out, not the handshake). Every client socket lives in a separate
 * child process, so the server's core is not shared with client parsing (the stack guide's
 * numbers were measured that way):
 *
 * 1. Fan-out throughput, for both realistic frame sizes — trade updates (~400 B) and token updates
 *    (~2.5 KB): the same changes pushed to 1,000 subscribers by the stream hub (encode once, prefix
 *    per subscription, one write per socket per batch) and by a naive server (`JSON.stringify` of
 *    the frame per client + `ws.send`, the wire object built once per change as any server holds
 *    it), frames/s delivered (pushing starts → the client process has counted every frame), in
 *    the same run, interleaved, best of 3 each.
 * 2. Ingest-to-client latency at 2,000 trades/s with 1,000 subscribers (each follows one busy
 *    token's trades and the token itself). Events are replayed on wall-clock time: a tick every
 *    10 ms folds every event due by then (~20 swaps and ~4 other events since swaps carry their pool state; after a stall, all that
 *    piled up, in one batch). A sample is one trade frame read by one client; the headline clock
 *    starts when `market.apply` of its batch starts (the service has the event) and stops when the
 *    client process has read the frame's last byte. Also printed: from the tick the swap was
 *    available at (adds event-loop lag: a late timer, a GC pause or a batch still running) and from
 *    the swap's own due time (adds the source's 10 ms batching). Wire frames are unchanged: the
 *    client records (trade id, receive time, its port) and the bench matches ids against its
 *    batches (`tradeIdOf` of the event id), on the shared wall clock (`timeOrigin + now()`).
 *    2 s of replay warm the code first (a running server is warm), then 5 s are measured.
 * 3. RSS per idle connection: a server in a child process, idle clients from this one, RSS
 *    before/after divided by the count.
 *
 * Clients are raw TCP sockets that do the upgrade by hand and walk frame headers (the latency run
 * also reads the trade id of trade frames): cheap, so the server side dominates.
 * `npm run bench -- ws latency` runs the latency part alone with per-stage timers: wall and CPU
 * time of each stage per batch (fold, change drain, trade matching, trade/token encoding, frame
 * building, socket writes — by wrapping the methods that run them), unit costs (per event, per
 * encoding, per write), GC pauses (inside batches or between them), and for the samples where
 * their time went (until their own socket was written, then until the client read them); also the
 * replay window on the clock of `node --cpu-prof` profiles. `ws latency plain` leaves the timers
 * out. `WS_BENCH_ALLOCATIONS=file` also writes an allocation profile of the window (collected
 * objects included). `npm run bench -- ws fanout` runs the fan-out part alone.
 * Last line: one JSON object.
 */
import { fork } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { createServer } from "node:http"
import type { Server } from "node:http"
import { connect, type Socket } from "node:net"
import { PerformanceObserver } from "node:perf_hooks"
import { WebSocketServer } from "ws"
import type { WebSocket } from "ws"
import { tradeIdOf } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import type { MarketEvent, TokenBook, Trade, TradeRecord } from "@spot/domain"
import { Market } from "@spot/application"
import { Encoding } from "@spot/adapters-http"
import { Framing, ownUpgrades, pingSlots, StreamServer } from "@spot/adapters-ws"
import type { Encoders, HandshakeGate, StreamHub } from "@spot/adapters-ws"

const gc = (globalThis as { gc?: () => void }).gc
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
/** Wall clock with sub-millisecond resolution, comparable across processes. */
const wallNow = () => performance.timeOrigin + performance.now()
const admitAll: HandshakeGate = () => ({ admitted: true, keyId: `k${Math.random()}`, requestId: "bench", remaining: 1 })

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)))

const waitUntil = async (done: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!done() && Date.now() < deadline) await sleep(1)
}

// --- raw clients (they run in the client process) ----------------------------------------------

/** `{"type":"update","channel":"spot.` is 33 bytes; the next byte tells trades (`t`+`r`) from tokens. */
const channelByte = 34
const tradeIdMarker = Buffer.from(`"data":{"id":"`)

/** The clients of one server: frame count, and (when tracing) trade ids with their receive times. */
class ClientGroup {
  frames = 0
  target = 0
  onTarget: (() => void) | undefined
  tracing = false
  readonly tradeIds: Array<string> = []
  readonly tradeTimes: Array<number> = []
  readonly tradePorts: Array<number> = []
  readonly clients: Array<RawClient> = []

  counted(): void {
    if (this.target > 0 && this.frames >= this.target) {
      this.target = 0
      this.onTarget?.()
    }
  }
}

/** Every socket of the process reads into this one buffer (`onread`: no allocation per read). */
const readBuffer = Buffer.allocUnsafe(256 * 1024)

class RawClient {
  /** Bytes of an incomplete frame (or handshake response), copied out of the shared read buffer. */
  private partial: Buffer | undefined
  private upgraded = false
  /** This socket's local port: the server's `remotePort` of the connection. */
  port = 0
  private onUpgraded: ((client: RawClient) => void) | undefined
  readonly socket: Socket

  constructor(readonly group: ClientGroup, port: number) {
    this.socket = connect({ port, host: "127.0.0.1", noDelay: true, onread: { buffer: readBuffer, callback: (n: number, buffer: Uint8Array) => this.received(buffer as Buffer, n) } })
  }

  private received(buffer: Buffer, n: number): boolean {
    this.receive(buffer, n)
    return true
  }

  static open(group: ClientGroup, port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const client = new RawClient(group, port)
      client.onUpgraded = resolve
      client.socket.once("error", reject)
      client.socket.once("connect", () =>
        client.socket.write(
          `GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`
        ))
    })
  }

  private receive(buffer: Buffer, n: number): void {
    let data = buffer.subarray(0, n)
    if (this.partial !== undefined) {
      data = Buffer.concat([this.partial, data])
      this.partial = undefined
    }
    if (!this.upgraded) {
      const end = data.indexOf("\r\n\r\n")
      if (end < 0) {
        this.partial = Buffer.from(data)
        return
      }
      this.upgraded = true
      this.port = this.socket.localPort ?? 0
      this.onUpgraded?.(this)
      data = data.subarray(end + 4)
    }
    this.read(data)
  }

  /** Counts whole frames: walks headers, skips payloads (server frames are unmasked). */
  private read(data: Buffer): void {
    const group = this.group
    const receivedAt = group.tracing ? wallNow() : 0
    let at = 0
    for (;;) {
      if (data.length - at < 2) break
      let length = data[at + 1]! & 0x7f
      let header = 2
      if (length === 126) {
        if (data.length - at < 4) break
        length = data.readUInt16BE(at + 2)
        header = 4
      } else if (length === 127) {
        if (data.length - at < 10) break
        length = data.readUInt32BE(at + 6)
        header = 10
      }
      const end = at + header + length
      if (data.length < end) break
      if ((data[at]! & 0x0f) === 0x9) {
        // a keep-alive ping: answered as every WebSocket client does (the server drops a
        // connection that stays silent for a whole ping interval), and not counted
        this.pong(data.subarray(at + header, end))
        at = end
        continue
      }
      if (group.tracing && data[at + header + channelByte] === 0x72) {
        const marker = data.indexOf(tradeIdMarker, at + header)
        if (marker >= 0 && marker < end) {
          const from = marker + tradeIdMarker.length
          group.tradeIds.push(data.toString("latin1", from, data.indexOf(0x22, from)))
          group.tradeTimes.push(receivedAt)
          group.tradePorts.push(this.port)
        }
      }
      at = end
      group.frames++
    }
    // copied: the read buffer is reused by the next read of any socket
    if (at < data.length) this.partial = Buffer.from(data.subarray(at))
    group.counted()
  }

  /** Answers a ping: a masked pong frame with the ping's payload (at most 125 bytes). */
  private pong(payload: Buffer): void {
    const frame = Buffer.alloc(6 + payload.length)
    frame[0] = 0x8a
    frame[1] = 0x80 | payload.length
    // mask 0: the payload goes as is
    payload.copy(frame, 6)
    this.socket.write(frame)
  }

  /** Sends a masked text frame (clients must mask). */
  send(text: string): void {
    const payload = Buffer.from(text)
    const header = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff])
    const mask = Buffer.from([1, 2, 3, 4])
    for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ mask[i & 3]!
    this.socket.write(Buffer.concat([header, mask, payload]))
  }
}

const openClients = async (group: ClientGroup, port: number, n: number) => {
  for (let i = 0; i < n; i += 100) {
    group.clients.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => RawClient.open(group, port)))))
  }
  return group.clients
}

// --- the client process and its remote control -------------------------------------------------

type ClientCommand =
  | { readonly cmd: "open"; readonly group: string; readonly port: number; readonly count: number; readonly subscribe?: ReadonlyArray<ReadonlyArray<string>> }
  | { readonly cmd: "expect"; readonly group: string; readonly frames: number }
  | { readonly cmd: "trace"; readonly group: string }
  | { readonly cmd: "latency"; readonly group: string }
  | { readonly cmd: "close"; readonly group: string }

/** What the clients read while tracing: per trade frame, its id, when it was read, on which port. */
interface TraceResult {
  readonly ids: ReadonlyArray<string>
  readonly times: ReadonlyArray<number>
  readonly ports: ReadonlyArray<number>
}

/** The client process: opens sockets, counts frames, answers when asked. */
const clientProcess = () => {
  const groups = new Map<string, ClientGroup>()
  const groupOf = (name: string) => {
    let group = groups.get(name)
    if (group === undefined) groups.set(name, (group = new ClientGroup()))
    return group
  }
  const reply = (message: unknown) => process.send!(message)
  process.on("message", async (message: ClientCommand) => {
    const group = groupOf(message.group)
    switch (message.cmd) {
      case "open": {
        const clients = await openClients(group, message.port, message.count)
        const subscribe = message.subscribe
        if (subscribe !== undefined) {
          const before = group.frames
          clients.forEach((client, i) => {
            for (const frame of subscribe[i % subscribe.length]!) client.send(frame)
          })
          const acks = clients.reduce((n, _c, i) => n + subscribe[i % subscribe.length]!.length, 0)
          await waitUntil(() => group.frames - before >= acks, 30_000)
        }
        return reply({ opened: group.clients.length })
      }
      case "expect":
        group.onTarget = () => reply({ reached: wallNow(), frames: group.frames })
        group.target = group.frames + message.frames
        return group.counted()
      case "trace":
        group.tracing = true
        return reply({ tracing: true })
      case "latency": {
        group.tracing = false
        const result: TraceResult = { ids: group.tradeIds, times: group.tradeTimes, ports: group.tradePorts }
        return reply(result)
      }
      case "close":
        for (const client of group.clients) client.socket.destroy()
        group.clients.length = 0
        return reply({ closed: true })
    }
  })
  // the bench process is gone (finished or failed): nothing left to answer
  process.on("disconnect", () => process.exit(0))
  reply({ ready: true })
}

/** Remote control of the client process: one command at a time, each answered by one message. */
class Clients {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<Clients> {
    const child = fork(new URL(import.meta.url), ["clients"], { execArgv: ["--import", "tsx"] })
    await new Promise((resolve) => child.once("message", resolve))
    return new Clients(child)
  }

  ask<A>(command: ClientCommand): Promise<A> {
    return new Promise((resolve) => {
      this.child.once("message", (answer) => resolve(answer as A))
      this.child.send(command)
    })
  }

  /** Resolves with the wall time at which the group has counted `frames` more frames. */
  expect(group: string, frames: number): Promise<number> {
    return this.ask<{ reached: number }>({ cmd: "expect", group, frames }).then((a) => a.reached)
  }

  stop(): void {
    this.child.kill()
  }
}

const startStream = async (market: Market.MarketShape, encoders: Encoders = { tokenJson: Encoding.tokenJson, tradeJson: Encoding.tradeJson, encodedTradeJson: Encoding.encodedTradeJson, tradeObjectJson: Encoding.tradeObjectJson, candleJson: Encoding.candleJson, positionJson: Encoding.positionJson }) => {
  const server = createServer()
  const upgrades = ownUpgrades(server)
  const stream = new StreamServer(market, { gate: admitAll, encoders })
  upgrades.route("/v1/stream", stream.handleUpgrade)
  const port = await listen(server)
  return {
    stream,
    port,
    close: async () => {
      await stream.close(50)
      server.close()
    }
  }
}

// --- a market ---------------------------------------------------------------------------------

const warmMarket = (tradesPerSecond: number) => {
  const now = Date.now()
  const simulator = new Simulator.MarketSimulator({ seed: 4, startTime: now - 5 * 60_000, tradesPerSecond, launchesPerMinute: 60 })
  const market = Market.makeMarket()
  market.apply(simulator.runFor(5 * 60_000))
  market.advanceTo(now)
  return market
}

// --- 1. fan-out -------------------------------------------------------------------------------

const subscribers = 1_000
const framesPerBatch = 10
const rounds = 60

interface FanOutResult {
  readonly ours: number
  readonly naive: number
  /** Server CPU (user + system) per delivered frame, µs, in the best round of each. */
  readonly oursCpuUs: number
  readonly naiveCpuUs: number
  readonly frameBytes: number
}

/**
 * One frame kind: `ours` pushes a batch through the hub, `naive` sends the same frames the naive
 * way; both touch the objects first so that each round is a new change (encoded once per change).
 */
interface FanOutCase {
  readonly subscribe: string
  readonly ours: () => void
  readonly naive: (sockets: ReadonlyArray<WebSocket>) => void
}

/** Fails instead of waiting forever when the client process never counts every frame. */
const withDeadline = <A>(promise: Promise<A>, why: () => string, ms = 120_000): Promise<A> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fan-out: not every frame arrived within ${ms / 1000} s; ${why()}`)), ms)
    promise.then((value) => {
      clearTimeout(timer)
      resolve(value)
    })
  })

const fanOutCase = async (clients: Clients, name: string, market: Market.MarketShape, make: (hub: StreamHub) => FanOutCase): Promise<FanOutResult> => {
  const ours = await startStream(market)
  const kind = make(ours.stream.hub)
  await clients.ask({ cmd: "open", group: `${name}-ours`, port: ours.port, count: subscribers, subscribe: [[kind.subscribe]] })
  let frameBytes = 0
  const measureOurs = async () => {
    const written = () => [...ours.stream.hub.connections].reduce((n, c) => n + (c.socket as Socket).bytesWritten, 0)
    const bytesBefore = written()
    const frames = rounds * framesPerBatch * subscribers
    const cpu = process.cpuUsage()
    const start = wallNow()
    const reached = clients.expect(`${name}-ours`, frames)
    for (let r = 0; r < rounds; r++) {
      kind.ours()
      await nextTurn()
    }
    const end = await withDeadline(reached, () =>
      `${ours.stream.connectionCount} of ${subscribers} connections still open (a client that falls more than 1,024 frames behind is closed with 4008: the client process could not keep up — a loaded machine)`)
    const used = process.cpuUsage(cpu)
    frameBytes = (written() - bytesBefore) / frames
    return { perSec: frames / ((end - start) / 1000), cpuUs: (used.user + used.system) / frames }
  }

  const naiveServer = createServer()
  const wss = new WebSocketServer({ server: naiveServer, perMessageDeflate: false })
  const sockets: Array<WebSocket> = []
  wss.on("connection", (ws) => sockets.push(ws))
  const naivePort = await listen(naiveServer)
  await clients.ask({ cmd: "open", group: `${name}-naive`, port: naivePort, count: subscribers })
  await waitUntil(() => sockets.length === subscribers, 10_000)
  const measureNaive = async () => {
    const frames = rounds * framesPerBatch * subscribers
    const cpu = process.cpuUsage()
    const start = wallNow()
    const reached = clients.expect(`${name}-naive`, frames)
    for (let r = 0; r < rounds; r++) {
      kind.naive(sockets)
      await nextTurn()
    }
    const end = await withDeadline(reached, () => `${sockets.filter((ws) => ws.readyState === ws.OPEN).length} of ${subscribers} naive sockets open`)
    const used = process.cpuUsage(cpu)
    return { perSec: frames / ((end - start) / 1000), cpuUs: (used.user + used.system) / frames }
  }

  // interleaved, best of 3 each (the machine is shared)
  let best = { perSec: 0, cpuUs: 0 }
  let naive = { perSec: 0, cpuUs: 0 }
  for (let i = 0; i < 3; i++) {
    const a = await measureOurs()
    if (a.perSec > best.perSec) best = a
    const b = await measureNaive()
    if (b.perSec > naive.perSec) naive = b
  }
  await clients.ask({ cmd: "close", group: `${name}-ours` })
  await clients.ask({ cmd: "close", group: `${name}-naive` })
  await ours.close()
  for (const ws of sockets) ws.terminate()
  wss.close()
  naiveServer.close()
  return { ours: best.perSec, naive: naive.perSec, oursCpuUs: best.cpuUs, naiveCpuUs: naive.cpuUs, frameBytes }
}

const update = (channel: string, data: unknown) => JSON.stringify({ type: "update", channel, subscriptionId: "s1", data })

/** Token updates (~2.5 KB): 10 tokens of one chain change per batch; each subscriber follows all 10. */
const tokenCase = (market: Market.MarketShape) => (hub: StreamHub): FanOutCase => {
  const chain = [...market.engine.allTokens()].find((t) => t.hasMarket)!.chain
  const tokens: Array<TokenBook> = [...market.engine.allTokens()].filter((t) => t.hasMarket && t.chain === chain).slice(0, framesPerBatch)
  const touch = () => {
    for (const token of tokens) token.touch(token.updatedAt + 1)
  }
  return {
    subscribe: JSON.stringify({ action: "subscribe", channel: "spot.tokens", filters: { chain, tokens: tokens.map((t) => t.address) } }),
    ours: () => {
      touch()
      hub.onChanges({ tokens, trades: [], positions: [], leftMemory: [] })
    },
    naive: (sockets) => {
      touch()
      for (const token of tokens) {
        const data = token.toWire()
        for (let i = 0; i < sockets.length; i++) sockets[i]!.send(update("spot.tokens", data))
      }
    }
  }
}

/** Trade updates (~400 B): 10 trades of one token per batch; each subscriber follows the token's trades. */
const tradeCase = (market: Market.MarketShape) => (hub: StreamHub): FanOutCase => {
  const token = [...market.engine.allTokens()].filter((t) => t.hasMarket).sort((a, b) => (b.recentTrades?.size ?? 0) - (a.recentTrades?.size ?? 0))[0]!
  const records: Array<TradeRecord> = [...market.engine.tokenTradePage(token.chain, token.address, null, framesPerBatch).records].reverse()
  // token mode: the REST trade minus flags and platforms (what the naive server would send)
  const tokenModeWire = (record: TradeRecord) => {
    const { flags: _flags, platforms: _platforms, ...rest } = record.trade
    return rest as Trade
  }
  const renew = () => {
    for (const record of records) Encoding.forgetTradeEncoding(record)
  }
  return {
    subscribe: JSON.stringify({ action: "subscribe", channel: "spot.trades", filters: { chain: token.chain, token: token.address } }),
    ours: () => {
      renew()
      hub.onChanges({ tokens: [], trades: records, positions: [], leftMemory: [] })
    },
    naive: (sockets) => {
      renew()
      for (const record of records) {
        const data = tokenModeWire(record)
        for (let i = 0; i < sockets.length; i++) sockets[i]!.send(update("spot.trades", data))
      }
    }
  }
}

const fanOut = async (clients: Clients) => {
  const market = warmMarket(200)
  const trades = await fanOutCase(clients, "trades", market, tradeCase(market))
  const tokens = await fanOutCase(clients, "tokens", market, tokenCase(market))
  return { trades, tokens }
}

// --- 2. latency -------------------------------------------------------------------------------

const targetTradesPerSec = 2_000
const durationMs = 5_000
const warmUpMs = 2_000
const tickMs = 10

/** Stages of a folded batch, in the order they run. */
const stageNames = ["fold", "drain changes", "trades: match+queue", "trades: encode", "candles", "tokens: match+queue", "tokens: encode", "positions", "hub other", "frames: build", "sockets: write", "flush other"] as const
type StageName = (typeof stageNames)[number]

/** One folded batch of the measured window: what it held and where its time went. */
interface BatchTrace {
  /** Wall ms (shared clock) when `market.apply` started, and how long it ran. */
  readonly start: number
  totalMs: number
  cpuMs: number
  /** Performance-clock interval, to attribute GC pauses. */
  readonly perfStart: number
  perfEnd: number
  readonly events: number
  readonly swaps: number
  readonly stages: Record<StageName, number>
  readonly stagesCpu: Record<StageName, number>
  tokenEncodes: number
  tradeEncodes: number
  writes: number
  bytes: number
  gcMs: number
  /** client port → ms after `start` at which each of the connection's socket writes returned. */
  readonly writtenAt: Map<number, Array<number>>
}

/** Process CPU time in ms (user + system; during a batch, nearly all of it is the main thread's). */
const cpuNow = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/**
 * Exclusive (self) time per stage, wall and CPU: a wrapped call's time minus the wrapped calls
 * inside it, added to the current batch. On a shared machine the wall time of a stage includes
 * the time the process waited for a core; the CPU time does not.
 */
class StageClock {
  batch: BatchTrace | undefined
  private readonly starts: Array<number> = []
  private readonly inner: Array<number> = []

  /** Time measured by hand inside a wrapped call: counted to `stage`, not to the caller. */
  add(stage: StageName, wallMs: number, cpuMs: number): void {
    if (this.batch !== undefined) {
      this.batch.stages[stage] += wallMs
      this.batch.stagesCpu[stage] += cpuMs
    }
    const n = this.inner.length
    if (n > 0) {
      this.inner[n - 2]! += wallMs
      this.inner[n - 1]! += cpuMs
    }
  }

  wrap<T extends object>(target: T, name: string, stage: StageName | ((self: any, args: Array<any>) => StageName)): void {
    const original = (target as any)[name] as ((...args: Array<any>) => unknown) | undefined
    if (typeof original !== "function") return
    const clock = this
    ;(target as any)[name] = function(this: unknown, ...args: Array<any>) {
      if (clock.batch === undefined) return original.apply(this, args)
      const named = typeof stage === "string" ? stage : stage(this, args)
      clock.starts.push(performance.now(), cpuNow())
      clock.inner.push(0, 0)
      try {
        return original.apply(this, args)
      } finally {
        const cpu = cpuNow() - clock.starts.pop()!
        const wall = performance.now() - clock.starts.pop()!
        const innerCpu = clock.inner.pop()!
        const innerWall = clock.inner.pop()!
        const n = clock.inner.length
        if (n > 0) {
          clock.inner[n - 2]! += wall
          clock.inner[n - 1]! += cpu
        }
        const batch = clock.batch
        if (batch !== undefined) {
          batch.stages[named] += wall - innerWall
          batch.stagesCpu[named] += cpu - innerCpu
        }
      }
    }
  }
}

/** `PerformanceEntry.detail.kind` of gc entries. */
const gcKinds: Record<number, string> = { 1: "scavenge", 2: "mark-compact", 4: "incremental marking", 8: "weak callbacks" }

const emptyStages = (): Record<StageName, number> => Object.fromEntries(stageNames.map((s) => [s, 0])) as Record<StageName, number>

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN
const sortedCopy = (values: Iterable<number>) => [...values].sort((a, b) => a - b)
const mean = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)

interface LatencySummary {
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
}
const summarize = (values: Iterable<number>): LatencySummary => {
  const sorted = sortedCopy(values)
  return { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? NaN }
}
const fmtSummary = (s: LatencySummary) => `p50 ${s.p50.toFixed(2)}, p90 ${s.p90.toFixed(2)}, p99 ${s.p99.toFixed(2)}, max ${s.max.toFixed(1)} ms`

/**
 * Ingest-to-client latency. Events are replayed at 2,000 swaps/s of wall-clock time: a tick every
 * 10 ms folds every event due by then (after a stall, everything that piled up, in one batch, as
 * a feed read from a queue would). A sample is one trade frame read by one client; its clock
 * starts when `market.apply` of its batch starts (the service has the event). Also reported: from
 * the tick the swap became available at (adds the event-loop lag: a late timer, a GC pause or an
 * earlier batch still running delays a batch that has arrived) and from the swap's own due time
 * (adds the source's 10 ms batching too, not the service's doing).
 * `breakdown`: per-stage timers (wrapped methods) and per-connection write times.
 */
const latency = async (clients: Clients, breakdown: boolean) => {
  // A market with many live tokens, and a stream of future events replayed at 2,000 swaps/s of
  // wall-clock time (the simulator's own rate ramps with its token count).
  const now = Date.now()
  const simulator = new Simulator.MarketSimulator({ seed: 4, startTime: now - 3 * 60_000, tradesPerSecond: 2_000, launchesPerMinute: 600 })
  const market = Market.makeMarket()
  market.apply(simulator.runFor(3 * 60_000))
  // runFor counts from startTime: the next 2 minutes (a small heap: full GCs stay short)
  const future = simulator.runFor(5 * 60_000)
  const durationSwaps = (targetTradesPerSec * (warmUpMs + durationMs)) / 1000
  console.log(`latency run: ${market.engine.stats.tokens} tokens, ${future.filter((e) => e.type === "swap").length} swaps to replay`)
  const clock = new StageClock()
  const encoders = { tokenJson: Encoding.tokenJson, tradeJson: Encoding.tradeJson, encodedTradeJson: Encoding.encodedTradeJson, tradeObjectJson: Encoding.tradeObjectJson, candleJson: Encoding.candleJson, positionJson: Encoding.positionJson }
  if (breakdown) {
    clock.wrap(encoders, "tokenJson", () => {
      if (clock.batch !== undefined) clock.batch.tokenEncodes++
      return "tokens: encode"
    })
    clock.wrap(encoders, "tradeJson", () => {
      if (clock.batch !== undefined) clock.batch.tradeEncodes++
      return "trades: encode"
    })
  }
  const server = await startStream(market, encoders)
  // Busy tokens, round-robin: each client follows one token's trades and the token itself.
  // The 50 tokens that trade most in the replayed window.
  const swapsPerToken = new Map<string, { chain: string; address: string; count: number }>()
  for (let i = 0, swaps = 0; i < future.length && swaps < durationSwaps; i++) {
    const e = future[i]!
    if (e.type !== "swap") continue
    swaps++
    const key = `${e.chain}:${e.token}`
    const entry = swapsPerToken.get(key) ?? { chain: e.chain, address: e.token, count: 0 }
    entry.count++
    swapsPerToken.set(key, entry)
  }
  const busy = [...swapsPerToken.values()].sort((a, b) => b.count - a.count).slice(0, 50)
  const subscribe = busy.map((token) => [
    JSON.stringify({ action: "subscribe", channel: "spot.trades", filters: { chain: token.chain, token: token.address } }),
    JSON.stringify({ action: "subscribe", channel: "spot.tokens", filters: { chain: token.chain, token: token.address } })
  ])
  await clients.ask({ cmd: "open", group: "latency", port: server.port, count: subscribers, subscribe })

  const hub = server.stream.hub
  if (breakdown) {
    // The stages, by the methods that run them (a method a version lacks is simply not timed).
    clock.wrap(market, "apply", "fold")
    clock.wrap(market.engine, "drainChanges", "drain changes")
    clock.wrap(hub, "onChanges", "hub other")
    clock.wrap(hub, "fanOutTrades", "trades: match+queue")
    clock.wrap(hub, "fanOutCandles", "candles")
    clock.wrap(hub, "fanOutTokens", "tokens: match+queue")
    clock.wrap(hub, "fanOutPositions", "positions")
    clock.wrap(hub, "flush", "flush other")
    clock.wrap(Framing.FrameQueue.prototype, "drain", "frames: build")
    for (const connection of hub.connections) {
      const socket = connection.socket as Socket
      const port = socket.remotePort!
      const write = socket.write
      socket.write = function(this: Socket, ...args: Array<any>) {
        const batch = clock.batch
        if (batch === undefined) return (write as any).apply(this, args)
        const t0 = performance.now()
        const c0 = cpuNow()
        const result = (write as any).apply(this, args)
        const c1 = cpuNow()
        const t1 = performance.now()
        clock.add("sockets: write", t1 - t0, c1 - c0)
        batch.writes++
        batch.bytes += (args[0] as Buffer).length
        const at = wallNow() - batch.start
        const times = batch.writtenAt.get(port)
        if (times === undefined) batch.writtenAt.set(port, [at])
        else times.push(at)
        return result
      } as typeof socket.write
    }
  }

  // Replays the events due at 2,000 swaps/s of wall-clock time; a tick every 10 ms.
  let next = 0
  const replay = async (ms: number, onBatch: (batch: ReadonlyArray<MarketEvent>, dueAt: ReadonlyArray<number>, trace: BatchTrace) => void) => {
    const began = wallNow()
    let trades = 0
    for (let tick = 1; wallNow() - began < ms && next < future.length; tick++) {
      const wait = began + tick * tickMs - wallNow()
      await (wait > 0 ? sleep(wait) : nextTurn())
      // the swaps due by now at 2,000/s, with the other events between them
      const due = Math.floor(((wallNow() - began) / 1000) * targetTradesPerSec)
      const from = next
      const dueAt: Array<number> = []
      while (next < future.length && trades < due) {
        if (future[next++]!.type === "swap") dueAt.push(began + (trades++ * 1000) / targetTradesPerSec)
      }
      const batch = future.slice(from, next)
      const trace: BatchTrace = {
        start: 0, totalMs: 0, cpuMs: 0, perfStart: performance.now(), perfEnd: 0, events: batch.length, swaps: dueAt.length,
        stages: emptyStages(), stagesCpu: emptyStages(), tokenEncodes: 0, tradeEncodes: 0, writes: 0, bytes: 0, gcMs: 0, writtenAt: new Map()
      }
      clock.batch = trace
      const cpu = process.cpuUsage()
      ;(trace as { start: number }).start = wallNow()
      market.apply(batch)
      trace.totalMs = wallNow() - trace.start
      trace.perfEnd = performance.now()
      const used = process.cpuUsage(cpu)
      trace.cpuMs = (used.user + used.system) / 1000
      clock.batch = undefined
      onBatch(batch, dueAt, trace)
    }
    return trades / ((wallNow() - began) / 1000)
  }
  // A running server is warm: the first seconds of fan-out run unoptimized code.
  await replay(warmUpMs, () => undefined)
  await clients.ask({ cmd: "trace", group: "latency" })
  gc?.()

  const gcPauses: Array<{ start: number; duration: number; kind: number; inBatch: boolean }> = []
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcPauses.push({ start: entry.startTime, duration: entry.duration, kind: ((entry as { detail?: { kind?: number } }).detail)?.kind ?? 0, inBatch: false })
    }
  })
  gcObserver.observe({ entryTypes: ["gc"] })
  const batches: Array<BatchTrace> = []
  // per trade: its batch and its due time
  const batchOf = new Map<string, number>()
  const dueOf = new Map<string, number>()

  const allocations = process.env.WS_BENCH_ALLOCATIONS === undefined ? undefined : await startAllocationSampling()
  const replayFromUs = process.hrtime.bigint() / 1000n
  const tradesPerSec = await replay(durationMs, (batch, dueAt, trace) => {
    const index = batches.length
    batches.push(trace)
    for (let i = 0, s = 0; i < batch.length; i++) {
      const event = batch[i]!
      if (event.type !== "swap") continue
      const id = tradeIdOf(event.id)
      batchOf.set(id, index)
      dueOf.set(id, dueAt[s++]!)
    }
  })
  // the replay window on the monotonic clock of `--cpu-prof` profiles (µs), to cut the warm-up out
  const replayWindowUs = [Number(replayFromUs), Number(process.hrtime.bigint() / 1000n)] as const
  if (allocations !== undefined) await allocations.stop(process.env.WS_BENCH_ALLOCATIONS!)
  await sleep(500)
  gcObserver.disconnect()
  // GC pauses inside each batch
  for (const pause of gcPauses) {
    for (const b of batches) {
      const overlap = Math.min(b.perfEnd, pause.start + pause.duration) - Math.max(b.perfStart, pause.start)
      if (overlap > 0) {
        b.gcMs += overlap
        pause.inBatch = true
      }
    }
  }
  // Keep-alive: the longest synchronous step of one ping interval for the 1,000 connections (each
  // tick pings one slot's connections), and what pinging all of them in one turn takes (the 30
  // ticks back to back: what a single sweep would cost). The ticks run back to back, before any
  // client's answer to a ping can arrive: every connection is marked alive first, as answering
  // clients are, so that the measured ticks ping and drop nobody.
  const keepAliveMs: Array<number> = []
  for (const connection of hub.connections) connection.alive = true
  for (let i = 0; i < pingSlots; i++) {
    const t0 = performance.now()
    server.stream.keepAliveTick()
    keepAliveMs.push(performance.now() - t0)
  }
  const keepAlive = { longestTickMs: Math.max(...keepAliveMs), allTicksMs: keepAliveMs.reduce((a, b) => a + b, 0), connections: server.stream.connectionCount }
  const received = await clients.ask<TraceResult>({ cmd: "latency", group: "latency" })
  await clients.ask({ cmd: "close", group: "latency" })
  await server.close()

  // samples: apply → read, tick → read, due → read; and for the breakdown, where each went
  const fromApply: Array<number> = []
  const fromTick: Array<number> = []
  const fromDue: Array<number> = []
  const sampleBatch: Array<number> = []
  const samplePort: Array<number> = []
  let unmatched = 0
  for (let i = 0; i < received.ids.length; i++) {
    const index = batchOf.get(received.ids[i]!)
    if (index === undefined) {
      unmatched++
      continue
    }
    const readAt = received.times[i]!
    const due = dueOf.get(received.ids[i]!)!
    const tick = Math.ceil((due - batches[0]!.start) / tickMs) * tickMs + batches[0]!.start
    fromApply.push(readAt - batches[index]!.start)
    fromTick.push(readAt - Math.min(tick, batches[index]!.start))
    fromDue.push(readAt - due)
    sampleBatch.push(index)
    samplePort.push(received.ports[i]!)
  }
  const result = { samples: fromApply.length, unmatched, ...summarize(fromApply), fromTick: summarize(fromTick), fromDue: summarize(fromDue) }
  const applyMs = sortedCopy(batches.map((b) => b.totalMs))

  if (breakdown) {
    const n = batches.length
    const perBatch = (f: (b: BatchTrace) => number) => summarize(batches.map(f))
    const eventsPer = perBatch((b) => b.events)
    const swapsPer = perBatch((b) => b.swaps)
    console.log(
      `batches: ${n} in ${(durationMs / 1000).toFixed(0)} s; events per batch p50 ${eventsPer.p50}, p99 ${eventsPer.p99}, max ${eventsPer.max}; ` +
        `swaps per batch p50 ${swapsPer.p50}, p99 ${swapsPer.p99}, max ${swapsPer.max}; connections written per batch p50 ${perBatch((b) => b.writes).p50}, ` +
        `max ${perBatch((b) => b.writes).max}; token encodings per batch p50 ${perBatch((b) => b.tokenEncodes).p50}, trade encodings p50 ${perBatch((b) => b.tradeEncodes).p50}`
    )
    const rows: Array<[string, (b: BatchTrace) => number, (b: BatchTrace) => number]> = [
      ...stageNames.map((s) => [s, (b: BatchTrace) => b.stages[s], (b: BatchTrace) => b.stagesCpu[s]] as [string, (b: BatchTrace) => number, (b: BatchTrace) => number]),
      ["GC pauses inside", (b) => b.gcMs, () => NaN],
      ["batch total", (b) => b.totalMs, (b) => b.cpuMs]
    ]
    const slowest = [...batches].sort((a, b) => b.totalMs - a.totalMs).slice(0, Math.max(1, Math.ceil(n / 100)))
    const cell = (x: number) => x.toFixed(3).padStart(7)
    console.log(`per-batch stage times, ms — wall: mean | p50 | p99 | mean of the slowest 1% (${slowest.length}) || CPU: mean | p99 | mean of the slowest 1%`)
    for (const [name, wall, cpu] of rows) {
      const w = batches.map(wall)
      const c = batches.map(cpu)
      const ws = summarize(w)
      const cs = summarize(c)
      console.log(`  ${name.padEnd(20)} ${cell(mean(w))} | ${cell(ws.p50)} | ${cell(ws.p99)} | ${cell(mean(slowest.map(wall)))} || ${cell(mean(c))} | ${cell(cs.p99)} | ${cell(mean(slowest.map(cpu)))}`)
    }
    // unit costs: comparable between runs whatever the batches held (CPU, µs)
    const total = (f: (b: BatchTrace) => number) => batches.reduce((a, b) => a + f(b), 0)
    const per = (stage: StageName, count: (b: BatchTrace) => number) => ((1000 * total((b) => b.stagesCpu[stage])) / Math.max(1, total(count))).toFixed(2)
    console.log(
      `unit CPU costs, µs: fold ${per("fold", (b) => b.events)} per event; trades match+queue ${per("trades: match+queue", (b) => b.swaps)} per trade; ` +
        `trade encode ${per("trades: encode", (b) => b.tradeEncodes)} per encoding; token encode ${per("tokens: encode", (b) => b.tokenEncodes)} per encoding; ` +
        `frames build ${per("frames: build", (b) => b.writes)}, socket write ${per("sockets: write", (b) => b.writes)}, flush other ${per("flush other", (b) => b.writes)} per write ` +
        `(${total((b) => b.writes)} writes, ${(total((b) => b.bytes) / Math.max(1, total((b) => b.writes))).toFixed(0)} B each); ` +
        `stream side ${((1000 * total((b) => stageNames.slice(2).reduce((a, s) => a + b.stagesCpu[s], 0))) / Math.max(1, total((b) => b.writes))).toFixed(2)} per write`
    )
    // the slowest samples: when their bytes left the server, and how long the client took to read them
    const order = fromApply.map((_, i) => i).sort((a, b) => fromApply[a]! - fromApply[b]!)
    const describe = (label: string, picked: ReadonlyArray<number>) => {
      const written: Array<number> = []
      const afterWrite: Array<number> = []
      const batchMs: Array<number> = []
      const gcMs: Array<number> = []
      const events: Array<number> = []
      for (const i of picked) {
        const b = batches[sampleBatch[i]!]!
        // the write that carried the frame: the last one before the client read it
        const times = b.writtenAt.get(samplePort[i]!)
        if (times === undefined) continue
        let at = times[0]!
        for (const t of times) if (t <= fromApply[i]! && t > at) at = t
        written.push(at)
        afterWrite.push(fromApply[i]! - at)
        batchMs.push(b.totalMs)
        gcMs.push(b.gcMs)
        events.push(b.events)
      }
      console.log(
        `  ${label.padEnd(18)} apply → own socket written ${mean(written).toFixed(2)} ms (its batch: ${mean(batchMs).toFixed(2)} ms, GC in it ${mean(gcMs).toFixed(2)} ms, ` +
          `${mean(events).toFixed(0)} events), written → client read ${mean(afterWrite).toFixed(2)} ms`
      )
    }
    console.log(`where trade frames' latency went (means):`)
    describe("all samples", order)
    describe("p50-p90", order.slice(Math.floor(order.length * 0.5), Math.floor(order.length * 0.9)))
    describe("slowest 1%", order.slice(Math.floor(order.length * 0.99)))
    gcPauses.sort((a, b) => b.duration - a.duration)
    console.log(
      `GC pauses in the window: ${gcPauses.length}, total ${gcPauses.reduce((a, p) => a + p.duration, 0).toFixed(0)} ms, ` +
        `longest ${gcPauses.slice(0, 8).map((p) => `${p.duration.toFixed(1)} (${gcKinds[p.kind] ?? p.kind}${p.inBatch ? ", in a batch" : ""})`).join(", ")} ms`
    )
  }
  return {
    ...result,
    tradesPerSec,
    replayWindowUs,
    keepAlive,
    slowestApplyMs: applyMs.at(-1) ?? NaN,
    applyP50Ms: percentile(applyMs, 0.5),
    applyP99Ms: percentile(applyMs, 0.99),
    batchCpuMeanMs: mean(batches.map((b) => b.cpuMs)),
    eventsPerBatchP50: percentile(sortedCopy(batches.map((b) => b.events)), 0.5)
  }
}

/** Allocation sampling that keeps collected objects too (what fills the young generation). */
const startAllocationSampling = async () => {
  const { Session } = await import("node:inspector")
  const { writeFileSync } = await import("node:fs")
  const session = new Session()
  session.connect()
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))))
  await post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true })
  return {
    stop: async (file: string) => {
      const { profile } = await post("HeapProfiler.stopSampling")
      writeFileSync(file, JSON.stringify(profile))
      session.disconnect()
    }
  }
}

// --- 3. idle memory ---------------------------------------------------------------------------

const idleConnections = 2_000

/** In a child process: a stream server on an empty market; reports RSS before and after the clients. */
const idleServer = async () => {
  const server = await startStream(Market.makeMarket())
  // warm the code paths with a few connections from this process, then settle
  const warm = await openClients(new ClientGroup(), server.port, 50)
  for (const c of warm) c.socket.destroy()
  await sleep(200)
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc?.()
      await sleep(100)
    }
    return process.memoryUsage().rss
  }
  const before = await settle()
  process.send?.({ port: server.port })
  await waitUntil(() => server.stream.connectionCount === idleConnections, 30_000)
  await sleep(500)
  const after = await settle()
  process.send?.({ perConnection: (after - before) / server.stream.connectionCount })
}

const idleMemory = async (): Promise<number> => {
  const child = fork(new URL(import.meta.url), ["idle-server"], { execArgv: ["--expose-gc", "--import", "tsx"] })
  const group = new ClientGroup()
  const result = await new Promise<number>((resolve) =>
    child.on("message", async (message: { port?: number; perConnection?: number }) => {
      if (message.port !== undefined) await openClients(group, message.port, idleConnections)
      if (message.perConnection !== undefined) resolve(message.perConnection)
    })
  )
  for (const c of group.clients) c.socket.destroy()
  child.kill()
  return result
}

// --- main -------------------------------------------------------------------------------------

const printLatency = (lat: Awaited<ReturnType<typeof latency>>) =>
  console.log(
    `latency at ${Math.round(lat.tradesPerSec)} trades/s, ${subscribers} subscribers (trade frames, apply → client read): ` +
      `p50 ${lat.p50.toFixed(2)} ms, p90 ${lat.p90.toFixed(2)} ms, p99 ${lat.p99.toFixed(2)} ms, max ${lat.max.toFixed(1)} ms ` +
      `(${lat.samples} frames, ${lat.unmatched} unmatched; fold+fan-out per batch p50 ${lat.applyP50Ms.toFixed(2)} ms, ` +
      `p99 ${lat.applyP99Ms.toFixed(2)} ms, max ${lat.slowestApplyMs.toFixed(1)} ms, process CPU mean ${lat.batchCpuMeanMs.toFixed(2)} ms; ` +
      `events per batch p50 ${lat.eventsPerBatchP50})\n` +
      `  from the tick the swap was available at (+ event-loop lag): ${fmtSummary(lat.fromTick)}; ` +
      `from the swap's due time (+ the source's ${tickMs} ms batching): ${fmtSummary(lat.fromDue)}\n` +
      `  keep-alive pings to ${lat.keepAlive.connections} connections: longest tick ${lat.keepAlive.longestTickMs.toFixed(2)} ms ` +
      `(${pingSlots} ticks per interval; all of them in one turn ${lat.keepAlive.allTicksMs.toFixed(2)} ms)`
  )

const printFanOut = (trades: FanOutResult, tokens: FanOutResult) => {
  for (const [name, r] of [["trade", trades], ["token", tokens]] as const) {
    console.log(
      `fan-out of ${name} updates (${Math.round(r.frameBytes)} B frames) to ${subscribers} subscribers: ${Math.round(r.ours)} frames/s (stream hub) ` +
        `vs ${Math.round(r.naive)} frames/s (naive stringify + send): ${(r.ours / r.naive).toFixed(1)}x; ` +
        `server CPU per frame ${r.oursCpuUs.toFixed(2)} µs vs ${r.naiveCpuUs.toFixed(2)} µs`
    )
  }
}

const mode = process.argv[2]
if (mode === "idle-server") {
  await idleServer()
  setInterval(() => undefined, 60_000)
} else if (mode === "clients") {
  clientProcess()
} else if (mode === "fanout") {
  const clients = await Clients.start()
  const { trades, tokens } = await fanOut(clients)
  clients.stop()
  printFanOut(trades, tokens)
  process.exit(0)
} else if (mode === "latency") {
  // `latency plain`: without the per-stage timers
  const clients = await Clients.start()
  const lat = await latency(clients, process.argv[3] !== "plain")
  printLatency(lat)
  console.log(`replay window (monotonic µs, for --cpu-prof): ${lat.replayWindowUs.join(" ")}`)
  clients.stop()
  process.exit(0)
} else {
  // Idle memory first, on a fresh heap.
  const rss = await idleMemory()
  console.log(`RSS per idle connection: ${Math.round(rss)} bytes (${idleConnections} connections)`)
  const clients = await Clients.start()
  const lat = await latency(clients, false)
  printLatency(lat)
  gc?.()
  const { trades, tokens } = await fanOut(clients)
  clients.stop()
  printFanOut(trades, tokens)
  const round2 = (x: number) => Number(x.toFixed(2))
  console.log(JSON.stringify({
    bench: "ws",
    framesPerSec: Math.round(trades.ours),
    naiveFramesPerSec: Math.round(trades.naive),
    speedup: round2(trades.ours / trades.naive),
    p50Ms: Number(lat.p50.toFixed(3)),
    p99Ms: Number(lat.p99.toFixed(3)),
    rssBytesPerIdleConnection: Math.round(rss),
    headline: "trade updates",
    tradeFrameBytes: Math.round(trades.frameBytes),
    tokenFrameBytes: Math.round(tokens.frameBytes),
    tokenFramesPerSec: Math.round(tokens.ours),
    tokenNaiveFramesPerSec: Math.round(tokens.naive),
    tokenSpeedup: round2(tokens.ours / tokens.naive),
    serverCpuUsPerFrame: round2(trades.oursCpuUs),
    naiveServerCpuUsPerFrame: round2(trades.naiveCpuUs),
    tokenServerCpuUsPerFrame: round2(tokens.oursCpuUs),
    tokenNaiveServerCpuUsPerFrame: round2(tokens.naiveCpuUs),
    p90Ms: Number(lat.p90.toFixed(3)),
    tickToReadP99Ms: Number(lat.fromTick.p99.toFixed(3)),
    keepAliveLongestTickMs: round2(lat.keepAlive.longestTickMs),
    maxMs: Number(lat.max.toFixed(1)),
    latencySamples: lat.samples,
    tradesPerSec: Math.round(lat.tradesPerSec),
    targets: { speedup: 8, p99Ms: 10, rssBytesPerIdleConnection: 16_384 }
  }))
  process.exit(0)
}
