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
 *    token's trades and the token itself): from `market.apply` of a batch until the client process
 *    has read a trade's whole frame. Wire frames are unchanged: the client records (trade id,
 *    receive time) and the bench matches ids against the time it applied the swap that made the
 *    trade (`tradeIdOf` of the event id), on the shared wall clock (`timeOrigin + now()`).
 *    2 s of replay warm the code first (a running server is warm), then 5 s are measured.
 * 3. RSS per idle connection: a server in a child process, idle clients from this one, RSS
 *    before/after divided by the count.
 *
 * Clients are raw TCP sockets that do the upgrade by hand and walk frame headers (the latency run
 * also reads the trade id of trade frames): cheap, so the server side dominates.
 * `npm run bench -- ws latency` runs the latency part alone and prints where the slowest batches'
 * time went (wall vs process CPU, fan-out, GC pauses) and the replay window on the clock of
 * `node --cpu-prof` profiles; `WS_BENCH_ALLOCATIONS=file` also writes an allocation profile of
 * the window (collected objects included). `npm run bench -- ws fanout` runs the fan-out part alone.
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
import { Simulator, tradeIdOf } from "@spot/domain"
import type { MarketEvent, TokenBook, Trade, TradeRecord } from "@spot/domain"
import { Market } from "@spot/application"
import { Encoding } from "@spot/adapters-http"
import { ownUpgrades, StreamServer } from "@spot/adapters-ws"
import type { HandshakeGate, StreamHub } from "@spot/adapters-ws"

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
      if (group.tracing && data[at + header + channelByte] === 0x72) {
        const marker = data.indexOf(tradeIdMarker, at + header)
        if (marker >= 0 && marker < end) {
          const from = marker + tradeIdMarker.length
          group.tradeIds.push(data.toString("latin1", from, data.indexOf(0x22, from)))
          group.tradeTimes.push(receivedAt)
        }
      }
      at = end
      group.frames++
    }
    // copied: the read buffer is reused by the next read of any socket
    if (at < data.length) this.partial = Buffer.from(data.subarray(at))
    group.counted()
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
  | { readonly cmd: "latency"; readonly group: string; readonly ids: ReadonlyArray<string>; readonly times: ReadonlyArray<number> }
  | { readonly cmd: "close"; readonly group: string }

interface LatencyResult {
  readonly samples: number
  readonly unmatched: number
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
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
        const sentAt = new Map<string, number>()
        for (let i = 0; i < message.ids.length; i++) sentAt.set(message.ids[i]!, message.times[i]!)
        const samples: Array<number> = []
        let unmatched = 0
        for (let i = 0; i < group.tradeIds.length; i++) {
          const sent = sentAt.get(group.tradeIds[i]!)
          if (sent === undefined) unmatched++
          else samples.push(group.tradeTimes[i]! - sent)
        }
        samples.sort((a, b) => a - b)
        const pct = (p: number) => samples[Math.min(samples.length - 1, Math.floor(samples.length * p))] ?? NaN
        const result: LatencyResult = { samples: samples.length, unmatched, p50: pct(0.5), p90: pct(0.9), p99: pct(0.99), max: samples.at(-1) ?? NaN }
        return reply(result)
      }
      case "close":
        for (const client of group.clients) client.socket.destroy()
        group.clients.length = 0
        return reply({ closed: true })
    }
  })
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

const startStream = async (market: Market.MarketShape) => {
  const server = createServer()
  const upgrades = ownUpgrades(server)
  const stream = new StreamServer(market, { gate: admitAll, encoders: { tokenJson: Encoding.tokenJson, tradeJson: Encoding.tradeJson } })
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
    const end = await reached
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
    const end = await reached
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
      hub.onChanges({ tokens, trades: [], positions: [] })
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
    for (const record of records) record.json = undefined
  }
  return {
    subscribe: JSON.stringify({ action: "subscribe", channel: "spot.trades", filters: { chain: token.chain, token: token.address } }),
    ours: () => {
      renew()
      hub.onChanges({ tokens: [], trades: records, positions: [] })
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

const latency = async (clients: Clients) => {
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
  const server = await startStream(market)
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

  // Replays the events due at 2,000 swaps/s of wall-clock time, one batch per tick.
  let next = 0
  const replay = async (ms: number, onBatch: (batch: ReadonlyArray<MarketEvent>, start: number, took: number, cpuMs: number) => void) => {
    const began = performance.now()
    let trades = 0
    while (performance.now() - began < ms && next < future.length) {
      await sleep(tickMs)
      // the swaps due by now at 2,000/s, with the other events between them
      const due = Math.floor(((performance.now() - began) / 1000) * targetTradesPerSec)
      const from = next
      while (next < future.length && trades < due) if (future[next++]!.type === "swap") trades++
      const batch = future.slice(from, next)
      const cpu = process.cpuUsage()
      const start = wallNow()
      market.apply(batch)
      const took = wallNow() - start
      const used = process.cpuUsage(cpu)
      onBatch(batch, start, took, (used.user + used.system) / 1000)
    }
    return trades / ((performance.now() - began) / 1000)
  }
  // A running server is warm: the first second of fan-out runs unoptimized code.
  await replay(warmUpMs, () => undefined)
  await clients.ask({ cmd: "trace", group: "latency" })
  gc?.()

  // where a batch's time goes: fan-out (the hub's listener) vs the fold; and GC pauses
  const hub = server.stream.hub
  const onChanges = hub.onChanges.bind(hub)
  let fanOutMs = 0
  hub.onChanges = (changes) => {
    const t0 = performance.now()
    onChanges(changes)
    fanOutMs += performance.now() - t0
  }
  const gcPauses: Array<number> = []
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcPauses.push(entry.duration)
  })
  gcObserver.observe({ entryTypes: ["gc"] })
  const batches: Array<{ ms: number; cpuMs: number; fanOutMs: number; events: number; atUs: number }> = []

  const ids: Array<string> = []
  const times: Array<number> = []
  const allocations = process.env.WS_BENCH_ALLOCATIONS === undefined ? undefined : await startAllocationSampling()
  const replayFromUs = process.hrtime.bigint() / 1000n
  let slowestApplyMs = 0
  const applyMs: Array<number> = []
  const tradesPerSec = await replay(durationMs, (batch, start, took, cpuMs) => {
    if (mode === "latency") batches.push({ ms: took, cpuMs, fanOutMs, events: batch.length, atUs: Number(process.hrtime.bigint() / 1000n) })
    fanOutMs = 0
    applyMs.push(took)
    slowestApplyMs = Math.max(slowestApplyMs, took)
    for (let i = 0; i < batch.length; i++) {
      const event = batch[i]!
      if (event.type !== "swap") continue
      ids.push(tradeIdOf(event.id))
      times.push(start)
    }
  })
  // the replay window on the monotonic clock of `--cpu-prof` profiles (µs), to cut the warm-up out
  const replayWindowUs = [Number(replayFromUs), Number(process.hrtime.bigint() / 1000n)] as const
  gcObserver.disconnect()
  hub.onChanges = onChanges
  if (allocations !== undefined) await allocations.stop(process.env.WS_BENCH_ALLOCATIONS!)
  if (mode === "latency") {
    const fmt = (b: (typeof batches)[number]) => `${b.ms.toFixed(1)} ms (process CPU ${b.cpuMs.toFixed(1)}, fan-out ${b.fanOutMs.toFixed(1)}, ${b.events} events, ended at ${b.atUs} µs)`
    console.log(`slowest batches: ${[...batches].sort((a, b) => b.ms - a.ms).slice(0, 12).map(fmt).join("; ")}`)
    const fan = batches.map((b) => b.fanOutMs).sort((a, b) => a - b)
    console.log(`fan-out per batch: p50 ${fan[fan.length >> 1]!.toFixed(2)} ms, p99 ${fan[Math.floor(fan.length * 0.99)]!.toFixed(2)} ms`)
    gcPauses.sort((a, b) => b - a)
    console.log(`GC pauses during the replay: ${gcPauses.length}, total ${gcPauses.reduce((a, b) => a + b, 0).toFixed(0)} ms, longest ${gcPauses.slice(0, 8).map((d) => d.toFixed(1)).join(", ")} ms`)
  }
  await sleep(500)
  const result = await clients.ask<LatencyResult>({ cmd: "latency", group: "latency", ids, times })
  await clients.ask({ cmd: "close", group: "latency" })
  await server.close()
  applyMs.sort((a, b) => a - b)
  return { ...result, tradesPerSec, replayWindowUs, slowestApplyMs, applyP50Ms: applyMs[Math.floor(applyMs.length / 2)] ?? NaN, applyP99Ms: applyMs[Math.floor(applyMs.length * 0.99)] ?? NaN }
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
      `p99 ${lat.applyP99Ms.toFixed(2)} ms, max ${lat.slowestApplyMs.toFixed(1)} ms)`
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
  const clients = await Clients.start()
  const lat = await latency(clients)
  printLatency(lat)
  console.log(`replay window (monotonic µs, for --cpu-prof): ${lat.replayWindowUs.join(" ")}`)
  clients.stop()
  process.exit(0)
} else {
  // Idle memory first, on a fresh heap.
  const rss = await idleMemory()
  console.log(`RSS per idle connection: ${Math.round(rss)} bytes (${idleConnections} connections)`)
  const clients = await Clients.start()
  const lat = await latency(clients)
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
    maxMs: Number(lat.max.toFixed(1)),
    latencySamples: lat.samples,
    tradesPerSec: Math.round(lat.tradesPerSec),
    targets: { speedup: 8, p99Ms: 10, rssBytesPerIdleConnection: 16_384 }
  }))
  process.exit(0)
}
