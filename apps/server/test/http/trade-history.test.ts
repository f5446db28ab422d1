/**
 * Trade pages past memory: the engine keeps each token's newest trades, older ones leave memory
 * for the trade archive in blocks, and a page that reaches past memory continues there
 * (docs/storage.md, "Trade history"). Here memory keeps 5 trades per token (at least 3 once it
 * has let a block go), so a busy token's history is mostly archived;
 * paging it must give every trade it ever had, once, newest first, the same objects the API
 * served when they were new, also while trades arrive and before the archive's writer has run.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { TradePage as TradePageType } from "@spot/domain"
import { defaultEngineOptions, TradePage } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { Market, TradeStore } from "@spot/application"
import type { ReadApi } from "./support/ReadApi.js"
import { expectError, expectWire, startReadApi } from "./support/ReadApi.js"

const kept = 5

describe("trade pages past memory", () => {
  let api: ReadApi
  const store = TradeStore.makeMemory()
  const market = Market.makeMarket({ ...defaultEngineOptions, recentTradesPerToken: kept })
  /** The same events folded with room for every trade: the reference history. */
  const reference = Market.makeMarket({ ...defaultEngineOptions, recentTradesPerToken: 100_000 })
  const startTime = Date.now() - 5 * 60_000
  const simulator = new Simulator.MarketSimulator({ seed: 33, startTime, tradesPerSecond: 40, launchesPerMinute: 10 })
  let time = startTime
  const advance = (ms: number) => {
    time += ms
    const events = simulator.advance(time)
    expect(market.apply(events).rejected).toEqual([])
    expect(reference.apply(events).rejected).toEqual([])
  }
  let busy: { chain: string; address: string; path: string }

  beforeAll(async () => {
    // The server (and its trade history) first, then the market moves: every trade is seen.
    api = await startReadApi({ market, tradeStore: Layer.succeed(TradeStore, store) })
    advance(4 * 60_000)
    const tokens = [...reference.engine.allTokens()]
      .map((t) => ({ chain: t.chain, address: t.address, n: reference.engine.tokenTradePage(t.chain, t.address, null, 100_000).records.length }))
      .sort((a, b) => b.n - a.n)
    expect(tokens[0]!.n).toBeGreaterThan(8 * kept)
    busy = { ...tokens[0]!, path: `/v1/tokens/${tokens[0]!.chain}/${tokens[0]!.address}/trades` }
  })
  afterAll(() => api.close())

  const page = async (path: string): Promise<TradePageType> => expectWire(TradePage, await api.get(path))
  const referenceIds = () =>
    reference.engine.tokenTradePage(busy.chain as never, busy.address, null, 100_000).records.map((r) => r.id)

  const readAll = async (limit: number, between: (pageIndex: number) => void = () => {}) => {
    const trades: Array<TradePageType["trades"][number]> = []
    let current = await page(`${busy.path}?limit=${limit}`)
    trades.push(...current.trades)
    while (current.hasMore) {
      between(trades.length)
      current = await page(`${busy.path}?limit=${limit}&cursor=${encodeURIComponent(current.nextCursor!)}`)
      expect(current.trades.length).toBeGreaterThan(0)
      trades.push(...current.trades)
    }
    expect(current.nextCursor).toBeNull()
    return trades
  }

  it("pages through a token's whole history, beyond what memory keeps, before the archive is written", async () => {
    // Nothing written yet may be fine or not (the writer runs every 200 ms): either way the
    // queued trades are read with the archived ones.
    const trades = await readAll(7)
    expect(trades.map((t) => t.id)).toEqual(referenceIds())
    // A first page bigger than memory: memory's trades then the archive's, as one newest-first list.
    const big = await page(`${busy.path}?limit=100`)
    expect(big.trades.map((t) => t.id)).toEqual(referenceIds().slice(0, 100))
  })

  it("serves archived trades as the same objects the API served when they were in memory", async () => {
    const newest = await page(`${busy.path}?limit=${kept}`)
    // Push them out of memory: once the busy token trades `kept` more times, they are archived only.
    const before = referenceIds().length
    while (referenceIds().length < before + kept) advance(5_000)
    await Effect.runPromise(Effect.sleep("400 millis")) // the writer has run: they come from the store now
    expect(store.stored().some((t) => t.id === newest.trades[0]!.id)).toBe(true)
    const all = await readAll(100)
    const byId = new Map(all.map((t) => [t.id, t]))
    for (const trade of newest.trades) expect(byId.get(trade.id)).toEqual(trade)
  })

  it("neither repeats nor skips while trades arrive between pages", async () => {
    const before = referenceIds()
    const trades = await readAll(6, (n) => {
      if (n % 12 === 0) advance(3_000)
    })
    expect(trades.map((t) => t.id)).toEqual(before)
  })

  it("answers 503 for a page past memory while the archive is down, and serves memory's pages meanwhile", async () => {
    await Effect.runPromise(Effect.sleep("400 millis")) // everything written: the queue is empty
    store.failing = true
    try {
      const held = market.engine.tokenTradePage(busy.chain as never, busy.address, null, 1_000).records.length
      expect(held).toBeGreaterThanOrEqual(3)
      const newest = await page(`${busy.path}?limit=${held}`)
      expect(newest.trades.length).toBe(held)
      expectError(await api.get(`${busy.path}?limit=${held + 1}`), 503, "SERVICE_UNAVAILABLE")
      expectError(await api.get(`${busy.path}?limit=${held}&cursor=${encodeURIComponent(newest.nextCursor!)}`), 503, "SERVICE_UNAVAILABLE")
      // Trades keep arriving while it is down; none is lost once it is back.
      advance(10_000)
    } finally {
      store.failing = false
    }
    await Effect.runPromise(Effect.sleep("1500 millis")) // the writer's retry
    expect((await readAll(50)).map((t) => t.id)).toEqual(referenceIds())
    const ids = store.stored().map((t) => t.seq)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
