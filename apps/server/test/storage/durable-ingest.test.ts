/**
 * Durable ingest through the real server: POST /admin/v1/events into PostgreSQL, duplicates,
 * whole-batch refusal, an outage mid-ingest (the proxy in front of the database is cut: reads keep
 * answering from memory, ingest answers 503, then recovers by itself with nothing lost or
 * doubled), and a restart that rebuilds identical REST responses from the log.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Market } from "@spot/application"
import { Events, Fixed } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import type { MarketEvent } from "@spot/domain"
import { SqlClient } from "effect/sql"
import { MemoryKeyStore, PgDatabase } from "@spot/adapters-storage"
import { apiKey } from "../http/support/ReadApi.js"
import { startTestServer, testServerConfig } from "../support/TestServer.js"
import type { CuttableProxy, TestDatabase } from "./support.js"
import { startDatabase, startProxy } from "./support.js"

const ingestKey = "ik_test_durableIngestKey_0123456789abcdef"

interface Running {
  readonly url: string
  readonly market: Market.MarketShape
  readonly close: () => Promise<void>
}

const startServer = async (databaseUrl: string): Promise<Running> => {
  const market = Market.makeMarket()
  const { url, close } = await startTestServer(
    testServerConfig({ databaseUrl: Option.some(Redacted.make(databaseUrl)), ingestKeys: [Redacted.make(ingestKey)] }),
    { market: Layer.succeed(Market.Market, market), keyStore: MemoryKeyStore.layer({ seedKeys: [Redacted.make(apiKey)] }) }
  )
  return { url, market, close }
}

const post = async (server: Running, body: unknown, key = ingestKey) => {
  const response = await fetch(`${server.url}/admin/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as any }
}

const withoutUpdatedAt = (text: string): string => text.replace(/"updatedAt":\d+/g, '"updatedAt":0')

const get = async (server: Running, path: string) => {
  const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${apiKey}` } })
  return { status: response.status, text: await response.text() }
}

/** Simulated events two days old: every trailing window is empty by the time they are read, so reads do not move with the clock. */
const history = (): Array<unknown> => {
  const simulator = new Simulator.MarketSimulator({ seed: 5, startTime: Date.now() - 2 * 86_400_000, tradesPerSecond: 30, launchesPerMinute: 30 })
  return simulator.runFor(4 * 60_000).map((event: MarketEvent) => Events.encodeMarketEvent(event))
}

describe("durable ingest on the real server", () => {
  let database: TestDatabase
  let proxy: CuttableProxy
  let databaseUrl: string
  const events = history()
  const firstHalf = events.slice(0, Math.floor(events.length / 2))
  // Sent as NDJSON; the rest is what the outage test sends.
  const ndjsonPart = events.slice(firstHalf.length, Math.floor((events.length * 3) / 4))
  const secondHalf = events.slice(firstHalf.length + ndjsonPart.length)
  let server: Running

  beforeAll(async () => {
    database = await startDatabase()
    proxy = await startProxy(database.port)
    databaseUrl = `postgres://postgres@127.0.0.1:${proxy.port}/${database.database}`
    server = await startServer(databaseUrl)
  })
  afterAll(async () => {
    await server?.close()
    await proxy?.close()
    await database?.drop()
  })

  it("accepts a batch once; the same batch again changes nothing", async () => {
    expect(firstHalf.length).toBeGreaterThan(1_000)
    expect(await post(server, firstHalf)).toEqual({ status: 200, body: { accepted: firstHalf.length, duplicates: 0 } })
    const tradesBefore = server.market.engine.stats.trades
    expect(await post(server, firstHalf)).toEqual({ status: 200, body: { accepted: 0, duplicates: firstHalf.length } })
    expect(server.market.engine.stats.trades).toBe(tradesBefore)
  })

  it("refuses the whole batch when one event is invalid, naming it", async () => {
    const launch = events.find((e: any) => e.type === "tokenLaunched") as any
    const swap = { ...(events.find((e: any) => e.type === "swap") as any) }
    // A new address of the launch's chain (EVM: hex digits; Solana: base58).
    const fresh = { ...launch, id: "test:launch:fresh", token: `${launch.token.slice(0, -4)}${launch.token.startsWith("0x") ? "ffff" : "zzzz"}` }
    const badSwap = { ...swap, id: "test:swap:bad", tokenAmount: "-5" }
    const orphanSwap = { ...swap, id: "test:swap:orphan", token: "UnknownTokenAddress1111111111111111111111" }
    const badPool = { ...swap, id: "test:swap:badpool", poolAfter: { liquidityNative: "1.5", bondingCurvePct: "12" } }
    const eventsBefore = server.market.engine.stats.events
    const overfullCurve = { ...swap, id: "test:swap:overfull", poolAfter: { liquidityNative: "1", bondingCurvePct: "120" } }
    const tooManyDecimals = { ...fresh, id: "test:launch:decimals", decimals: 19 }
    const reply = await post(server, [fresh, { ...swap, id: "test:swap:ok", token: fresh.token }, badSwap, orphanSwap, badPool, overfullCurve, tooManyDecimals])
    expect(reply.status).toBe(400)
    expect(reply.body.error.code).toBe("VALIDATION_ERROR")
    const fields = reply.body.error.details.map((d: any) => d.field)
    expect(fields).toContain("events[2].tokenAmount")
    expect(fields).toContain("events[3].token") // "token … is unknown"
    expect(fields).toContain("events[4].poolAfter.liquidityNative")
    expect(reply.body.error.details).toContainEqual({ field: "events[5].poolAfter.bondingCurvePct", message: expect.stringMatching(/poolAfter.bondingCurvePct beyond 100/) })
    expect(reply.body.error.details).toContainEqual({ field: "events[6].decimals", message: expect.stringMatching(/at most 18: the API's decimal strings carry 18 places/) })
    expect(fields.some((f: string) => f.startsWith("events[0]") || f.startsWith("events[1]"))).toBe(false) // a launch then its swap in one batch is fine
    expect(server.market.engine.stats.events).toBe(eventsBefore)
  })

  it("accepts NDJSON: a line with just its event's fields is stored as sent, others re-encoded; a line that does not parse refuses the batch", async () => {
    expect(ndjsonPart.length).toBeGreaterThan(100)
    // Spacing and key order of the indexer's own on odd lines; a field the service does not know on line 3.
    const lines = ndjsonPart.map((e, i) =>
      i % 2 === 0 ? JSON.stringify(e) : JSON.stringify(Object.fromEntries(Object.entries(e as object).reverse()), null, 1).replace(/\n/g, " "))
    lines[3] = JSON.stringify({ ...(ndjsonPart[3] as object), note: "not in the schema" })
    const postNdjson = async (body: string) => {
      const response = await fetch(`${server.url}/admin/v1/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${ingestKey}`, "content-type": "application/x-ndjson" },
        body
      })
      return { status: response.status, body: (await response.json()) as any }
    }
    const eventsBefore = server.market.engine.stats.events
    // A line that does not parse, and a swap with a bad side after it: both reported in one answer.
    const swapAt = ndjsonPart.findIndex((e: any, i) => i >= 6 && e.type === "swap")
    expect(swapAt).toBeGreaterThan(0)
    const sideways = JSON.stringify({ ...(ndjsonPart[swapAt] as object), side: "sideways" })
    const brokenLines = [...lines.slice(0, 5), "{\"type\":", ...lines.slice(5, swapAt), sideways, ...lines.slice(swapAt + 1)]
    const broken = await postNdjson(brokenLines.join("\n"))
    expect(broken.status).toBe(400)
    expect(broken.body.error.details).toEqual([
      { field: "events[5]", message: "is not valid JSON" },
      { field: `events[${swapAt + 1}].side`, message: expect.stringContaining(`event "${(ndjsonPart[swapAt] as any).id}": `) }
    ])
    expect(server.market.engine.stats.events).toBe(eventsBefore)

    const body = lines.join("\r\n") + "\n"
    expect(await postNdjson(body)).toEqual({ status: 200, body: { accepted: lines.length, duplicates: 0 } })
    expect(await postNdjson(body)).toEqual({ status: 200, body: { accepted: 0, duplicates: lines.length } })

    const stored = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ id: string; body: string }>`SELECT id, body FROM market_events WHERE id IN ${sql.in(ndjsonPart.map((e: any) => e.id))}`
      }).pipe(Effect.provide(PgDatabase.layerClient({ url: Redacted.make(databaseUrl) })))
    )
    const bodies = new Map(stored.map((row) => [row.id, row.body]))
    ndjsonPart.forEach((e: any, i) => expect(bodies.get(e.id), `line ${i}`).toBe(i === 3 ? JSON.stringify(e) : lines[i]))
  })

  it("folds a swap's poolAfter into the token's liquidity and curve; a swap without it is stored with it null", async () => {
    const launch = events.find((e: any) => e.type === "tokenLaunched" && e.hasCurve && e.chain === "solana") as any
    const swap = events.find((e: any) => e.type === "swap" && e.chain === "solana") as any
    const token = `${launch.token.slice(0, -4)}pa11`
    const { poolAfter: _, ...withoutPoolAfter } = { ...swap, id: "test:pool:swap1", token, timestamp: launch.timestamp + 1 }
    const withPoolAfter = {
      ...swap, id: "test:pool:swap2", token, timestamp: launch.timestamp + 2, side: "buy",
      poolAfter: { liquidityNative: "123400000000", bondingCurvePct: "12.5" }
    }
    const reply = await post(server, [{ ...launch, id: "test:pool:launch", token }, withoutPoolAfter])
    expect(reply).toEqual({ status: 200, body: { accepted: 2, duplicates: 0 } })
    const before = JSON.parse((await get(server, `/v1/tokens/solana/${token}`)).text)
    expect(before.bondingCurvePct).toBe("0")
    expect(before.liquidity.native).toBe("0")

    expect((await post(server, [withPoolAfter])).status).toBe(200)
    const after = JSON.parse((await get(server, `/v1/tokens/solana/${token}`)).text)
    expect(after.bondingCurvePct).toBe("12.5")
    expect(after.liquidity.native).toBe("123.4") // lamports to SOL
    // valued at the swap's own nativeUsd, exactly
    expect(after.liquidity.usd).toBe(Fixed.format(Fixed.mul(Fixed.unsafeParse("123.4"), Fixed.unsafeParse(swap.nativeUsd))))
    expect(after.anchorSymbol).toBe(swap.quoteSymbol)

    const stored = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ body: string }>`SELECT body FROM market_events WHERE id = 'test:pool:swap1'`
      }).pipe(Effect.provide(PgDatabase.layerClient({ url: Redacted.make(databaseUrl) })))
    )
    expect(JSON.parse(stored[0]!.body).poolAfter).toBeNull()
  })

  it("refuses customer keys and unknown keys on /admin/, and ingest keys on /v1", async () => {
    expect((await post(server, [], apiKey)).status).toBe(401)
    expect((await post(server, [], "ik_wrong")).status).toBe(401)
    const response = await fetch(`${server.url}/v1/trades?identity=kol`, { headers: { authorization: `Bearer ${ingestKey}` } })
    expect(response.status).toBe(401)
  })

  it("decides the key on the path as routed: spellings that reach the ingest route take the ingest key, never a customer key", async () => {
    // The router matches these paths to the ingest route: a key check comparing the literal prefix
    // `/admin/` would accept a customer key on them.
    for (const path of ["/ADMIN/v1/events", "/Admin/V1/Events", "//admin/v1/events", "/admin//v1/events", "/%61dmin/v1/events", "/admin/v1/events/"]) {
      const send = (key: string) =>
        fetch(server.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: "[]" })
      const customer = await send(apiKey)
      expect([path, customer.status]).toEqual([path, 401])
      expect(((await customer.json()) as any).error.code).toBe("UNAUTHORIZED")
      // ... and the path does reach the ingest route: the ingest key is taken there
      const operator = await send(ingestKey)
      expect([path, operator.status]).not.toContainEqual(401)
      expect([path, operator.status]).not.toContainEqual(404)
    }
  })

  it("keeps serving reads while the database is down, answers 503 to ingest, and recovers with nothing lost or doubled", async () => {
    const token = [...server.market.engine.allTokens()].find((t) => t.hasMarket)!
    const tokenPath = `/v1/tokens/${token.chain}/${token.address}`
    const before = await get(server, tokenPath)
    expect(before.status).toBe(200)

    proxy.cut()
    const during = await post(server, secondHalf.slice(0, 500))
    expect(during.status).toBe(503)
    expect(during.body.error.code).toBe("SERVICE_UNAVAILABLE")
    expect(await get(server, tokenPath)).toEqual(before)

    proxy.restore()
    let recovered = await post(server, secondHalf)
    for (let attempt = 0; recovered.status === 503 && attempt < 50; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      recovered = await post(server, secondHalf)
    }
    expect(recovered).toEqual({ status: 200, body: { accepted: secondHalf.length, duplicates: 0 } })
    // The history once, plus the three events of the poolAfter test: nothing lost, nothing doubled.
    expect(server.market.engine.stats.events).toBe(events.length + 3)
  })

  it("restarts with the same state: identical REST responses, a token's whole trade history included", async () => {
    const tokens = [...server.market.engine.allTokens()].filter((t) => t.hasMarket).slice(0, 5)
    expect(tokens.length).toBeGreaterThan(0)
    const paths = [
      ...tokens.flatMap((t) => [`/v1/tokens/${t.chain}/${t.address}`, `/v1/tokens/${t.chain}/${t.address}/trades?limit=100`]),
      "/v1/trades?identity=kol&limit=100"
    ]
    server.market.advanceTo(Date.now())
    // The busiest token's whole trade history: past the newest 50 kept in memory, from the trade archive.
    const busiest = [...server.market.engine.allTokens()]
      .map((t) => ({ t, swaps: events.filter((e: any) => e.type === "swap" && e.chain === t.chain && e.token === t.address).length }))
      .sort((a, b) => b.swaps - a.swaps)[0]!
    expect(busiest.swaps).toBeGreaterThan(server.market.engine.options.recentTradesPerToken + 20)
    const allPages = async (path: string) => {
      const pages: Array<string> = []
      let cursor: string | null = null
      do {
        const page = await get(server, `${path}?limit=40${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
        expect(page.status, page.text.slice(0, 300)).toBe(200)
        pages.push(page.text)
        cursor = JSON.parse(page.text).nextCursor
      } while (cursor !== null)
      return pages
    }
    const historyPath = `/v1/tokens/${busiest.t.chain}/${busiest.t.address}/trades`
    const historyBefore = await allPages(historyPath)
    expect(historyBefore.flatMap((text) => JSON.parse(text).trades).length).toBe(busiest.swaps)
    const before = await Promise.all(paths.map((p) => get(server, p)))
    const statsBefore = server.market.engine.stats
    await server.close()

    server = await startServer(databaseUrl)
    expect(server.market.engine.stats).toEqual(statsBefore)
    expect(await allPages(historyPath)).toEqual(historyBefore)
    const after = await Promise.all(paths.map((p) => get(server, p)))
    for (let i = 0; i < paths.length; i++) {
      expect(after[i]!.status, paths[i]).toBe(200)
      // `updatedAt` of a token is when its trailing windows last rolled: the service's clock at
      // start-up (`advanceTo(now)` after the replay), not data. Everything else is byte-identical.
      expect(withoutUpdatedAt(after[i]!.text), paths[i]).toBe(withoutUpdatedAt(before[i]!.text))
    }
  })
})

describe("start-up while the database does not answer", () => {
  it("waits for it, saying so, and serves once it answers (no exit, no stack trace)", async () => {
    const database = await startDatabase()
    const proxy = await startProxy(database.port)
    proxy.cut() // connections are refused until restore()
    let server: Running | undefined
    try {
      let started = false
      const starting = startServer(`postgres://postgres@127.0.0.1:${proxy.port}/${database.database}`).then((s) => {
        started = true
        server = s
        return s
      })
      await new Promise((resolve) => setTimeout(resolve, 3_000))
      expect(started).toBe(false) // still waiting, not failed: a failure would reject `starting`
      proxy.restore()
      const running = await starting
      const launch = (history() as Array<{ type: string }>).find((e) => e.type === "tokenLaunched")!
      expect(await post(running, [launch])).toEqual({ status: 200, body: { accepted: 1, duplicates: 0 } })
    } finally {
      await server?.close()
      await proxy.close()
      await database.drop()
    }
  }, 60_000)
})
