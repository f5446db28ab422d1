/**
 * GET /v1/tokens/{chain}/{address} and its candles (spec "GET /v1/tokens/{chain}/{address}",
 * ".../ohlcv" rules 1-4), on the real server over a simulated market plus one hand-made token
 * with exactly one trade per second for 5,200 seconds (5,200 one-second candles, known in
 * advance).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { MarketEvent } from "@spot/domain"
import { CandlesResponse, Token } from "@spot/domain"
import { Events } from "@spot/domain/testing"
import type { ReadApi } from "./support/ReadApi.js"
import { expectError, expectWire, query, simulatedMarket, startReadApi } from "./support/ReadApi.js"

const chartToken = "Chart1111111111111111111111111111111111111"
const chartPool = "ChartPoo11111111111111111111111111111111111"
const chartCandles = 5_200
/** Second-aligned start of the hand-made token's trades, two hours ago. */
const chartStart = Math.floor((Date.now() - 2 * 3_600_000) / 1000) * 1000
const chartTraders = [
  "Trader1111111111111111111111111111111111111",
  "Trader2222222222222222222222222222222222222",
  "Trader3333333333333333333333333333333333333"
]
const candleTime = (i: number) => chartStart + i * 1000

/** Native price of swap i: (1e6 + 1000 i) lamports for one whole token. */
const chartNativePrice = (i: number) => (1_000_000 + i * 1000) / 1e9

const chartEvents = (): Array<MarketEvent> => {
  const events: Array<MarketEvent> = [
    Events.launch({ id: "chart-launch", timestamp: chartStart - 1000, token: chartToken, metadata: Events.metadata("Chart", "CHRT") })
  ]
  for (let i = 0; i < chartCandles; i++) {
    events.push(Events.swap({
      id: `chart-swap-${i}`,
      timestamp: candleTime(i),
      token: chartToken,
      pool: chartPool,
      trader: chartTraders[i % chartTraders.length]!,
      transactionHash: `chart-swap-tx-${i}`,
      block: 10 + i,
      quoteAmount: BigInt(1_000_000 + i * 1000)
    }))
  }
  return events
}

const chartPath = `/v1/tokens/solana/${chartToken}`
const unknownSolana = "Unknown111111111111111111111111111111111111"
const unknownEvm = "0x00000000000000000000000000000000000000aa"

describe("GET /v1/tokens/{chain}/{address}", () => {
  let api: ReadApi
  let evmToken: { chain: string; address: string }
  let solanaToken: { chain: string; address: string }
  beforeAll(async () => {
    const simulated = simulatedMarket({ minutes: 3, seed: 11, before: chartEvents() })
    const tokens = [...simulated.market.engine.allTokens()]
    evmToken = tokens.find((t) => t.chain !== "solana" && t.hasMarket)!
    solanaToken = tokens.find((t) => t.chain === "solana" && t.hasMarket && t.address !== chartToken)!
    api = await startReadApi({ market: simulated.market })
  })
  afterAll(() => api.close())

  describe("token", () => {
    it("answers 200 with the token object, valid under the Token wire schema, for tokens of every family", async () => {
      for (const token of [evmToken, solanaToken, { chain: "solana", address: chartToken }]) {
        const served = expectWire(Token, await api.get(`/v1/tokens/${token.chain}/${token.address}`))
        expect(served.chain).toBe(token.chain)
        expect(served.address).toBe(token.address)
        expect(Object.keys(served.stats).sort()).toEqual(["1h", "24h", "30m", "5m", "6h"])
      }
    })

    it("serves the hand-made token's state: metadata, supply and the latest price", async () => {
      const served = expectWire(Token, await api.get(chartPath))
      expect(served.name).toBe("Chart")
      expect(served.symbol).toBe("CHRT")
      expect(served.decimals).toBe(6)
      expect(served.supply).toBe("1000000000")
      expect(Number(served.price.native)).toBeCloseTo(chartNativePrice(chartCandles - 1), 12)
      expect(Number(served.price.usd)).toBeCloseTo(chartNativePrice(chartCandles - 1) * 150, 9)
    })

    it("reads an EVM address in any letter case as the same token", async () => {
      const served = expectWire(Token, await api.get(`/v1/tokens/${evmToken.chain}/${evmToken.address.toUpperCase().replace("0X", "0x")}`))
      expect(served.address).toBe(evmToken.address)
    })

    it("answers 404 NOT_FOUND for a well-formed address no token has", async () => {
      expectError(await api.get(`/v1/tokens/solana/${unknownSolana}`), 404, "NOT_FOUND")
      expectError(await api.get(`/v1/tokens/base/${unknownEvm}`), 404, "NOT_FOUND")
    })

    it("answers 400 VALIDATION_ERROR on field address for an address malformed for its chain", async () => {
      for (const path of ["/v1/tokens/solana/not-an-address", `/v1/tokens/base/${chartToken}`, `/v1/tokens/solana/${unknownEvm}`, "/v1/tokens/bsc/0x1234"]) {
        expectError(await api.get(path), 400, "VALIDATION_ERROR", ["address"], true)
      }
    })

    it("answers 400 UNSUPPORTED_CHAIN for a chain slug the service does not serve, in any spelling", async () => {
      for (const chain of ["ethereum", "Solana", "SOLANA", "doge"]) {
        expectError(await api.get(`/v1/tokens/${chain}/${chartToken}`), 400, "UNSUPPORTED_CHAIN", ["chain"])
      }
    })

    it("answers 400 VALIDATION_ERROR naming a query parameter the endpoint does not take", async () => {
      expectError(await api.get(`${chartPath}?fields=price`), 400, "VALIDATION_ERROR", ["fields"], true)
    })
  })

  describe("ohlcv", () => {
    const candles = async (params: Record<string, string | number>, path = chartPath) =>
      expectWire(CandlesResponse, await api.get(`${path}/ohlcv${query(params)}`)).candles

    it("rule 1: with neither countBack nor from, answers the latest 500 candles, oldest first", async () => {
      const served = await candles({ timeframe: "1s" })
      expect(served.map((c) => c.time)).toEqual(Array.from({ length: 500 }, (_, k) => candleTime(chartCandles - 500 + k)))
      // With `to`, the latest 500 before it.
      const before = await candles({ timeframe: "1s", to: candleTime(1000) })
      expect(before.map((c) => c.time)).toEqual(Array.from({ length: 500 }, (_, k) => candleTime(500 + k)))
    })

    it("rule 2: a window holding more than 5,000 candles keeps the newest 5,000", async () => {
      const served = await candles({ timeframe: "1s", from: chartStart })
      expect(served.length).toBe(5_000)
      expect(served[0]!.time).toBe(candleTime(chartCandles - 5_000))
      expect(served[served.length - 1]!.time).toBe(candleTime(chartCandles - 1))
      const bounded = await candles({ timeframe: "1s", from: chartStart, to: candleTime(5_100) })
      expect(bounded.map((c) => c.time)).toEqual(Array.from({ length: 5_000 }, (_, k) => candleTime(100 + k)))
    })

    it("rule 3: answers countBack 5,000 with 5,000 candles and refuses countBack 5,001 with 400 VALIDATION_ERROR on countBack", async () => {
      expect((await candles({ timeframe: "1s", countBack: 5_000 })).length).toBe(5_000)
      expect((await candles({ timeframe: "1s", countBack: 7 })).map((c) => c.time)).toEqual(
        Array.from({ length: 7 }, (_, k) => candleTime(chartCandles - 7 + k))
      )
      expectError(await api.get(`${chartPath}/ohlcv?timeframe=1s&countBack=5001`), 400, "VALIDATION_ERROR", ["countBack"], true)
    })

    it("rule 4: `to` is exclusive, and paging back with to = the oldest time received repeats nothing and misses nothing", async () => {
      const exclusive = await candles({ timeframe: "1s", to: candleTime(300), countBack: 1 })
      expect(exclusive.map((c) => c.time)).toEqual([candleTime(299)])
      const seen: Array<number> = []
      let page = await candles({ timeframe: "1s", countBack: 1_500 })
      for (let guard = 0; page.length > 0 && guard < 10; guard++) {
        seen.unshift(...page.map((c) => c.time))
        page = await candles({ timeframe: "1s", countBack: 1_500, to: page[0]!.time })
      }
      expect(seen).toEqual(Array.from({ length: chartCandles }, (_, i) => candleTime(i)))
    })

    it("answers each metric and denomination in its unit: price in SOL and USD, market cap = price x supply", async () => {
      const last = chartCandles - 1
      const [priceNative] = await candles({ timeframe: "1s", countBack: 1, metric: "price", denomination: "native" })
      const [priceUsd] = await candles({ timeframe: "1s", countBack: 1, metric: "price", denomination: "usd" })
      const [capUsd] = await candles({ timeframe: "1s", countBack: 1 })
      expect(priceNative!.close).toBeCloseTo(chartNativePrice(last), 12)
      expect(priceUsd!.close).toBeCloseTo(chartNativePrice(last) * 150, 9)
      expect(capUsd!.close / (chartNativePrice(last) * 150 * 1_000_000_000)).toBeCloseTo(1, 9)
      expect(priceUsd!.volume).toBeCloseTo(chartNativePrice(last) * 150, 9)
    })

    it("folds coarser timeframes: 1m candles of the hand-made token hold 60 trades each, on minute boundaries", async () => {
      const from = chartStart + 120_000
      const to = chartStart + 600_000
      const served = await candles({ timeframe: "1m", metric: "price", denomination: "native", from, to })
      // Every minute opening in [from, to), each folding the 60 one-second swaps inside it (swap i
      // trades one whole token for chartNativePrice(i) SOL: its price and its native volume).
      const expected = []
      for (let time = Math.ceil(from / 60_000) * 60_000; time < to; time += 60_000) {
        const swaps = Array.from({ length: chartCandles }, (_, i) => i).filter((i) => candleTime(i) >= time && candleTime(i) < time + 60_000)
        expect(swaps.length).toBe(60)
        const prices = swaps.map(chartNativePrice)
        const lamports = swaps.reduce((sum, i) => sum + 1_000_000 + i * 1000, 0)
        expected.push({ time, open: prices[0]!, high: Math.max(...prices), low: Math.min(...prices), close: prices[59]!, volume: lamports / 1e9 })
      }
      expect(expected.length).toBe(8)
      expect(served).toEqual(expected)
    })

    it("answers a simulated token's default candles (1m, marketCap, usd) oldest first on minute boundaries", async () => {
      for (const token of [evmToken, solanaToken]) {
        const served = await candles({}, `/v1/tokens/${token.chain}/${token.address}`)
        expect(served.length).toBeGreaterThan(0)
        for (let i = 1; i < served.length; i++) expect(served[i]!.time).toBeGreaterThan(served[i - 1]!.time)
        for (const candle of served) expect(candle.time % 60_000).toBe(0)
      }
    })

    it("answers 200 with no candles for a well-formed address no token has", async () => {
      expect(await candles({}, `/v1/tokens/solana/${unknownSolana}`)).toEqual([])
    })

    it("answers 400 VALIDATION_ERROR on the field for an unknown timeframe, metric or denomination", async () => {
      for (const [name, value] of [["timeframe", "2m"], ["timeframe", "1M"], ["metric", "volume"], ["denomination", "eur"]] as const) {
        expectError(await api.get(`${chartPath}/ohlcv?${name}=${value}`), 400, "VALIDATION_ERROR", [name], true)
      }
    })

    it("answers 400 VALIDATION_ERROR on the field for countBack, from or to that is not a whole number >= its minimum", async () => {
      for (const [name, value] of [["countBack", "ten"], ["countBack", "0"], ["countBack", "1.5"], ["from", "yesterday"], ["to", "-5"]] as const) {
        expectError(await api.get(`${chartPath}/ohlcv?${name}=${value}`), 400, "VALIDATION_ERROR", [name], true)
      }
      // The message names the side that was crossed: a time past 2^53 is too large, not negative.
      const [tooLarge] = expectError(await api.get(`${chartPath}/ohlcv?from=9007199254740992`), 400, "VALIDATION_ERROR", ["from"], true)
      expect(tooLarge!.message).toBe("from must be at most 9007199254740991")
      const [negative] = expectError(await api.get(`${chartPath}/ohlcv?to=-5`), 400, "VALIDATION_ERROR", ["to"], true)
      expect(negative!.message).toBe("to must be at least 0")
    })

    it("answers 400 VALIDATION_ERROR when from is not before to", async () => {
      expectError(await api.get(`${chartPath}/ohlcv${query({ from: candleTime(10), to: candleTime(10) })}`), 400, "VALIDATION_ERROR", ["from"])
    })

    it("answers 400 VALIDATION_ERROR naming every bad value at once", async () => {
      const reply = await api.get(`${chartPath}/ohlcv?timeframe=2m&metric=volume&countBack=0`)
      const details = expectError(reply, 400, "VALIDATION_ERROR", ["timeframe", "metric", "countBack"], true)
      // The message names the bound that applies, not the safe-integer range.
      expect(details.find((d) => d.field === "countBack")!.message).toBe("countBack must be at least 1")
    })

    it("answers 400 VALIDATION_ERROR naming an unknown parameter, such as the misspelt countback", async () => {
      expectError(await api.get(`${chartPath}/ohlcv?countback=10`), 400, "VALIDATION_ERROR", ["countback"], true)
    })

    it("answers 400 UNSUPPORTED_CHAIN and 400 VALIDATION_ERROR on address for a bad chain or address", async () => {
      expectError(await api.get(`/v1/tokens/doge/${chartToken}/ohlcv`), 400, "UNSUPPORTED_CHAIN", ["chain"])
      expectError(await api.get(`/v1/tokens/base/${chartToken}/ohlcv`), 400, "VALIDATION_ERROR", ["address"], true)
    })
  })
})
