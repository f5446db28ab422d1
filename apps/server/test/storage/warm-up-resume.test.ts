/**
 * A warm-up a crash interrupted is finished by the next start: the simulator's warm-up is logged
 * as it goes, and a start on a log with history does not warm up again, so a `kill -9` part-way
 * through would leave the market short for good (as few as 115 tokens of 589). The data
 * directory keeps the warm-up's record (WarmUpRecord, FileWarmUpRecords); a start that finds it incomplete replays
 * the same warm-up through ingest, duplicates for what the log holds.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Ingest, Market, SimulatorFeed, WarmUpRecord } from "@spot/application"
import type { MarketEvent } from "@spot/domain"
import { FileSnapshotStore, FileWarmUpRecords, MemoryKeyStore, PgDatabase } from "@spot/adapters-storage"
import * as Server from "../../src/Server.js"
import type { ServerConfig } from "../../src/ServerConfig.js"
import { apiKey } from "../http/support/ReadApi.js"
import { startTestServer, testServerConfig } from "../support/TestServer.js"
import type { TestDatabase } from "./support.js"
import { startDatabase } from "./support.js"

const feed = { seed: 11, tradesPerSecond: 20, launchesPerMinute: 30, warmUpMs: 3 * 60_000, tickMs: 60_000 }

/** The whole warm-up `options` make, as the simulator makes it. */
const warmUpEvents = async (options: SimulatorFeed.SimulatorFeedOptions): Promise<Array<MarketEvent>> => {
  const events: Array<MarketEvent> = []
  await Effect.runPromise(SimulatorFeed.warmUp(options, (batch) => Effect.sync(() => void events.push(...batch))).pipe(
    Effect.provideService(Market.Market, Market.makeMarket()),
    Effect.provide(Server.marketSimulation)
  ))
  return events
}

describe("a warm-up a crash interrupted", () => {
  // a database of each test's own: which warm-up a log began with is the point
  const databases: Array<TestDatabase> = []
  const dataDirs: Array<string> = []
  const fresh = async () => {
    const database = await startDatabase()
    databases.push(database)
    const dataDir = mkdtempSync(join(tmpdir(), "spot-warm-up-"))
    dataDirs.push(dataDir)
    return { database, dataDir }
  }
  afterAll(async () => {
    for (const database of databases) await database.drop()
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  })

  /** The server on `database` and `dataDir`, with the simulator `simulator`. */
  const start = async (database: TestDatabase, dataDir: string, simulator: ServerConfig["simulator"], snapshots?: ServerConfig["snapshots"]) => {
    const config = testServerConfig({
      simulator,
      ...(snapshots === undefined ? {} : { snapshots }),
      dataDir,
      databaseUrl: Option.some(Redacted.make(`postgres://postgres@127.0.0.1:${database.port}/${database.database}`))
    })
    const market = Market.makeMarket()
    const { context, close } = await startTestServer(config, { market: Layer.succeed(Market.Market, market), keyStore: MemoryKeyStore.layer({ seedKeys: [Redacted.make(apiKey)] }) })
    return { market, ingest: Context.get(context, Ingest.Ingest), close }
  }

  /** The log's newest seq. */
  const head = (database: TestDatabase) =>
    Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: string }>`SELECT max(seq)::text AS n FROM market_events`
        return Number(rows[0]!.n)
      }).pipe(Effect.provide(PgDatabase.layerClient({ url: Redacted.make(`postgres://postgres@127.0.0.1:${database.port}/${database.database}`) })))
    )

  /** How many of `ids` the database's event log holds. */
  const logged = (database: TestDatabase, ids: ReadonlyArray<string>) =>
    Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM market_events WHERE id = ANY(${ids})`
        return Number(rows[0]!.n)
      }).pipe(Effect.provide(PgDatabase.layerClient({ url: Redacted.make(`postgres://postgres@127.0.0.1:${database.port}/${database.database}`) })))
    )

  it("is finished by the next start: every event of the whole warm-up logged once and folded, the record complete", async () => {
    const { database, dataDir } = await fresh()
    const record: WarmUpRecord.WarmUpRecord = { ...feed, warmUpEnd: Date.now() - 5_000, complete: false }
    const whole = await warmUpEvents(WarmUpRecord.optionsOf(record, feed.tickMs))
    expect(whole.length).toBeGreaterThan(1_000)
    const ids = whole.map((e) => e.id)

    // The crash: the first 40% logged, the record still incomplete.
    const cut = Math.floor(whole.length * 0.4)
    const first = await start(database, dataDir, null)
    await Effect.runPromise(Ingest.publishWithRetry(first.ingest)(whole.slice(0, cut)))
    await first.close()
    FileWarmUpRecords.write(dataDir, record)
    expect(await logged(database, ids)).toBe(cut)

    const second = await start(database, dataDir, { ...feed, seed: 99 })
    try {
      // the recorded warm-up (seed 11), not the configured seed's
      expect(await logged(database, ids)).toBe(whole.length)
      expect(second.market.engine.stats.events).toBeGreaterThanOrEqual(whole.length)
      expect(FileWarmUpRecords.read(dataDir)).toEqual({ ...record, complete: true })
    } finally {
      await second.close()
    }
  }, 120_000)

  it("is not replayed into a log it did not begin (another database, the same data directory)", async () => {
    const { database, dataDir } = await fresh()
    const end = Date.now() - 5_000
    // A log that began with other events: the first 100 of another seed's warm-up.
    const other = await warmUpEvents({ ...feed, seed: 12, warmUpEnd: end })
    const first = await start(database, dataDir, null)
    await Effect.runPromise(Ingest.publishWithRetry(first.ingest)(other.slice(0, 100)))
    await first.close()
    // ... and an incomplete record of seed 11's warm-up in the data directory
    const record: WarmUpRecord.WarmUpRecord = { ...feed, warmUpEnd: end, complete: false }
    FileWarmUpRecords.write(dataDir, record)
    const second = await start(database, dataDir, feed)
    try {
      // (native prices at the same times share their ids across seeds: those were logged by the other)
      const logs = new Set(other.slice(0, 100).map((e) => e.id))
      const ids = (await warmUpEvents(WarmUpRecord.optionsOf(record, feed.tickMs))).map((e) => e.id).filter((id) => !logs.has(id))
      expect(ids.length).toBeGreaterThan(1_000)
      expect(await logged(database, ids)).toBe(0)
      expect(FileWarmUpRecords.read(dataDir)?.complete).toBe(false)
    } finally {
      await second.close()
    }
  }, 120_000)

  it("a fresh log's warm-up ends with a snapshot, taken before the service serves, for the periodic ones to build on", async () => {
    const { database, dataDir } = await fresh()
    // no periodic snapshot would be due
    const server = await start(database, dataDir, feed, { enabled: true, everyEvents: 1e9, minIntervalMs: 0, checkEveryMs: 10 })
    try {
      const directory = FileSnapshotStore.directoryIn(dataDir)
      const seqs = readdirSync(directory).filter((name) => name.endsWith(".snap")).map((name) => Number(name.split("-")[1]))
      // one, of the warmed-up market (the live simulator may have logged its first tick since)
      expect(seqs.length).toBe(1)
      expect(seqs[0]).toBeGreaterThan(1_000)
      expect(seqs[0]).toBeLessThanOrEqual(await head(database))
    } finally {
      await server.close()
    }
  }, 120_000)
})
