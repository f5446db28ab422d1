/**
 * Trade pages on the real server: one token's trades and the identity feeds (spec "GET
 * /v1/tokens/{chain}/{address}/trades", "GET /v1/trades", "Cursor pagination rules" 1-4),
 * including paging while the market keeps moving.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { MarketEvent, TradePage as TradePageType } from "@spot/domain"
import { Chain, TradePage } from "@spot/domain"
import type { ReadApi, SimulatedMarket } from "./support/ReadApi.js"
import { expectError, expectWire, query, simulatedMarket, startReadApi } from "./support/ReadApi.js"

const unknownSolana = "Unknown111111111111111111111111111111111111"

describe("trade pages", () => {
  let api: ReadApi
  let simulated: SimulatedMarket
  /** A token with several pages of trades. */
  let busy: { chain: string; address: string }
  let busyPath: string
  let other: { chain: string; address: string }

  beforeAll(async () => {
    simulated = simulatedMarket({ minutes: 4, seed: 21, tradesPerSecond: 40, launchesPerMinute: 20 })
    const engine = simulated.market.engine
    const bySize = [...engine.allTokens()]
      .map((t) => ({ token: t, trades: engine.tokenTradePage(t.chain, t.address, null, 10_000).records.length }))
      .filter((t) => t.trades >= 30)
      .sort((a, b) => b.trades - a.trades)
    busy = { chain: bySize[0]!.token.chain, address: bySize[0]!.token.address }
    other = { chain: bySize[1]!.token.chain, address: bySize[1]!.token.address }
    busyPath = `/v1/tokens/${busy.chain}/${busy.address}/trades`
    api = await startReadApi({ market: simulated.market })
  })
  afterAll(() => api.close())

  const page = async (path: string): Promise<TradePageType> => expectWire(TradePage, await api.get(path))

  /** Reads every page of a read, `limit` at a time; `between` runs before each next page. */
  const readAll = async (path: string, limit: number, between: (pageIndex: number) => void = () => {}) => {
    const pages: Array<TradePageType> = []
    const separator = path.includes("?") ? "&" : "?"
    let current = await page(`${path}${separator}limit=${limit}`)
    pages.push(current)
    while (current.hasMore) {
      expect(current.nextCursor).not.toBeNull()
      between(pages.length)
      current = await page(`${path}${separator}limit=${limit}&cursor=${encodeURIComponent(current.nextCursor!)}`)
      pages.push(current)
      expect(pages.length).toBeLessThan(1_000)
    }
    expect(current.nextCursor).toBeNull()
    return { pages, trades: pages.flatMap((p) => p.trades) }
  }

  const expectNewestFirst = (trades: TradePageType["trades"]) => {
    for (let i = 1; i < trades.length; i++) expect(trades[i]!.timestamp).toBeLessThanOrEqual(trades[i - 1]!.timestamp)
  }

  const engineTokenTradeIds = (token: { chain: string; address: string }) =>
    simulated.market.engine
      .tokenTradePage(token.chain as Chain.Chain, token.address, null, 10_000)
      .records.map((r) => r.trade.id)

  describe("GET /v1/tokens/{chain}/{address}/trades", () => {
    it("answers 20 trades of the token by default, newest first, valid under the TradePage wire schema", async () => {
      const served = await page(busyPath)
      expect(served.trades.length).toBe(20)
      expect(served.hasMore).toBe(true)
      expect(typeof served.nextCursor).toBe("string")
      expectNewestFirst(served.trades)
      for (const trade of served.trades) {
        expect(trade.chain).toBe(busy.chain)
        expect(trade.token).toBe(busy.address)
      }
    })

    it("clamps limit instead of refusing it: 0 and negatives give 1 trade, 1000 gives at most 100", async () => {
      expect((await page(`${busyPath}?limit=0`)).trades.length).toBe(1)
      expect((await page(`${busyPath}?limit=-7`)).trades.length).toBe(1)
      const total = engineTokenTradeIds(busy).length
      expect((await page(`${busyPath}?limit=1000`)).trades.length).toBe(Math.min(100, total))
      expect((await page(`${busyPath}?limit=100`)).trades.length).toBe(Math.min(100, total))
      // Whole numbers of any length: clamped, never refused.
      expect((await page(`${busyPath}?limit=99999999999999999999`)).trades.length).toBe(Math.min(100, total))
      expect((await page(`${busyPath}?limit=-99999999999999999999`)).trades.length).toBe(1)
      expect((await page(`${busyPath}?limit=${"9".repeat(400)}`)).trades.length).toBe(Math.min(100, total))
    })

    it("answers 400 VALIDATION_ERROR on limit for a limit that is not a whole number", async () => {
      expectError(await api.get(`${busyPath}?limit=ten`), 400, "VALIDATION_ERROR", ["limit"], true)
    })

    it("pages through every trade exactly once, newest first, until hasMore is false (cursor rule 4)", async () => {
      const { pages, trades } = await readAll(busyPath, 7)
      expect(pages.slice(0, -1).every((p) => p.trades.length === 7 && p.hasMore)).toBe(true)
      expect(pages[pages.length - 1]!.hasMore).toBe(false)
      expectNewestFirst(trades)
      expect(trades.map((t) => t.id)).toEqual(engineTokenTradeIds(busy))
      expect(new Set(trades.map((t) => t.id)).size).toBe(trades.length)
    })

    it("accepts a page size change between pages (the cursor marks a position, not a page)", async () => {
      const first = await page(`${busyPath}?limit=5`)
      const second = await page(`${busyPath}?limit=11&cursor=${encodeURIComponent(first.nextCursor!)}`)
      expect([...first.trades, ...second.trades].map((t) => t.id)).toEqual(engineTokenTradeIds(busy).slice(0, 16))
    })

    it("answers 200 with an empty last page for a well-formed address no token has (not 404)", async () => {
      expect(await page(`/v1/tokens/solana/${unknownSolana}/trades`)).toEqual({ trades: [], nextCursor: null, hasMore: false })
      expect(await page("/v1/tokens/base/0x00000000000000000000000000000000000000aa/trades")).toEqual({
        trades: [],
        nextCursor: null,
        hasMore: false
      })
    })

    it("answers 400 VALIDATION_ERROR on cursor for an undecodable or altered cursor, never restarting from the first page (cursor rule 3)", async () => {
      const first = await page(`${busyPath}?limit=3`)
      const cursor = first.nextCursor!
      const flipped = cursor.slice(0, -2) + (cursor.endsWith("A") ? "B" : "A") + cursor.slice(-1)
      for (const bad of ["garbage", "", "%%%", cursor.slice(0, -1), flipped, `${cursor}x`, cursor.toUpperCase()]) {
        if (bad === cursor) continue
        const reply = await api.get(`${busyPath}?limit=3&cursor=${encodeURIComponent(bad)}`)
        expectError(reply, 400, "VALIDATION_ERROR", ["cursor"], true)
      }
    })

    it("answers 400 VALIDATION_ERROR on cursor for a cursor made by another read (another token, or the identity feed)", async () => {
      const fromOtherToken = (await page(`/v1/tokens/${other.chain}/${other.address}/trades?limit=2`)).nextCursor!
      expectError(await api.get(`${busyPath}?cursor=${encodeURIComponent(fromOtherToken)}`), 400, "VALIDATION_ERROR", ["cursor"], true)
      const fromFeed = (await page("/v1/trades?identity=kol&limit=1")).nextCursor!
      expectError(await api.get(`${busyPath}?cursor=${encodeURIComponent(fromFeed)}`), 400, "VALIDATION_ERROR", ["cursor"], true)
    })

    it("answers 400 VALIDATION_ERROR naming a parameter the read does not take", async () => {
      expectError(await api.get(`${busyPath}?limit=5&flags=sniper`), 400, "VALIDATION_ERROR", ["flags"], true)
      // one with an empty name is named as it is (""), not as the request
      const unnamed = await api.get(`${busyPath}?limit=5&=x`)
      expectError(unnamed, 400, "VALIDATION_ERROR", [""], true)
      expect((unnamed.body as any).error.message).toBe('Invalid request: "". Fix the listed fields and retry.')
    })

    it("answers 400 VALIDATION_ERROR on limit for a parameter sent twice", async () => {
      expectError(await api.get(`${busyPath}?limit=5&limit=6`), 400, "VALIDATION_ERROR", ["limit"])
    })

    it("answers 400 UNSUPPORTED_CHAIN for an unsupported chain and 400 VALIDATION_ERROR on address for a malformed address", async () => {
      expectError(await api.get(`/v1/tokens/ethereum/${busy.address}/trades`), 400, "UNSUPPORTED_CHAIN", ["chain"])
      expectError(await api.get(`/v1/tokens/solana/0xnothex/trades`), 400, "VALIDATION_ERROR", ["address"], true)
    })
  })

  describe("GET /v1/trades", () => {
    const allChains = [...Chain.chains]
    const engineFeedIds = (identity: "kol" | "partnerscan", chains: ReadonlyArray<Chain.Chain> = allChains) =>
      simulated.market.engine.identityTradePage(identity, chains, null, 100_000).records.map((r) => r.trade.id)

    it("answers each identity feed with trades by that feed's wallets across tokens and chains, newest first", async () => {
      for (const identity of ["kol", "partnerscan"] as const) {
        const { trades } = await readAll(`/v1/trades?identity=${identity}`, 100)
        expect(trades.length).toBeGreaterThan(5)
        expectNewestFirst(trades)
        expect(trades.map((t) => t.id)).toEqual(engineFeedIds(identity))
        for (const trade of trades) {
          expect(Chain.isChain(trade.chain)).toBe(true)
          const wallet = simulated.market.engine.wallet(trade.chain, trade.trader)!
          expect(simulated.market.engine.inFeed(wallet, identity), `${trade.trader} is in the ${identity} feed`).toBe(true)
        }
        expect(new Set(trades.map((t) => `${t.chain}:${t.token}`)).size).toBeGreaterThan(1)
      }
    })

    it("narrows to the listed chains; a repeated slug is read once", async () => {
      const kolChains = new Set((await readAll("/v1/trades?identity=kol", 100)).trades.map((t) => t.chain))
      const [first, second] = [...kolChains] as Array<Chain.Chain>
      const narrowed = (await readAll(`/v1/trades?identity=kol&chains=${first},${first}`, 100)).trades
      expect(narrowed.map((t) => t.id)).toEqual(engineFeedIds("kol", [first!]))
      expect(narrowed.every((t) => t.chain === first)).toBe(true)
      if (second !== undefined) {
        const two = (await readAll(`/v1/trades?identity=kol&chains=${second},${first}`, 100)).trades
        expect(two.map((t) => t.id)).toEqual(engineFeedIds("kol", [first!, second]))
      }
    })

    it("clamps limit instead of refusing it: 0 gives 1 trade, 1000 gives at most 100", async () => {
      expect((await page("/v1/trades?identity=kol&limit=0")).trades.length).toBe(1)
      expect((await page("/v1/trades?identity=kol&limit=1000")).trades.length).toBe(Math.min(100, engineFeedIds("kol").length))
      expect((await page("/v1/trades?identity=kol")).trades.length).toBe(Math.min(20, engineFeedIds("kol").length))
    })

    it("answers 400 VALIDATION_ERROR on identity when identity is missing or unknown", async () => {
      expectError(await api.get("/v1/trades"), 400, "VALIDATION_ERROR", ["identity"], true)
      expectError(await api.get("/v1/trades?identity=whale"), 400, "VALIDATION_ERROR", ["identity"], true)
      expectError(await api.get("/v1/trades?identity=KOL"), 400, "VALIDATION_ERROR", ["identity"], true)
    })

    it("answers 400 VALIDATION_ERROR on chains for a chains list naming nothing", async () => {
      for (const chains of ["", ",", ",,"]) {
        expectError(await api.get(`/v1/trades${query({ identity: "kol", chains })}`), 400, "VALIDATION_ERROR", ["chains"], true)
      }
      // entries are read as written: " " is a slug no chain has
      expectError(await api.get(`/v1/trades${query({ identity: "kol", chains: " , ," })}`), 400, "UNSUPPORTED_CHAIN", ["chains"])
    })

    it("answers 400 UNSUPPORTED_CHAIN on chains for an unsupported slug in the list", async () => {
      expectError(await api.get("/v1/trades?identity=kol&chains=solana,ethereum"), 400, "UNSUPPORTED_CHAIN", ["chains"])
      // entries as written: with a space a slug is no slug, as in a path; a stray comma is a malformed list
      expectError(await api.get("/v1/trades?identity=kol&chains=%20solana"), 400, "UNSUPPORTED_CHAIN", ["chains"])
      expectError(await api.get("/v1/trades?identity=kol&chains=solana,"), 400, "VALIDATION_ERROR", ["chains"], true)
    })

    it("answers 400 VALIDATION_ERROR naming each unknown parameter", async () => {
      expectError(await api.get("/v1/trades?identity=kol&chain=solana&flags=sniper"), 400, "VALIDATION_ERROR", ["chain", "flags"], true)
      expectError(await api.get("/v1/trades?identity=kol&token=abc"), 400, "VALIDATION_ERROR", ["token"], true)
    })

    it("answers 400 VALIDATION_ERROR on cursor for an undecodable cursor", async () => {
      expectError(await api.get("/v1/trades?identity=kol&cursor=not-a-cursor"), 400, "VALIDATION_ERROR", ["cursor"], true)
    })

    it("answers 400 VALIDATION_ERROR on cursor for a cursor from another feed or other chains", async () => {
      const kolCursor = (await page("/v1/trades?identity=kol&limit=1")).nextCursor!
      expectError(await api.get(`/v1/trades?identity=partnerscan&cursor=${encodeURIComponent(kolCursor)}`), 400, "VALIDATION_ERROR", ["cursor"], true)
      expectError(await api.get(`/v1/trades?identity=kol&chains=solana&cursor=${encodeURIComponent(kolCursor)}`), 400, "VALIDATION_ERROR", ["cursor"], true)
      const tokenCursor = (await page(`${busyPath}?limit=1`)).nextCursor!
      expectError(await api.get(`/v1/trades?identity=kol&cursor=${encodeURIComponent(tokenCursor)}`), 400, "VALIDATION_ERROR", ["cursor"], true)
    })

    it("gives a trade that ends two different reads each read's own cursor, the same one every time", async () => {
      // A kol trade that is neither among the first 100 of its token nor the token's oldest: the
      // kol feed's page of `k` and the token's page of `index + 1` both end with it.
      const feed = engineFeedIds("kol")
      let found: { k: number; index: number; chain: string; token: string } | undefined
      for (let k = 1; k <= Math.min(100, feed.length) && found === undefined; k++) {
        const trade = (await page(`/v1/trades?identity=kol&limit=${k}`)).trades[k - 1]!
        const ids = engineTokenTradeIds({ chain: trade.chain, address: trade.token })
        const index = ids.indexOf(trade.id)
        if (index >= 0 && index < 100 && index < ids.length - 1) found = { k, index, chain: trade.chain, token: trade.token }
      }
      expect(found).toBeDefined()
      const { k, index, chain, token } = found!
      const feedPath = `/v1/trades?identity=kol&limit=${k}`
      const tokenPath = `/v1/tokens/${chain}/${token}/trades?limit=${index + 1}`
      const feedPage = await page(feedPath)
      const tokenPage = await page(tokenPath)
      expect(tokenPage.trades.at(-1)!.id).toBe(feedPage.trades.at(-1)!.id)
      expect(feedPage.nextCursor).not.toBeNull()
      expect(tokenPage.nextCursor).not.toBeNull()
      expect(tokenPage.nextCursor).not.toBe(feedPage.nextCursor)
      // The same page read again: the same cursor.
      expect((await page(feedPath)).nextCursor).toBe(feedPage.nextCursor)
      expect((await page(tokenPath)).nextCursor).toBe(tokenPage.nextCursor)
      // Each cursor continues its own read and is refused by the other.
      expect((await api.get(`${feedPath}&cursor=${encodeURIComponent(feedPage.nextCursor!)}`)).status).toBe(200)
      expect((await api.get(`${tokenPath}&cursor=${encodeURIComponent(tokenPage.nextCursor!)}`)).status).toBe(200)
      expectError(await api.get(`${feedPath}&cursor=${encodeURIComponent(tokenPage.nextCursor!)}`), 400, "VALIDATION_ERROR", ["cursor"], true)
      expectError(await api.get(`${tokenPath}&cursor=${encodeURIComponent(feedPage.nextCursor!)}`), 400, "VALIDATION_ERROR", ["cursor"], true)
    })

    it("accepts a cursor with the chains list spelled in another order (same read)", async () => {
      const first = await page("/v1/trades?identity=kol&chains=solana,base&limit=1")
      if (first.nextCursor === null) return
      const reply = await api.get(`/v1/trades?identity=kol&chains=base,solana&limit=1&cursor=${encodeURIComponent(first.nextCursor)}`)
      expect(reply.status).toBe(200)
    })

    it("accepts a cursor of the every-chain read with every chain named, and the reverse", async () => {
      const all = "solana,base,bsc,robinhood,arc"
      const unnamed = await page("/v1/trades?identity=kol&limit=1")
      expect(unnamed.nextCursor).not.toBeNull()
      const named = await api.get(`/v1/trades?identity=kol&chains=${all},solana&limit=1&cursor=${encodeURIComponent(unnamed.nextCursor!)}`)
      expect(named.status, named.text).toBe(200)
      const namedFirst = await page(`/v1/trades?identity=kol&chains=arc,bsc,base,robinhood,solana&limit=1`)
      const reply = await api.get(`/v1/trades?identity=kol&limit=1&cursor=${encodeURIComponent(namedFirst.nextCursor!)}`)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.trades).toEqual(named.body.trades)
    })
  })

  // Last: these fold new events into the market.
  describe("paging while the market moves (cursor rule 2)", () => {
    /** The next simulated events, in two halves, and the tokens they trade. */
    const nextEvents = (ms: number) => {
      const events = simulated.simulator.advance(simulated.endTime + ms)
      simulated = { ...simulated, endTime: simulated.endTime + ms }
      const half = Math.floor(events.length / 2)
      return [events.slice(0, half), events.slice(half)] as const
    }
    const swapsOn = (events: ReadonlyArray<MarketEvent>, token: { chain: string; address: string }) =>
      events.filter((e) => e.type === "swap" && e.chain === token.chain && Chain.canonicalAddress(e.chain, e.token) === token.address).length

    it("a token's pages neither repeat nor skip the trades present at the first page while new trades arrive", async () => {
      const [firstHalf, secondHalf] = nextEvents(60_000)
      const all = [...firstHalf, ...secondHalf]
      // A token trading in the new events whose kept trades will not overflow the per-token window.
      const engine = simulated.market.engine
      // Per token the market keeps only its newest trades (deeper history is storage's to serve):
      // the guarantee holds for trades that stay kept, so pick a token whose arrivals evict none.
      const kept = engine.options.recentTradesPerToken
      const moving = [...engine.allTokens()]
        .map((t) => ({ token: { chain: t.chain, address: t.address }, held: engine.tokenTradePage(t.chain, t.address, null, 10_000).records.length }))
        .filter((t) => swapsOn(firstHalf, t.token) >= 1 && swapsOn(secondHalf, t.token) >= 1 && t.held >= 12 && t.held + swapsOn(all, t.token) <= kept)
        .sort((a, b) => b.held - a.held)[0]
      expect(moving, "a token trading in the next minute").toBeDefined()
      const path = `/v1/tokens/${moving!.token.chain}/${moving!.token.address}/trades`
      const before = engineTokenTradeIds(moving!.token)
      const { trades } = await readAll(path, 4, (pageIndex) => {
        if (pageIndex === 1) api.market.apply(firstHalf)
        if (pageIndex === 2) api.market.apply(secondHalf)
      })
      // The new trades are newer than every cursor: the pages hold exactly the trades present before.
      expect(trades.map((t) => t.id)).toEqual(before)
      // And a fresh read now starts with the arrivals.
      const fresh = await page(`${path}?limit=1`)
      expect(before).not.toContain(fresh.trades[0]!.id)
    })

    it("an identity feed's pages neither repeat nor skip the trades present at the first page while new trades arrive", async () => {
      const feed = "kol" as const
      const before = simulated.market.engine.identityTradePage(feed, [...Chain.chains], null, 100_000).records.map((r) => r.trade.id)
      const [firstHalf, secondHalf] = nextEvents(60_000)
      const { trades } = await readAll(`/v1/trades?identity=${feed}`, 9, (pageIndex) => {
        if (pageIndex === 1) api.market.apply(firstHalf)
        if (pageIndex === 3) api.market.apply(secondHalf)
      })
      expect(trades.map((t) => t.id)).toEqual(before)
      const after = simulated.market.engine.identityTradePage(feed, [...Chain.chains], null, 100_000).records.length
      expect(after).toBeGreaterThan(before.length)
    })
  })
})
