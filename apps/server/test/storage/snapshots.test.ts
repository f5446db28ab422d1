/**
 * Engine snapshots through the real server and PostgreSQL: a restart restores the newest usable
 * snapshot and replays only the log's tail, and answers exactly what a full replay answers; a
 * damaged or truncated snapshot falls back to the previous one, then to the full log, with nothing
 * lost; a snapshot of another database's log is never used; a graceful stop leaves a snapshot
 * at the log's head.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Market, SnapshotStore, SnapshotStoreError, Snapshots } from "@spot/application"
import type { SnapshotSettings } from "@spot/application"
import { Events } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import type { MarketEvent } from "@spot/domain"
import { FileSnapshotStore, MemoryKeyStore } from "@spot/adapters-storage"
import { apiKey } from "../http/support/ReadApi.js"
import { startTestServer, testServerConfig } from "../support/TestServer.js"
import type { TestDatabase } from "./support.js"
import { startDatabase } from "./support.js"

const ingestKey = "ik_test_snapshotsIngestKey_0123456789abcdef"

/** What the spy store saw, and a switch to make writes fail (a crash before the shutdown snapshot). */
interface Spy {
  readonly loads: Array<string>
  readonly saves: Array<string>
  failSaves: boolean
}

const spyStore = (directory: string, spy: Spy): Layer.Layer<SnapshotStore> =>
  Layer.effect(
    SnapshotStore,
    Effect.map(FileSnapshotStore.make({ directory }), (store) =>
      SnapshotStore.of({
        list: store.list,
        load: (name) => Effect.tap(store.load(name), () => Effect.sync(() => void spy.loads.push(name))),
        save: (header, body) =>
          spy.failSaves
            ? Effect.fail(new SnapshotStoreError({ message: "saves switched off by the test" }))
            : Effect.tap(store.save(header, body), (name) => Effect.sync(() => void spy.saves.push(name)))
      }))
  )

interface Running {
  readonly url: string
  readonly market: Market.MarketShape
  readonly snapshots: Snapshots.Snapshots["Service"]
  readonly close: () => Promise<void>
}

const snapshotsOn: SnapshotSettings = { enabled: true, everyEvents: 1_000_000_000, minIntervalMs: 0 }

const startServer = async (databaseUrl: string, dataDir: string, spy: Spy, snapshots: SnapshotSettings = snapshotsOn): Promise<Running> => {
  const market = Market.makeMarket()
  const { url, context, close } = await startTestServer(
    testServerConfig({ dataDir, databaseUrl: Option.some(Redacted.make(databaseUrl)), ingestKeys: [Redacted.make(ingestKey)], snapshots }),
    {
      market: Layer.succeed(Market.Market, market),
      keyStore: MemoryKeyStore.layer({ seedKeys: [Redacted.make(apiKey)] }),
      snapshotStore: spyStore(FileSnapshotStore.directoryIn(dataDir), spy)
    }
  )
  return { url, market, snapshots: Context.get(context, Snapshots.Snapshots), close }
}

const post = async (server: Running, body: unknown) => {
  const response = await fetch(`${server.url}/admin/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${ingestKey}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as unknown }
}

/** Simulated events two days old: trailing windows are empty when read, so reads do not move with the clock. */
const history = (seed: number): Array<unknown> => {
  const simulator = new Simulator.MarketSimulator({ seed, startTime: Date.now() - 2 * 86_400_000, tradesPerSecond: 30, launchesPerMinute: 30 })
  return simulator.runFor(3 * 60_000).map((event: MarketEvent) => Events.encodeMarketEvent(event))
}

/** `updatedAt` (when a token's windows last rolled: the clock at start-up) and `asOf` (the time of the answer) are the clock, not data. */
const withoutUpdatedAt = (text: string): string => text.replace(/"(updatedAt|asOf)":\d+/g, '"$1":0')

/** The REST answers compared across restarts. */
const readAll = async (server: Running, paths: ReadonlyArray<string>): Promise<Array<string>> =>
  Promise.all(
    paths.map(async (path) => {
      const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${apiKey}` } })
      return `${response.status} ${withoutUpdatedAt(await response.text())}`
    })
  )

const pathsOf = (market: Market.MarketShape): Array<string> => {
  const tokens = [...market.engine.allTokens()].filter((t) => t.hasMarket).slice(0, 6)
  const wallets = new Set<string>()
  for (const token of tokens) for (const slot of [...token.positions.slots()].slice(0, 5)) wallets.add(token.positions.walletAt(slot))
  return [
    ...tokens.flatMap((t) => [
      `/v1/tokens/${t.chain}/${t.address}`,
      `/v1/tokens/${t.chain}/${t.address}/trades?limit=100`,
      `/v1/tokens/${t.chain}/${t.address}/ohlcv?timeframe=1m&countBack=500`,
      `/v1/tokens/${t.chain}/${t.address}/ohlcv?timeframe=1h&metric=price&denomination=native`
    ]),
    "/v1/trades?identity=kol&limit=100",
    "/v1/trades?identity=partnerscan&limit=100",
    `/v1/positions?wallets=${[...wallets].slice(0, 20).join(",")}&lifecycle=open&hideLowLiquidity=false`,
    `/v1/positions?wallets=${[...wallets].slice(0, 20).join(",")}&lifecycle=closed`
  ]
}

const expectSameReads = (actual: ReadonlyArray<string>, expected: ReadonlyArray<string>, paths: ReadonlyArray<string>) => {
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] === expected[i]) continue
    let at = 0
    while (actual[i]![at] === expected[i]![at]) at++
    expect.fail(`${paths[i]}: differs at ${at}:\n  ${actual[i]!.slice(Math.max(0, at - 200), at + 200)}\n  ${expected[i]!.slice(Math.max(0, at - 200), at + 200)}`)
  }
  expect(actual.length).toBe(expected.length)
}

/** Temporary data directories, removed after the file's tests. */
const scratchDirectories: Array<string> = []
const scratchDirectory = (prefix: string): string => {
  const directory = mkdtempSync(join(tmpdir(), prefix))
  scratchDirectories.push(directory)
  return directory
}

const snapshotFiles = (dataDir: string): Array<string> =>
  readdirSync(FileSnapshotStore.directoryIn(dataDir)).filter((name) => name.endsWith(".snap")).sort()

describe("engine snapshots on the real server", () => {
  let database: TestDatabase
  let otherDatabase: TestDatabase
  let databaseUrl: string
  let dataDir: string
  const events = history(5)
  const thirds = [events.slice(0, events.length / 3), events.slice(events.length / 3, (2 * events.length) / 3), events.slice((2 * events.length) / 3)]
  let paths: Array<string> = []
  let reference: Array<string> = []
  let stats: unknown

  beforeAll(async () => {
    database = await startDatabase()
    otherDatabase = await startDatabase()
    databaseUrl = `postgres://postgres@127.0.0.1:${database.port}/${database.database}`
    dataDir = scratchDirectory("spot-snapshots-test-")
  })
  afterAll(async () => {
    await database?.drop()
    await otherDatabase?.drop()
    for (const directory of scratchDirectories) rmSync(directory, { recursive: true, force: true })
  })

  it("restarts from the newest snapshot plus the log's tail, answering as before", async () => {
    const spy: Spy = { loads: [], saves: [], failSaves: false }
    const first = await startServer(databaseUrl, dataDir, spy)
    expect(await Effect.runPromise(first.snapshots.take)).toMatchObject({ _tag: "Skipped" }) // nothing folded yet
    for (const [i, third] of thirds.entries()) {
      expect((await post(first, third)).status).toBe(200)
      if (i < 2) expect(await Effect.runPromise(first.snapshots.take)).toMatchObject({ _tag: "Written" })
    }
    expect(spy.saves.length).toBe(2)
    // the first serialized here (nothing to build on), the second built in a worker from the first
    expect(spy.loads).toEqual([spy.saves[0]])
    spy.loads.length = 0
    paths = pathsOf(first.market)
    first.market.advanceTo(Date.now())
    reference = await readAll(first, paths)
    stats = first.market.engine.stats
    spy.failSaves = true // as if the process died: no snapshot at shutdown
    await first.close()
    expect(snapshotFiles(dataDir)).toEqual([...spy.saves].sort())

    const second = await startServer(databaseUrl, dataDir, spy)
    expect(spy.loads).toEqual([spy.saves[1]]) // the newest; the last third replayed from the log
    expect(second.market.engine.stats).toEqual(stats)
    expectSameReads(await readAll(second, paths), reference, paths)
    await second.close()
  }, 120_000)

  it("a damaged newest snapshot falls back to the previous one, a damaged last one to the full log, nothing lost", async () => {
    const spy: Spy = { loads: [], saves: [], failSaves: true }
    const [older, newer] = snapshotFiles(dataDir)
    const directory = FileSnapshotStore.directoryIn(dataDir)
    // one flipped byte in the newest one's body: its checksum no longer matches
    const bytes = readFileSync(join(directory, newer!))
    bytes[bytes.length - 100] ^= 0xff
    writeFileSync(join(directory, newer!), bytes)
    const third = await startServer(databaseUrl, dataDir, spy)
    expect(spy.loads).toEqual([older])
    expect(third.market.engine.stats).toEqual(stats)
    expectSameReads(await readAll(third, paths), reference, paths)
    await third.close()

    // the older one cut short: no snapshot left to use, the whole log is replayed
    truncateSync(join(directory, older!), 1_000)
    spy.loads.length = 0
    const fourth = await startServer(databaseUrl, dataDir, spy)
    expect(spy.loads).toEqual([])
    expect(fourth.market.engine.stats).toEqual(stats)
    expectSameReads(await readAll(fourth, paths), reference, paths)
    await fourth.close()

    // and the same answers from a server that never uses snapshots
    const plain = await startServer(databaseUrl, scratchDirectory("spot-snapshots-off-"), spy, Snapshots.disabledSnapshotSettings)
    expectSameReads(await readAll(plain, paths), reference, paths)
    await plain.close()
  }, 120_000)

  it("a graceful stop writes a snapshot at the log's head; the restart replays nothing and answers the same", async () => {
    const spy: Spy = { loads: [], saves: [], failSaves: false }
    const fifth = await startServer(databaseUrl, dataDir, spy)
    expect(spy.loads).toEqual([]) // both left are damaged
    await fifth.close()
    expect(spy.saves.length).toBe(1)
    // only the newest two are kept: the damaged ones are gone
    expect(snapshotFiles(dataDir)).toEqual(spy.saves)

    const sixth = await startServer(databaseUrl, dataDir, spy)
    expect(spy.loads).toEqual(spy.saves)
    expect(sixth.market.engine.stats).toEqual(stats)
    expectSameReads(await readAll(sixth, paths), reference, paths)
    await sixth.close()
    expect(spy.saves.length).toBe(1) // nothing new folded: no second snapshot of the same seq
  }, 120_000)

  it("never uses a snapshot of another database's log, however similar", async () => {
    const spy: Spy = { loads: [], saves: [], failSaves: false }
    const otherUrl = `postgres://postgres@127.0.0.1:${otherDatabase.port}/${otherDatabase.database}`
    // The same events into another database: same seqs, same event ids, another log.
    const filler = await startServer(otherUrl, scratchDirectory("spot-snapshots-other-"), spy, Snapshots.disabledSnapshotSettings)
    for (const third of thirds) expect((await post(filler, third)).status).toBe(200)
    await filler.close()

    const snapshotsBefore = snapshotFiles(dataDir)
    expect(snapshotsBefore.length).toBe(1)
    const other = await startServer(otherUrl, dataDir, spy)
    expect(spy.loads).toEqual([]) // ignored: another log identity
    expect(other.market.engine.stats).toEqual(stats)
    expectSameReads(await readAll(other, paths), reference, paths)
    await other.close()
  }, 120_000)
})
