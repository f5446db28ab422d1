/**
 * Stream benchmark (`npm run bench -- ws`), one process, the stream server without auth (the gate
 * admits everyone: this measures fan-out, not the handshake):
 *
 * 1. Fan-out throughput: the same token changes pushed to 1,000 subscribers by the stream hub
 *    (encode once, prefix per subscription, one write per socket per batch) and by a naive server
 *    (`JSON.stringify` of the frame per client + `ws.send`), frames/s delivered, in the same run.
 * 2. Ingest-to-client latency at 2,000 trades/s with 1,000 subscribers: from `market.apply` of a
 *    batch until a client's socket has read every byte written to it for that batch.
 * 3. RSS per idle connection: idle clients opened from a child process (so only the server's
 *    memory is measured), RSS before/after divided by the count.
 *
 * Clients are raw TCP sockets that do the upgrade by hand and count frames by walking frame
 * headers: cheap, so the server side dominates. Last line: one JSON object.
 */
import { fork } from "node:child_process"
import { createServer } from "node:http"
import type { Server } from "node:http"
import { connect, type Socket } from "node:net"
import { WebSocketServer } from "ws"
import type { WebSocket } from "ws"
import { Simulator } from "@spot/domain"
import type { TokenBook } from "@spot/domain"
import { Market } from "@spot/application"
import { Encoding } from "@spot/adapters-http"
import { ownUpgrades, StreamServer } from "@spot/adapters-ws"
import type { HandshakeGate } from "@spot/adapters-ws"

const gc = (globalThis as { gc?: () => void }).gc
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const admitAll: HandshakeGate = () => ({ admitted: true, keyId: `k${Math.random()}`, requestId: "bench", remaining: 1 })

// --- raw clients --------------------------------------------------------------------------------

class RawClient {
  frames = 0
  private buffer: Buffer | undefined
  private upgraded = false
  onBytes: ((client: RawClient) => void) | undefined
  constructor(readonly socket: Socket) {}

  static open(port: number, path = "/v1/stream"): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1")
      const client = new RawClient(socket)
      socket.setNoDelay(true)
      socket.once("error", reject)
      socket.once("connect", () =>
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`
        ))
      socket.on("data", (chunk: Buffer) => {
        if (!client.upgraded) {
          const data: Buffer = client.buffer === undefined ? chunk : Buffer.concat([client.buffer, chunk])
          const end = data.indexOf("\r\n\r\n")
          if (end < 0) {
            client.buffer = data
            return
          }
          client.upgraded = true
          client.buffer = undefined
          resolve(client)
          if (data.length > end + 4) client.read(data.subarray(end + 4))
          return
        }
        client.read(chunk)
      })
    })
  }

  /** Counts whole frames: walks headers, skips payloads (server frames are unmasked). */
  private read(chunk: Buffer): void {
    let data = this.buffer === undefined ? chunk : Buffer.concat([this.buffer, chunk])
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
      if (data.length - at < header + length) break
      at += header + length
      this.frames++
    }
    this.buffer = at === data.length ? undefined : data.subarray(at)
    this.onBytes?.(this)
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

const openClients = async (port: number, n: number, path?: string) => {
  const clients: Array<RawClient> = []
  for (let i = 0; i < n; i += 100) {
    clients.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => RawClient.open(port, path)))))
  }
  return clients
}

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)))

const waitUntil = async (done: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!done() && Date.now() < deadline) await sleep(1)
}

// --- a market ---------------------------------------------------------------------------------

const warmMarket = (tradesPerSecond: number) => {
  const now = Date.now()
  const simulator = new Simulator.MarketSimulator({ seed: 4, startTime: now - 5 * 60_000, tradesPerSecond, launchesPerMinute: 60 })
  const market = Market.makeMarket()
  market.apply(simulator.runFor(5 * 60_000))
  market.advanceTo(now)
  return { market, simulator }
}

// --- 1. fan-out -------------------------------------------------------------------------------

const subscribers = 1_000
const tokensPerBatch = 10
const rounds = 60

const fanOut = async () => {
  const { market } = warmMarket(200)
  const tokens: Array<TokenBook> = [...market.engine.allTokens()].filter((t) => t.hasMarket).slice(0, tokensPerBatch)
  const batch = { tokens, trades: [], positions: [] }
  const touch = () => {
    for (const token of tokens) token.touch(token.updatedAt + 1)
  }

  // ours
  const server = createServer()
  const upgrades = ownUpgrades(server)
  const stream = new StreamServer(market, { gate: admitAll, encoders: { tokenJson: Encoding.tokenJson, tradeJson: Encoding.tradeJson } })
  upgrades.route("/v1/stream", stream.handleUpgrade)
  const port = await listen(server)
  const clients = await openClients(port, subscribers)
  const filters = { chain: tokens[0]!.chain, tokens: tokens.filter((t) => t.chain === tokens[0]!.chain).map((t) => t.address) }
  const perBatch = filters.tokens.length
  for (const client of clients) client.send(JSON.stringify({ action: "subscribe", channel: "spot.tokens", filters }))
  await waitUntil(() => clients.every((c) => c.frames >= 1), 10_000)
  const measureOurs = async () => {
    const before = clients.reduce((s, c) => s + c.frames, 0)
    const target = before + rounds * perBatch * subscribers
    const start = performance.now()
    for (let r = 0; r < rounds; r++) {
      touch()
      stream.hub.onChanges(batch)
      await new Promise((resolve) => setImmediate(resolve))
    }
    await waitUntil(() => clients.reduce((s, c) => s + c.frames, 0) >= target, 60_000)
    const seconds = (performance.now() - start) / 1000
    return (clients.reduce((s, c) => s + c.frames, 0) - before) / seconds
  }

  // naive: JSON.stringify per client + ws.send
  const naiveServer = createServer()
  const wss = new WebSocketServer({ server: naiveServer, perMessageDeflate: false })
  const sockets: Array<WebSocket> = []
  wss.on("connection", (ws) => sockets.push(ws))
  const naivePort = await listen(naiveServer)
  const naiveClients = await openClients(naivePort, subscribers)
  await waitUntil(() => sockets.length === subscribers, 10_000)
  const measureNaive = async () => {
    const before = naiveClients.reduce((s, c) => s + c.frames, 0)
    const target = before + rounds * perBatch * subscribers
    const start = performance.now()
    for (let r = 0; r < rounds; r++) {
      touch()
      for (const token of tokens) {
        if (token.chain !== filters.chain) continue
        for (let i = 0; i < sockets.length; i++) {
          sockets[i]!.send(JSON.stringify({ type: "update", channel: "spot.tokens", subscriptionId: "s1", data: token.toWire() }))
        }
      }
      await new Promise((resolve) => setImmediate(resolve))
    }
    await waitUntil(() => naiveClients.reduce((s, c) => s + c.frames, 0) >= target, 120_000)
    const seconds = (performance.now() - start) / 1000
    return (naiveClients.reduce((s, c) => s + c.frames, 0) - before) / seconds
  }

  // interleaved rounds, best of 3 each (the machine is shared)
  let ours = 0
  let naive = 0
  for (let i = 0; i < 3; i++) {
    ours = Math.max(ours, await measureOurs())
    naive = Math.max(naive, await measureNaive())
  }
  for (const c of [...clients, ...naiveClients]) c.socket.destroy()
  await stream.close(50)
  server.close()
  for (const ws of sockets) ws.terminate()
  wss.close()
  naiveServer.close()
  return { ours, naive }
}

// --- 2. latency -------------------------------------------------------------------------------

const targetTradesPerSec = 2_000
const durationSwaps = targetTradesPerSec * 5

const latency = async () => {
  // A market with many live tokens, and a stream of future events replayed at 2,000 swaps/s of
  // wall-clock time (the simulator's own rate ramps with its token count).
  const now = Date.now()
  const simulator = new Simulator.MarketSimulator({ seed: 4, startTime: now - 3 * 60_000, tradesPerSecond: 2_000, launchesPerMinute: 600 })
  const market = Market.makeMarket()
  market.apply(simulator.runFor(3 * 60_000))
  // runFor counts from startTime: the next 2 minutes (a small heap: full GCs stay short)
  const future = simulator.runFor(5 * 60_000)
  console.log(`latency run: ${market.engine.stats.tokens} tokens, ${future.filter((e) => e.type === "swap").length} swaps to replay`)
  const server = createServer()
  const upgrades = ownUpgrades(server)
  const stream = new StreamServer(market, { gate: admitAll, encoders: { tokenJson: Encoding.tokenJson, tradeJson: Encoding.tradeJson } })
  upgrades.route("/v1/stream", stream.handleUpgrade)
  const port = await listen(server)
  const clients = await openClients(port, subscribers)
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
  clients.forEach((client, i) => {
    const token = busy[i % busy.length]!
    client.send(JSON.stringify({ action: "subscribe", channel: "spot.trades", filters: { chain: token.chain, token: token.address } }))
    client.send(JSON.stringify({ action: "subscribe", channel: "spot.tokens", filters: { chain: token.chain, token: token.address } }))
  })
  await waitUntil(() => clients.every((c) => c.frames >= 2), 10_000)

  // server socket of each client: matched by port (same process)
  const byPort = new Map<number, RawClient>()
  for (const c of clients) byPort.set(c.socket.localPort!, c)
  const pending = new Map<RawClient, Array<number>>() // [targetBytes, startMs, ...]
  const samples: Array<number> = []
  for (const c of clients) {
    pending.set(c, [])
    c.onBytes = (client) => {
      const queue = pending.get(client)!
      const read = client.socket.bytesRead
      let n = 0
      while (n < queue.length && read >= queue[n]!) {
        samples.push(performance.now() - queue[n + 1]!)
        n += 2
      }
      if (n > 0) queue.splice(0, n)
    }
  }
  // Bytes already written per client (handshake, acks): only what a batch adds is waited for.
  const written = new Map<RawClient, number>()
  for (const connection of stream.hub.connections) {
    const socket = connection.socket as Socket
    const client = byPort.get(socket.remotePort!)
    if (client !== undefined) written.set(client, socket.bytesWritten)
  }
  const durationMs = 5_000
  const tickMs = 10
  const began = performance.now()
  let next = 0
  let trades = 0
  let slowestApplyMs = 0
  while (performance.now() - began < durationMs && next < future.length) {
    await sleep(tickMs)
    // the swaps due by now at 2,000/s, with the other events between them
    const due = Math.floor(((performance.now() - began) / 1000) * targetTradesPerSec)
    const from = next
    while (next < future.length && trades < due) if (future[next++]!.type === "swap") trades++
    const start = performance.now()
    market.apply(future.slice(from, next))
    slowestApplyMs = Math.max(slowestApplyMs, performance.now() - start)
    for (const connection of stream.hub.connections) {
      const socket = connection.socket as Socket
      const client = byPort.get(socket.remotePort!)
      if (client === undefined) continue
      const bytes = socket.bytesWritten
      if (bytes !== (written.get(client) ?? 0)) {
        written.set(client, bytes)
        pending.get(client)!.push(bytes, start)
      }
    }
  }
  const tradesPerSec = trades / ((performance.now() - began) / 1000)
  await sleep(300)
  samples.sort((a, b) => a - b)
  const pct = (p: number) => samples[Math.min(samples.length - 1, Math.floor(samples.length * p))] ?? NaN
  for (const c of clients) c.socket.destroy()
  await stream.close(50)
  server.close()
  return { p50: pct(0.5), p99: pct(0.99), samples: samples.length, tradesPerSec, slowestApplyMs }
}

// --- 3. idle memory ---------------------------------------------------------------------------

const idleConnections = 2_000

/** In a child process: a stream server on an empty market; reports RSS before and after the clients. */
const idleServer = async () => {
  const market = Market.makeMarket()
  const server = createServer()
  const upgrades = ownUpgrades(server)
  const stream = new StreamServer(market, { gate: admitAll, encoders: { tokenJson: Encoding.tokenJson, tradeJson: Encoding.tradeJson } })
  upgrades.route("/v1/stream", stream.handleUpgrade)
  const port = await listen(server)
  // warm the code paths with a few connections from this process, then settle
  const warm = await openClients(port, 50)
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
  process.send?.({ port })
  await waitUntil(() => stream.connectionCount === idleConnections, 30_000)
  await sleep(500)
  const after = await settle()
  process.send?.({ perConnection: (after - before) / stream.connectionCount })
}

const idleMemory = async (): Promise<number> => {
  const child = fork(new URL(import.meta.url), ["idle-server"], { execArgv: ["--expose-gc", "--import", "tsx"] })
  const clients: Array<RawClient> = []
  const result = await new Promise<number>((resolve) =>
    child.on("message", async (message: { port?: number; perConnection?: number }) => {
      if (message.port !== undefined) clients.push(...(await openClients(message.port, idleConnections)))
      if (message.perConnection !== undefined) resolve(message.perConnection)
    })
  )
  for (const c of clients) c.socket.destroy()
  child.kill()
  return result
}

// --- main -------------------------------------------------------------------------------------

if (process.argv[2] === "idle-server") {
  await idleServer()
  setInterval(() => undefined, 60_000)
} else {
  // Idle memory first, on a fresh heap.
  const rss = await idleMemory()
  console.log(`RSS per idle connection: ${Math.round(rss)} bytes (${idleConnections} connections)`)
  const lat = await latency()
  console.log(
    `latency at ${Math.round(lat.tradesPerSec)} trades/s, ${subscribers} subscribers: p50 ${lat.p50.toFixed(2)} ms, ` +
      `p99 ${lat.p99.toFixed(2)} ms (${lat.samples} batch deliveries; slowest fold+fan-out ${lat.slowestApplyMs.toFixed(1)} ms)`
  )
  const { ours, naive } = await fanOut()
  console.log(`fan-out to ${subscribers} subscribers: ${Math.round(ours)} frames/s (stream hub) vs ${Math.round(naive)} frames/s (naive stringify + send): ${(ours / naive).toFixed(1)}x`)
  console.log(JSON.stringify({
    bench: "ws",
    framesPerSec: Math.round(ours),
    naiveFramesPerSec: Math.round(naive),
    speedup: Number((ours / naive).toFixed(2)),
    p50Ms: Number(lat.p50.toFixed(3)),
    p99Ms: Number(lat.p99.toFixed(3)),
    tradesPerSec: Math.round(lat.tradesPerSec),
    rssBytesPerIdleConnection: Math.round(rss),
    targets: { speedup: 8, p99Ms: 10, rssBytesPerIdleConnection: 16_384 }
  }))
  process.exit(0)
}
