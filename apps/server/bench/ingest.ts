/**
 * `pnpm bench ingest`: durable ingest into PostgreSQL with all derived state, against a raw bulk
 * load of the same rows, and the time a fresh process takes to serve again from the log.
 *
 * 1. Durable ingest: simulated events (the engine bench's busy mix), in the form an indexer sends
 *    them (an NDJSON request body, parsed line by line as the ingest route does; with `--json`, a
 *    JSON array, `JSON.parse`d), go through the real ingest use case (`Ingest.ingest`: decode and validate
 *    against the market, append to `PgEventStore`, one commit per batch, fold the new events into
 *    the market) in batches of `--batch` events (default 2,000), `--inflight` requests outstanding
 *    at a time (default 2: an indexer pipelining its batches, docs/ingest.md "Throughput"). Events
 *    are generated untimed `--window` batches at a time (default 32), as request body strings; each
 *    window's ingest, parsing the bodies included, is timed until its last batch is answered
 *    (committed and folded). Reported besides the rates: the CPU
 *    per event of this process and of the PostgreSQL backends during the timed windows, and each
 *    step's CPU alone on the first 100,000 events (parsing, validation, re-encoding the bodies that
 *    cannot be stored as sent, the fold).
 * 2. Restart, twice: the service's start command (`node apps/server/dist/bundle/server.mjs`, built
 *    once by `scripts/bundle.mjs` before the first restart, as `npm start` builds it) in a
 *    child process with `DATABASE_URL` = the same database, simulator off, snapshots on; timed from
 *    spawn until the first authenticated `GET /v1/tokens/{chain}/{address}` answers 200 with the
 *    right content (its trades page too). First with an empty data directory (no snapshot: the
 *    whole log is replayed before it listens: `restartSecondsWithoutSnapshot`); it is then stopped
 *    with SIGTERM and writes its shutdown snapshot of the 1M-trade state (size, serialization time,
 *    its steps and the longest, and write time reported); then again from that snapshot (`restartSeconds`), which must answer
 *    exactly as the full replay did (token without its clock-driven `stats`/`updatedAt`, and the
 *    trades page); `--restarts` times (default 3), the median reported.
 * 3. Raw baselines, same rows (id, type, occurred_at, body as PgEventStore writes them) into a
 *    scratch table of the same layout (same columns, primary key, unique id, defaults):
 *    - `COPY ... FROM STDIN` (text format), one statement per batch (= one commit per batch, the
 *      durable ingest's commits), spoken by a minimal wire-protocol client in this file: the
 *      service's driver (@effect/sql-pg) refuses COPY;
 *    - one `COPY` of all rows (one commit: the database's ceiling);
 *    - the same driver's multi-row `INSERT ... SELECT FROM unnest(...)` per batch, without
 *      `ON CONFLICT`/`RETURNING` (the fastest insert that driver can do).
 *    The COPY row text is built before timing. `copyRowsPerSec` is the faster COPY; the ratio is
 *    ingest events/s ÷ that (same rows, so the same as COPY time ÷ ingest time).
 *
 * Runs against the PostgreSQL server on 127.0.0.1:5432 (trust auth, user postgres) in a database
 * of its own (`spot_bench_<random>`, dropped at the end, also on Ctrl-C); when none answers (or
 * with `--embedded`) against embedded PGlite in a temporary directory. A CHECKPOINT precedes each
 * timed phase so none pays for the previous one's dirty pages.
 *
 *   node --expose-gc --max-old-space-size=8192 --import tsx apps/server/bench/ingest.ts
 *     [--trades 1000000] [--batch 2000] [--inflight 2] [--window 32] [--json] [--seed 1] [--restarts 3] [--embedded] [--verbose] [--ingest-only]
 *
 * The last line is one JSON object.
 */
import { execFileSync, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as net from "node:net"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { Ingest, Market, TradeHistory } from "@spot/application"
import { Events } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import type { MarketEvent } from "@spot/domain"
import { PgDatabase, PgEventStore, PgTradeStore } from "@spot/adapters-storage"
import { numberArg } from "./support/args.js"

const targetTrades = numberArg("trades", 1_000_000)
const batchSize = numberArg("batch", 2_000)
/** Ingest requests outstanding at a time (an indexer pipelining its batches; they apply in order). */
const inflight = numberArg("inflight", 2)
/**
 * Batches generated (untimed) ahead of each timed stretch, as request body strings (cheap to keep:
 * each is parsed only when its request is made); the pipeline drains at the end of each stretch.
 */
const windowBatches = numberArg("window", 32)
/**
 * What the indexer sends: `ndjson` (one event per line; the service keeps each line as the stored
 * body when it holds just the event's fields) or `json` (a JSON array; every event re-encoded).
 */
const format: "ndjson" | "json" = process.argv.includes("--json") ? "json" : "ndjson"
const seed = numberArg("seed", 1)
/** Restarts from the snapshot (the reported `restartSeconds` is their median). */
const snapshotRestarts = numberArg("restarts", 3)
const forceEmbedded = process.argv.includes("--embedded")
/** Phase 1 only (durable ingest and its step breakdown): no restarts, no raw baselines. For quick iterations. */
const ingestOnly = process.argv.includes("--ingest-only")
/** Echo the restarted service's output. */
const verbose = process.argv.includes("--verbose")
const gc = (globalThis as { gc?: () => void }).gc
const collect = () => {
  for (let i = 0; i < 3; i++) gc?.()
}

const repoRoot = new URL("../../../", import.meta.url).pathname

let builtBundle: string | undefined
/** The bundled server `npm start` runs (scripts/bundle.mjs), built on first use. */
const serverBundle = (): string => {
  builtBundle ??= execFileSync(process.execPath, [join(repoRoot, "scripts/bundle.mjs")], { encoding: "utf8" }).trim()
  return builtBundle
}
const round = (x: number, digits = 0) => Number(x.toFixed(digits))

// The engine bench's busy market; starting an hour ago so the restarted service's trailing
// windows (rolled to the present after the replay) still hold the data, as after a real restart.
const startTime = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000
const simulatorOptions = { seed, startTime, tradesPerSecond: 2_000, launchesPerMinute: 600 }

/**
 * The simulated market in batches of `batchSize` events, in order, until `targetTrades` swaps (the
 * last batch is cut there), or exactly `limit` events when given (to replay the same cut).
 */
function* simulatedBatches(limit?: number): Generator<{ readonly events: Array<MarketEvent>; readonly swaps: number }> {
  const simulator = new Simulator.MarketSimulator(simulatorOptions)
  let swaps = 0
  let events = 0
  let pending: Array<MarketEvent> = []
  let pendingSwaps = 0
  // A simulated second at a time: its events are batched and handed on at once. Holding a whole
  // minute (about 140,000 events) would keep them alive across the timed windows, and the fold
  // would be charged with promoting and marking the generator's objects.
  for (let second = 1; ; second++) {
    const generated = simulator.advance(startTime + second * 1_000)
    for (const event of generated) {
      pending.push(event)
      events++
      if (event.type === "swap") {
        swaps++
        pendingSwaps++
      }
      const done = limit === undefined ? swaps >= targetTrades : events >= limit
      if (pending.length === batchSize || done) {
        yield { events: pending, swaps: pendingSwaps }
        pending = []
        pendingSwaps = 0
      }
      if (done) return
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Cleanup: the child service, the bench database, temporary files; on exit and on signals.

const children = new Set<ChildProcess>()
const cleanups: Array<() => Promise<void>> = []
let cleaning: Promise<void> | undefined
const cleanup = (): Promise<void> => {
  cleaning ??= (async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    for (const step of cleanups.reverse()) {
      try {
        await step()
      } catch (error) {
        console.error(`cleanup: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  })()
  return cleaning
}
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    console.error(`${signal}: cleaning up`)
    void cleanup().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------
// A minimal PostgreSQL wire-protocol client: startup (trust authentication only), simple
// queries, and COPY FROM STDIN. Enough for the raw baseline; nothing else uses it.

interface BackendMessage {
  readonly type: string
  readonly body: Buffer
}

const errorText = (body: Buffer): string => {
  // ErrorResponse: (field type byte, C string)*, 0. 'M' is the message.
  let at = 0
  let message = "unknown error"
  while (at < body.length && body[at] !== 0) {
    const field = String.fromCharCode(body[at]!)
    const end = body.indexOf(0, at + 1)
    if (field === "M") message = body.toString("utf8", at + 1, end)
    at = end + 1
  }
  return message
}

class RawConnection {
  private pending: Buffer = Buffer.alloc(0)
  private readonly inbox: Array<BackendMessage> = []
  private waiter: ((message: BackendMessage) => void) | undefined
  private failure: Error | undefined
  serverVersion = "unknown"

  private constructor(private readonly socket: net.Socket) {
    socket.on("data", (data: Buffer) => {
      this.pending = this.pending.length === 0 ? data : Buffer.concat([this.pending, data])
      while (this.pending.length >= 5) {
        const length = this.pending.readInt32BE(1)
        if (this.pending.length < 1 + length) break
        const message = { type: String.fromCharCode(this.pending[0]!), body: this.pending.subarray(5, 1 + length) }
        this.pending = this.pending.subarray(1 + length)
        if (this.waiter !== undefined) {
          const resolve = this.waiter
          this.waiter = undefined
          resolve(message)
        } else this.inbox.push(message)
      }
    })
    socket.on("error", (error) => {
      this.failure = error
    })
  }

  static async open(host: string, port: number, user: string, database: string): Promise<RawConnection> {
    const socket = net.connect({ host, port })
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject))
    socket.setNoDelay(true)
    const connection = new RawConnection(socket)
    const parameters = Buffer.from(`user\0${user}\0database\0${database}\0client_encoding\0UTF8\0\0`)
    const startup = Buffer.alloc(8)
    startup.writeInt32BE(8 + parameters.length, 0)
    startup.writeInt32BE(196_608, 4) // protocol 3.0
    socket.write(Buffer.concat([startup, parameters]))
    for (;;) {
      const message = await connection.next()
      if (message.type === "R" && message.body.readInt32BE(0) !== 0) {
        socket.destroy()
        throw new Error("the server asks for a password; the raw COPY client speaks trust authentication only")
      }
      if (message.type === "S") {
        const [name, value] = message.body.toString("utf8").split("\0")
        if (name === "server_version") connection.serverVersion = value!
      }
      if (message.type === "E") throw new Error(errorText(message.body))
      if (message.type === "Z") return connection
    }
  }

  private next(): Promise<BackendMessage> {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    const queued = this.inbox.shift()
    if (queued !== undefined) return Promise.resolve(queued)
    return new Promise((resolve) => {
      this.waiter = resolve
    })
  }

  private static message(type: string, payload: Buffer | string): Buffer {
    const body = typeof payload === "string" ? Buffer.from(`${payload}\0`) : payload
    const header = Buffer.alloc(5)
    header.write(type, 0, "latin1")
    header.writeInt32BE(4 + body.length, 1)
    return Buffer.concat([header, body])
  }

  /** Until ReadyForQuery; fails with the server's error if there was one. */
  private async settle(): Promise<void> {
    let error: string | undefined
    for (;;) {
      const message = await this.next()
      if (message.type === "E") error = errorText(message.body)
      if (message.type === "Z") break
    }
    if (error !== undefined) throw new Error(error)
  }

  async query(sql: string): Promise<void> {
    this.socket.write(RawConnection.message("Q", sql))
    await this.settle()
  }

  /** `COPY ... FROM STDIN` of the given chunks of COPY text (each a whole number of rows). */
  async copyIn(sql: string, chunks: ReadonlyArray<Buffer>): Promise<void> {
    this.socket.write(RawConnection.message("Q", sql))
    const first = await this.next()
    if (first.type !== "G") {
      if (first.type === "E") {
        await this.settle().catch(() => {})
        throw new Error(errorText(first.body))
      }
      throw new Error(`expected CopyInResponse, got ${first.type}`)
    }
    for (const chunk of chunks) {
      const header = Buffer.alloc(5)
      header.write("d", 0, "latin1")
      header.writeInt32BE(4 + chunk.length, 1)
      this.socket.write(header)
      if (!this.socket.write(chunk)) await new Promise((resolve) => this.socket.once("drain", resolve))
    }
    this.socket.write(RawConnection.message("c", Buffer.alloc(0)))
    await this.settle()
  }

  close(): void {
    this.socket.end(RawConnection.message("X", Buffer.alloc(0)))
  }
}

/** COPY text format: backslash, tab, newline and carriage return are escaped. */
const copyField = (text: string): string =>
  /[\\\t\n\r]/.test(text)
    ? text.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"))
    : text

// ---------------------------------------------------------------------------------------------
// The database.

interface BenchDatabase {
  readonly engine: string
  readonly host: string
  readonly port: number
  readonly name: string
  readonly url: string
}

const serverReachable = (): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port: 5432 })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.once("connect", () => done(true)).once("error", () => done(false))
  })

const openDatabase = async (): Promise<BenchDatabase> => {
  if (!forceEmbedded && (await serverReachable())) {
    const name = `spot_bench_${randomBytes(4).toString("hex")}`
    const admin = await RawConnection.open("127.0.0.1", 5432, "postgres", "postgres")
    await admin.query(`CREATE DATABASE ${name}`)
    cleanups.push(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      admin.close()
      console.log(`dropped database ${name}`)
    })
    return {
      engine: `postgresql-server ${admin.serverVersion}`,
      host: "127.0.0.1",
      port: 5432,
      name,
      url: `postgres://postgres@127.0.0.1:5432/${name}`
    }
  }
  console.log(forceEmbedded ? "--embedded: using embedded PGlite" : "no PostgreSQL server answers on 127.0.0.1:5432: using embedded PGlite")
  const dataDir = mkdtempSync(join(tmpdir(), "spot-bench-ingest-pg-"))
  const scope = Effect.runSync(Scope.make())
  const { port } = await Effect.runPromise(Scope.provide(PgDatabase.startEmbedded({ dataDir, maxConnections: 16 }), scope))
  cleanups.push(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dataDir, { recursive: true, force: true })
  })
  return { engine: "pglite-embedded", host: "127.0.0.1", port, name: "postgres", url: `postgres://postgres@127.0.0.1:${port}/postgres` }
}

// ---------------------------------------------------------------------------------------------
// Phase 1: durable ingest through the use case.

/** An NDJSON body as the ingest route reads it (IngestRoutes.parseNdjson): each line a slice of the body, parsed. */
const parseNdjsonBody = (body: string): { readonly events: Array<unknown>; readonly texts: Array<string> } => {
  const events: Array<unknown> = []
  const texts: Array<string> = []
  for (let start = 0; start < body.length;) {
    let end = body.indexOf("\n", start)
    if (end === -1) end = body.length
    if (end > start) {
      const line = body.slice(start, end)
      texts.push(line)
      events.push(JSON.parse(line))
    }
    start = end + 1
  }
  return { events, texts }
}

interface IngestFigures {
  readonly events: number
  readonly swaps: number
  readonly batches: number
  readonly seconds: number
  readonly batchMs: Array<number>
  readonly tokenPath: string
  readonly stats: Record<string, number>
  /** CPU of this process (all threads: the main thread, GC, the driver's I/O) per event, timed phase only. */
  readonly nodeCpuMicrosPerEvent: number
  /** CPU of its main thread alone (the one that validates, folds and drives the database) per event; null off Linux. */
  readonly mainThreadCpuMicrosPerEvent: number | null
  /** Of the timed time, parsing the request bodies (JSON.parse, the NDJSON lines), per event. */
  readonly parseMicrosPerEvent: number
  /** Share of the timed time the event loop was running JavaScript (not waiting for the database). */
  readonly eventLoopBusy: number
  /** CPU of the PostgreSQL backends serving the bench database per event (server mode); null when unknown. */
  readonly postgresCpuMicrosPerEvent: number | null
}

/** CPU seconds (user + system) of one thread of this process (Linux: /proc), or NaN. */
const threadCpuSeconds = (tid: number): number => {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}

/** CPU seconds (user + system) of the PostgreSQL backends serving `database` (server mode, same machine). */
const backendCpu = async (database: BenchDatabase, sql: SqlClient.SqlClient): Promise<Map<number, number>> => {
  const out = new Map<number, number>()
  if (database.engine.startsWith("pglite")) return out
  const rows = await Effect.runPromise(
    sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = ${database.name} AND pid <> pg_backend_pid()`
  )
  const tick = 100 // USER_HZ: clock ticks per second in /proc (100 on Linux)
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      out.set(pid, (Number(fields[11]) + Number(fields[12])) / tick)
    } catch {
      // Not on this machine, or gone.
    }
  }
  return out
}

/**
 * Per-event CPU of each step alone, single-threaded, on a sample of the same events, in the form
 * the timed phase sends them: parsing the request body (`parse`), validation (`Ingest.validateBatch`:
 * the fast decoder, the schema for what it declines, the engine's checks, and for NDJSON whether
 * each line can be stored as sent), the canonical re-encoding of the stored bodies that cannot be
 * kept as sent (`encodeBody`: every event of a JSON array, none of plain NDJSON lines; the count
 * is `reencoded`), and the engine fold. The rest of the ingest time is the database, the driver
 * and the collector.
 */
const breakdown = (sampleEvents: number): Record<string, number> => {
  const market = Market.makeMarket()
  const bodies = [...simulatedBatches(sampleEvents)].map((b) => {
    const lines = b.events.map((e) => JSON.stringify(Events.encodeMarketEvent(e)))
    return format === "json" ? `[${lines.join(",")}]` : `${lines.join("\n")}\n`
  })
  let n = 0
  let reencoded = 0
  const cpu = { parse: 0, validate: 0, encodeBody: 0, fold: 0 }
  const cpuNow = () => {
    const c = process.cpuUsage()
    return c.user + c.system
  }
  for (const body of bodies) {
    let t = cpuNow()
    const request = format === "json" ? { events: JSON.parse(body) as Array<unknown>, texts: undefined } : parseNdjsonBody(body)
    cpu.parse += cpuNow() - t
    t = cpuNow()
    const validated = Ingest.validateBatch(market, request.events, new Map(), request.texts)
    cpu.validate += cpuNow() - t
    if ("issues" in validated) throw new Error("breakdown: the sample does not validate")
    t = cpuNow()
    for (let i = 0; i < validated.events.length; i++) {
      if (validated.bodies?.[i] !== undefined) continue
      PgEventStore.bodyOf(validated.events[i]!)
      reencoded++
    }
    cpu.encodeBody += cpuNow() - t
    t = cpuNow()
    market.apply(validated.events)
    cpu.fold += cpuNow() - t
    n += validated.events.length
  }
  return {
    parse: round(cpu.parse / n, 2),
    validate: round(cpu.validate / n, 2),
    encodeBody: round(cpu.encodeBody / n, 2),
    reencoded,
    fold: round(cpu.fold / n, 2)
  }
}

const durableIngest = async (database: BenchDatabase): Promise<IngestFigures> => {
  const scope = Effect.runSync(Scope.make())
  const pg = Layer.orDie(PgDatabase.layerServer({ url: Redacted.make(database.url) }))
  // The service's composition: the log, the market, and the trade archive that every folded
  // trade is written to (docs/storage.md, "Trade history").
  const marketLayer = Market.layer()
  const history = TradeHistory.layer().pipe(Layer.provide(Layer.merge(marketLayer, PgTradeStore.layer().pipe(Layer.provide(pg)))))
  const layer = Layer.merge(Ingest.layer, history).pipe(Layer.provideMerge(Layer.merge(marketLayer, PgEventStore.layer().pipe(Layer.provide(pg)))))
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const ingest = Context.get(context, Ingest.Ingest)
  const tradeHistory = Context.get(context, TradeHistory.TradeHistory)
  const market = Context.get(context, Market.Market)
  const monitorScope = Effect.runSync(Scope.make())
  const monitor = Context.get(
    await Effect.runPromise(Layer.buildWithScope(PgDatabase.layerClient({ url: Redacted.make(database.url) }), monitorScope)),
    SqlClient.SqlClient
  )

  let events = 0
  let swaps = 0
  let batches = 0
  let ms = 0
  const batchMs: Array<number> = []
  let lastReport = performance.now()
  let nodeCpuMicros = 0
  let mainThreadMicros = 0
  let parseMs = 0
  let loopActiveMs = 0
  let loopIdleMs = 0
  const backendsBefore = new Map<number, number>()
  const backendsAfter = new Map<number, number>()
  const generator = simulatedBatches()
  for (let done = false; !done;) {
    // Untimed: the next window of batches, as the request bodies an indexer sends.
    const window: Array<{ readonly body: string; readonly count: number; readonly swaps: number }> = []
    while (window.length < windowBatches) {
      const next = generator.next()
      if (next.done === true) {
        done = true
        break
      }
      const lines = next.value.events.map((event) => JSON.stringify(Events.encodeMarketEvent(event)))
      window.push({ body: format === "json" ? `[${lines.join(",")}]` : `${lines.join("\n")}\n`, count: lines.length, swaps: next.value.swaps })
    }
    if (window.length === 0) break
    for (const [pid, cpu] of await backendCpu(database, monitor)) if (!backendsBefore.has(pid)) backendsBefore.set(pid, cpu)
    // Timed: `inflight` requests outstanding at a time, started in order, as an indexer that
    // pipelines its requests; each resolves once its batch is committed and folded. Each request
    // body is parsed as the HTTP route parses it (timed too: it is per-request work of the
    // service, and parsing one body at a time keeps as few events alive as a server would).
    const cpuStart = process.cpuUsage()
    const mainStart = threadCpuSeconds(process.pid)
    const eluStart = performance.eventLoopUtilization()
    const started = performance.now()
    let next = 0
    // Parsed and handed to ingest in one step, as the route does: the worker keeps no reference to
    // the parsed values while its request is in flight (ingest decodes them at once and drops them).
    const requestOf = (body: string) => {
      const request = format === "json" ? { events: JSON.parse(body) as Array<unknown>, texts: undefined } : parseNdjsonBody(body)
      return ingest.ingest(request.events, request.texts)
    }
    const worker = async () => {
      while (next < window.length) {
        const batch = window[next++]!
        const sent = performance.now()
        const parseStarted = performance.now()
        const effect = requestOf(batch.body)
        parseMs += performance.now() - parseStarted
        const result = await Effect.runPromise(effect)
        if (result.accepted !== batch.count) throw new Error(`batch ${batches}: ${result.accepted} of ${batch.count} accepted`)
        batchMs.push(performance.now() - sent)
        events += batch.count
        swaps += batch.swaps
        batches++
      }
    }
    await Promise.all(Array.from({ length: inflight }, worker))
    // Timed too: the window's trades written to the trade archive (derived state, written behind the fold).
    await Effect.runPromise(tradeHistory.flush)
    ms += performance.now() - started
    const cpu = process.cpuUsage(cpuStart)
    nodeCpuMicros += cpu.user + cpu.system
    mainThreadMicros += (threadCpuSeconds(process.pid) - mainStart) * 1e6
    const elu = performance.eventLoopUtilization(eluStart)
    loopActiveMs += elu.active
    loopIdleMs += elu.idle
    for (const [pid, cpu] of await backendCpu(database, monitor)) backendsAfter.set(pid, cpu)
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now()
      console.log(`  ${swaps} trades, ${events} events ingested: ${Math.round(swaps / (ms / 1000))} trades/s so far`)
    }
  }
  let backendSeconds = 0
  for (const [pid, cpu] of backendsAfter) backendSeconds += cpu - (backendsBefore.get(pid) ?? 0)
  let tokenPath = ""
  for (const token of market.engine.allTokens()) {
    if (token.hasMarket) {
      tokenPath = `/v1/tokens/${token.chain}/${token.address}`
      break
    }
  }
  const stats = { ...market.engine.stats }
  await Effect.runPromise(Scope.close(monitorScope, Exit.void))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  return {
    events,
    swaps,
    batches,
    seconds: ms / 1000,
    batchMs,
    tokenPath,
    stats,
    nodeCpuMicrosPerEvent: nodeCpuMicros / events,
    mainThreadCpuMicrosPerEvent: Number.isFinite(mainThreadMicros) ? mainThreadMicros / events : null,
    parseMicrosPerEvent: (parseMs * 1000) / events,
    eventLoopBusy: loopActiveMs / (loopActiveMs + loopIdleMs),
    postgresCpuMicrosPerEvent: backendsAfter.size === 0 ? null : (backendSeconds * 1e6) / events
  }
}

// ---------------------------------------------------------------------------------------------
// Phase 2: restart.

/** The young-generation setting `scripts/run.sh` starts the service (and this bench) with. */
const startHeapFlags = process.execArgv.filter((flag) => flag.startsWith("--max-semi-space-size"))

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** What a correct read answers, to compare a restarted service's first answers with. */
interface ExpectedReads {
  /** `GET tokenPath` without `stats` and `updatedAt` (they move with the clock). */
  readonly token: string
  /** `GET tokenPath/trades?limit=100`, as is. */
  readonly trades: string
}

interface RestartFigures {
  /** From spawn until the first correct answer to `GET tokenPath`. */
  readonly seconds: number
  /** The service's own figure for the log replay (its "event log replayed in" line): the tail after a snapshot. */
  readonly replaySeconds: number | null
  readonly replayLine: string
  /** The service's "restored snapshot ... in X s" figure, when it restored one, and the CPU it took (ms). */
  readonly restoreSeconds: number | null
  readonly restoreCpuMs: number | null
  /** What the restarted service answered (the reference for the next restart). */
  readonly reads: ExpectedReads
  /**
   * At its SIGTERM: the shutdown snapshot's size, serialization time (folding held), its steps and
   * the longest (the longest the event loop was held), and write time (from its log line).
   */
  readonly shutdownSnapshot: {
    readonly megabytes: number
    readonly serializeMs: number
    readonly steps: number
    readonly longestStepMs: number
    readonly serializeCpuMs: number | null
    readonly writeSeconds: number
  } | null
  /** From SIGTERM to exit (the shutdown snapshot included). */
  readonly stopSeconds: number
}

const timeless = (tokenJson: string): string => {
  const { stats: _stats, updatedAt: _updatedAt, ...rest } = JSON.parse(tokenJson) as Record<string, unknown>
  return JSON.stringify(rest)
}

/**
 * The service's start command in a child process (`DATABASE_URL` = the bench database, simulator
 * off, `SPOT_DATA_DIR` = `dataDir`, snapshots on or off), timed from spawn until `GET tokenPath`
 * answers 200 with the expected content (a 200 with other content fails the bench); then stopped
 * with SIGTERM (a graceful stop: with snapshots on it writes its shutdown snapshot).
 */
const restart = async (
  database: BenchDatabase,
  tokenPath: string,
  options: { readonly dataDir: string; readonly snapshots: boolean; readonly expect?: ExpectedReads }
): Promise<RestartFigures> => {
  const port = await freePort()
  const apiKey = `sk_live_${randomBytes(32).toString("base64url")}`
  let replayLine = ""
  let restoreLine = ""
  let snapshotLine = ""
  const started = performance.now()
  // The service's own start command (scripts/run.sh start: the bundled server, its flags included),
  // as an operator restarts it; the bundle is built once before the first restart, as a deploy does.
  const child = spawn(process.execPath, [...startHeapFlags, "--enable-source-maps", serverBundle()], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: database.url,
      SPOT_API_KEYS: apiKey,
      SPOT_SIMULATOR: "off",
      SPOT_DATA_DIR: options.dataDir,
      SPOT_SNAPSHOTS: options.snapshots ? "on" : "off",
      // as scripts/run.sh start runs it
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1"
    },
    stdio: ["ignore", "pipe", "inherit"]
  })
  children.add(child)
  let exited: string | undefined
  child.on("exit", (code, signal) => {
    children.delete(child)
    exited = `code ${code}, signal ${signal}`
  })
  child.stdout!.setEncoding("utf8")
  let pending = ""
  child.stdout!.on("data", (text: string) => {
    pending += text
    const lines = pending.split("\n")
    pending = lines.pop()!
    for (const line of lines) {
      if (verbose) console.log(`  [service] ${line}`)
      if (line.includes("event log replayed in")) replayLine = line
      if (line.includes("restored snapshot")) restoreLine = line
      if (/snapshot \S+ written/.test(line)) snapshotLine = line
      if (/snapshot|replaying/.test(line) && !verbose) console.log(`  [service] ${line.replace(/^\S+ \S+ \(#\d+\): /, "")}`)
    }
  })
  const get = async (path: string): Promise<{ status: number; text: string } | "refused"> => {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })
      return { status: response.status, text: await response.text() }
    } catch (error) {
      // Not listening yet: connection refused. Anything else is a failure.
      if ((error as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED") return "refused"
      throw error
    }
  }
  let seconds = Number.NaN
  let reads: ExpectedReads | undefined
  for (;;) {
    if (exited !== undefined) throw new Error(`the restarted service exited (${exited})`)
    if (performance.now() - started > 600_000) throw new Error("the restarted service did not serve within 600 s")
    const token = await get(tokenPath)
    if (token === "refused") {
      await new Promise((resolve) => setTimeout(resolve, 20))
      continue
    }
    if (token.status !== 200) throw new Error(`GET ${tokenPath} after restart: ${token.status}`)
    const trades = await get(`${tokenPath}/trades?limit=100`)
    if (trades === "refused" || trades.status !== 200) throw new Error(`GET ${tokenPath}/trades after restart failed`)
    reads = { token: timeless(token.text), trades: trades.text }
    seconds = (performance.now() - started) / 1000
    if (options.expect !== undefined && (reads.token !== options.expect.token || reads.trades !== options.expect.trades)) {
      throw new Error(`the restarted service answers differently from the previous one:\n  ${reads.token.slice(0, 300)}\n  ${options.expect.token.slice(0, 300)}`)
    }
    break
  }
  const stopping = performance.now()
  await new Promise<void>((resolve) => {
    // a graceful stop writes the shutdown snapshot: a 1M-trade state takes a while on a busy machine
    const force = setTimeout(() => child.kill("SIGKILL"), 300_000)
    child.once("exit", () => {
      clearTimeout(force)
      resolve()
    })
    child.kill("SIGTERM")
  })
  const stopSeconds = (performance.now() - stopping) / 1000
  const replayed = /replayed in ([\d.]+) s/.exec(replayLine)
  const restoredIn = / in ([\d.]+) s(?:, (\d+) ms of CPU)?:/.exec(restoreLine)
  const written = /written: seq \d+, ([\d.]+) MB, serialized in (\d+) ms \((\d+) steps, the longest (\d+) ms; folding held meanwhile(?:; (\d+) ms of CPU)?\), written in ([\d.]+) s/.exec(snapshotLine)
  return {
    seconds,
    replaySeconds: replayed === null ? null : Number(replayed[1]),
    replayLine,
    restoreSeconds: restoredIn === null ? null : Number(restoredIn[1]),
    restoreCpuMs: restoredIn === null || restoredIn[2] === undefined ? null : Number(restoredIn[2]),
    reads: reads!,
    shutdownSnapshot: written === null
      ? null
      : {
        megabytes: Number(written[1]),
        serializeMs: Number(written[2]),
        steps: Number(written[3]),
        longestStepMs: Number(written[4]),
        serializeCpuMs: written[5] === undefined ? null : Number(written[5]),
        writeSeconds: Number(written[6])
      },
    stopSeconds
  }
}

// ---------------------------------------------------------------------------------------------
// Phase 3: raw baselines.

/** The event log's layout (Migrations.ts), under another name. */
const createScratch = (name: string) => `
  CREATE TABLE ${name} (
    seq bigserial PRIMARY KEY,
    id text COLLATE "C" NOT NULL,
    type text NOT NULL,
    occurred_at bigint NOT NULL,
    body text NOT NULL,
    stored_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ${name}_id_unique UNIQUE (id)
  )`

interface RowBatch {
  readonly ids: Array<string>
  readonly types: Array<string>
  readonly times: Array<number>
  readonly bodies: Array<string>
  readonly copyText: Buffer
}

const rowBatches = (events: number): Array<RowBatch> => {
  const out: Array<RowBatch> = []
  for (const batch of simulatedBatches(events)) {
    const n = batch.events.length
    const rows: RowBatch = { ids: new Array(n), types: new Array(n), times: new Array(n), bodies: new Array(n), copyText: Buffer.alloc(0) }
    let text = ""
    for (let i = 0; i < n; i++) {
      const event = batch.events[i]!
      rows.ids[i] = event.id
      rows.types[i] = event.type
      rows.times[i] = event.timestamp
      rows.bodies[i] = PgEventStore.bodyOf(event)
      text += `${copyField(event.id)}\t${copyField(event.type)}\t${event.timestamp}\t${copyField(rows.bodies[i]!)}\n`
    }
    out.push({ ...rows, copyText: Buffer.from(text, "utf8") })
  }
  return out
}

interface RawFigures {
  readonly copyPerBatchSeconds: number
  readonly copyOneStatementSeconds: number
  readonly unnestSeconds: number
  readonly rows: number
  readonly bytes: number
}

const rawBaselines = async (database: BenchDatabase, events: number): Promise<RawFigures> => {
  const generated = performance.now()
  const batches = rowBatches(events)
  const rows = batches.reduce((n, b) => n + b.ids.length, 0)
  const bytes = batches.reduce((n, b) => n + b.copyText.length, 0)
  console.log(`  ${rows} rows built (${(bytes / 1e6).toFixed(0)} MB of COPY text) in ${((performance.now() - generated) / 1000).toFixed(1)} s (not timed)`)
  collect()

  const raw = await RawConnection.open(database.host, database.port, "postgres", database.name)
  const columns = "(id, type, occurred_at, body)"
  const fresh = async (name: string) => {
    await raw.query(`DROP TABLE IF EXISTS ${name}`)
    await raw.query(createScratch(name))
    await raw.query("CHECKPOINT")
  }

  // COPY, one statement (one commit) per batch.
  await fresh("raw_copy_batches")
  let started = performance.now()
  for (const batch of batches) await raw.copyIn(`COPY raw_copy_batches ${columns} FROM STDIN`, [batch.copyText])
  const copyPerBatchSeconds = (performance.now() - started) / 1000
  console.log(`  COPY per batch: ${rows} rows in ${copyPerBatchSeconds.toFixed(2)} s`)
  await raw.query("DROP TABLE raw_copy_batches")

  // COPY, every row in one statement.
  await fresh("raw_copy_one")
  started = performance.now()
  await raw.copyIn(`COPY raw_copy_one ${columns} FROM STDIN`, batches.map((b) => b.copyText))
  const copyOneStatementSeconds = (performance.now() - started) / 1000
  console.log(`  COPY one statement: ${rows} rows in ${copyOneStatementSeconds.toFixed(2)} s`)
  await raw.query("DROP TABLE raw_copy_one")

  // The service's driver: multi-row INSERT from unnest, one statement (autocommit) per batch.
  await fresh("raw_unnest")
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(PgDatabase.layerClient({ url: Redacted.make(database.url), maxConnections: 1 }), scope)
  )
  const sql = Context.get(context, SqlClient.SqlClient)
  started = performance.now()
  for (const b of batches) {
    await Effect.runPromise(sql`
      INSERT INTO raw_unnest (id, type, occurred_at, body)
      SELECT * FROM unnest(${b.ids}::text[], ${b.types}::text[], ${b.times}::int8[], ${b.bodies}::text[])`)
  }
  const unnestSeconds = (performance.now() - started) / 1000
  console.log(`  unnest INSERT per batch (@effect/sql-pg): ${rows} rows in ${unnestSeconds.toFixed(2)} s`)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await raw.query("DROP TABLE raw_unnest")
  raw.close()
  return { copyPerBatchSeconds, copyOneStatementSeconds, unnestSeconds, rows, bytes }
}

// ---------------------------------------------------------------------------------------------

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = values.slice().sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const main = async (): Promise<void> => {
  const loadAtStart = loadavg()
  const database = await openDatabase()
  console.log(`database: ${database.engine}, ${database.name}; ${targetTrades} trades in batches of ${batchSize} events`)

  const checkpoint = async () => {
    const raw = await RawConnection.open(database.host, database.port, "postgres", database.name)
    await raw.query("CHECKPOINT").catch(() => {}) // the database is migrated by phase 1's layer; CHECKPOINT needs no table
    raw.close()
  }

  console.log("durable ingest (Ingest.ingest: validate, append to PgEventStore, fold)...")
  await checkpoint()
  const ingested = await durableIngest(database)
  const tradesPerSec = ingested.swaps / ingested.seconds
  const eventsPerSec = ingested.events / ingested.seconds
  console.log(
    `  ${ingested.swaps} trades (${ingested.events} events, ${ingested.batches} batches) in ${ingested.seconds.toFixed(1)} s: ` +
      `${Math.round(tradesPerSec)} trades/s, ${Math.round(eventsPerSec)} events/s; per batch p50 ${percentile(ingested.batchMs, 50).toFixed(1)} ms, ` +
      `p99 ${percentile(ingested.batchMs, 99).toFixed(1)} ms`
  )
  console.log(`  market: ${JSON.stringify(ingested.stats)}`)
  const cpuPerEvent = {
    node: round(ingested.nodeCpuMicrosPerEvent, 2),
    nodeMainThread: ingested.mainThreadCpuMicrosPerEvent === null ? null : round(ingested.mainThreadCpuMicrosPerEvent, 2),
    postgres: ingested.postgresCpuMicrosPerEvent === null ? null : round(ingested.postgresCpuMicrosPerEvent, 2),
    wall: round((ingested.seconds * 1e6) / ingested.events, 2),
    /** Of `wall`: parsing the request bodies. */
    parse: round(ingested.parseMicrosPerEvent, 2),
    /** Share of `wall` the event loop was busy (the rest it waited for the database). */
    eventLoopBusy: round(ingested.eventLoopBusy, 3)
  }
  console.log(
    `  per event: wall ${cpuPerEvent.wall} µs (parsing the request bodies ${cpuPerEvent.parse} µs of it); CPU of this process ${cpuPerEvent.node} µs (main thread ${cpuPerEvent.nodeMainThread ?? "?"} µs), ` +
      `of the PostgreSQL backends ${cpuPerEvent.postgres ?? "?"} µs; event loop busy ${Math.round(cpuPerEvent.eventLoopBusy * 100)}% ` +
      `(${inflight} requests in flight, ${format})`
  )
  collect()
  const steps = breakdown(Math.min(ingested.events, 100_000))
  console.log(`  the steps alone, CPU µs per event (first ${Math.min(ingested.events, 100_000)} events, one thread): ${JSON.stringify(steps)}`)
  collect()
  // The ingest run's figures, first in both result lines.
  const ingestFigures = {
    database: database.engine,
    trades: ingested.swaps,
    events: ingested.events,
    batchSize,
    inflight,
    format,
    tradesPerSec: Math.round(tradesPerSec),
    eventsPerSec: Math.round(eventsPerSec)
  }
  if (ingestOnly) {
    const loadAtEnd = loadavg()
    await cleanup()
    console.log(JSON.stringify({
      bench: "ingest",
      ingestOnly: true,
      ...ingestFigures,
      cpuMicrosPerEvent: cpuPerEvent,
      stepMicrosPerEvent: steps,
      loadAverage: round(loadAtEnd[0]!, 2),
      loadAverageAtStart: round(loadAtStart[0]!, 2)
    }))
    return
  }

  // Restart without a snapshot (an empty data directory: the whole log is replayed); its graceful
  // stop writes the shutdown snapshot of the 1M-trade state, which the second restart starts from.
  const restartDir = mkdtempSync(join(tmpdir(), "spot-bench-ingest-data-"))
  cleanups.push(async () => rmSync(restartDir, { recursive: true, force: true }))
  console.log(`restart without a snapshot: a fresh service process replays the whole log until GET ${ingested.tokenPath} answers 200...`)
  await checkpoint()
  const replayRestart = await restart(database, ingested.tokenPath, { dataDir: restartDir, snapshots: true })
  console.log(`  served after ${replayRestart.seconds.toFixed(2)} s (${replayRestart.replayLine || "no replay line"}); stopped in ${replayRestart.stopSeconds.toFixed(1)} s`)
  if (replayRestart.shutdownSnapshot !== null) {
    const s = replayRestart.shutdownSnapshot
    console.log(
      `  its shutdown snapshot: ${s.megabytes} MB, serialized in ${s.serializeMs} ms (${s.serializeCpuMs ?? "?"} ms of CPU) in ${s.steps} steps, the longest ${s.longestStepMs} ms, written in ${s.writeSeconds} s`
    )
  }
  const snapshotRuns: Array<RestartFigures> = []
  for (let run = 1; run <= snapshotRestarts; run++) {
    console.log(`restart with a snapshot (${run} of ${snapshotRestarts}): the same, from the snapshot written at the previous stop...`)
    await checkpoint()
    const figures = await restart(database, ingested.tokenPath, { dataDir: restartDir, snapshots: true, expect: replayRestart.reads })
    snapshotRuns.push(figures)
    console.log(`  served after ${figures.seconds.toFixed(2)} s (${figures.replayLine || "no replay line"}), the same answers as after the full replay`)
  }
  const middle = (values: ReadonlyArray<number>): number => percentile(values, 50)
  const restarted = snapshotRuns.slice().sort((a, b) => a.seconds - b.seconds)[Math.floor((snapshotRuns.length - 1) / 2)]!
  const restoreSeconds = snapshotRuns.flatMap((r) => (r.restoreSeconds === null ? [] : [r.restoreSeconds]))
  const restoreCpuMs = snapshotRuns.flatMap((r) => (r.restoreCpuMs === null ? [] : [r.restoreCpuMs]))
  console.log(
    `  restart with a snapshot: median ${restarted.seconds.toFixed(2)} s of ${snapshotRuns.map((r) => r.seconds.toFixed(2)).join(", ")}; ` +
      `restore median ${restoreSeconds.length === 0 ? "?" : middle(restoreSeconds).toFixed(2)} s (${restoreCpuMs.length === 0 ? "?" : middle(restoreCpuMs)} ms of CPU)`
  )

  console.log("raw baselines, the same rows into scratch tables of the same layout...")
  const raw = await rawBaselines(database, ingested.events)
  const copyPerBatch = raw.rows / raw.copyPerBatchSeconds
  const copyOne = raw.rows / raw.copyOneStatementSeconds
  const unnest = raw.rows / raw.unnestSeconds
  const copyRowsPerSec = Math.max(copyPerBatch, copyOne)

  console.log("")
  console.log(`${"path".padEnd(52)} ${"rows/s".padStart(9)} ${"ingest ÷".padStart(9)}`)
  const line = (name: string, perSec: number) =>
    console.log(`${name.padEnd(52)} ${String(Math.round(perSec)).padStart(9)} ${(eventsPerSec / perSec).toFixed(2).padStart(9)}`)
  line("durable ingest (validate + append + fold), events", eventsPerSec)
  line("COPY FROM STDIN, one statement per batch", copyPerBatch)
  line("COPY FROM STDIN, one statement", copyOne)
  line("INSERT ... unnest per batch (@effect/sql-pg)", unnest)
  console.log(
    `durable ingest: ${Math.round(tradesPerSec)} trades/s; restart to a correct first answer: ${restarted.seconds.toFixed(2)} s with a snapshot, ${replayRestart.seconds.toFixed(2)} s replaying the whole log`
  )
  const loadAtEnd = loadavg()
  console.log(`load average (1, 5, 15 min): at start ${loadAtStart.map((x) => x.toFixed(2)).join(", ")}; at end ${loadAtEnd.map((x) => x.toFixed(2)).join(", ")} (PostgreSQL shares this machine)`)

  const result = {
    bench: "ingest",
    ...ingestFigures,
    copyRowsPerSec: Math.round(copyRowsPerSec),
    copyMethod: copyOne >= copyPerBatch ? "COPY FROM STDIN text, one statement" : "COPY FROM STDIN text, one statement per batch",
    copyPerBatchRowsPerSec: Math.round(copyPerBatch),
    unnestInsertRowsPerSec: Math.round(unnest),
    ratioToCopy: round(eventsPerSec / copyRowsPerSec, 3),
    cpuMicrosPerEvent: cpuPerEvent,
    stepMicrosPerEvent: steps,
    restartSeconds: round(restarted.seconds, 2),
    restartSecondsRuns: snapshotRuns.map((r) => round(r.seconds, 2)),
    snapshotRestoreSeconds: restoreSeconds.length === 0 ? null : round(middle(restoreSeconds), 2),
    snapshotRestoreCpuMs: restoreCpuMs.length === 0 ? null : middle(restoreCpuMs),
    tailReplaySeconds: restarted.replaySeconds,
    restartSecondsWithoutSnapshot: round(replayRestart.seconds, 2),
    replaySeconds: replayRestart.replaySeconds,
    snapshot: replayRestart.shutdownSnapshot,
    loadAverage: round(loadAtEnd[0]!, 2),
    targets: { tradesPerSec: 20_000, ratioToCopy: 0.3, restartSeconds: 10 }
  }
  await cleanup()
  console.log(JSON.stringify(result))
}

try {
  await main()
} catch (error) {
  console.error(error instanceof Error ? error.stack ?? error.message : error)
  process.exitCode = 1
} finally {
  await cleanup()
}
