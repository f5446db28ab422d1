/**
 * GET /v1/tokens/{chain}/{address} and its candles.
 */
import { Effect } from "effect"
import type { CandleValue, CandlesResponse, TokenBook } from "@spot/domain"
import { Candles, Chain } from "@spot/domain"
import { NotFound } from "../errors.js"
import { Market, type MarketShape } from "../Market.js"
import { Issues, refuseUnknown } from "./Params.js"

export interface TokenPath {
  readonly chain: string
  readonly address: string
}

/** Candles per request: 500 by default, 5,000 at most (spec "Limits"). */
export const defaultCandleCount = 500
export const maxCandleCount = 5_000

/**
 * The token a valid token path names, if the market holds it; undefined for a path `getToken`
 * would refuse (unsupported chain, malformed address) and for an unknown token. Synchronous: the
 * direct read of the HTTP adapter (DirectReads) answers with it when it finds a token.
 */
export const tokenAt = (market: MarketShape, path: TokenPath): TokenBook | undefined =>
  Chain.isChain(path.chain) && Chain.isAddressOn(path.chain, path.address)
    ? market.engine.token(path.chain, Chain.canonicalAddress(path.chain, path.address))
    : undefined

/** The token's state. An unknown token is 404 NOT_FOUND (docs/http-api.md). */
export const getToken = Effect.fnUntraced(function*(path: TokenPath, params: Readonly<Record<string, string | undefined>> = {}) {
  const issues = new Issues()
  const chain = issues.chain("chain", path.chain)
  const address = issues.address("address", chain, path.address)
  refuseUnknown(issues, params, [])
  yield* issues.check()
  // The same lookup as the direct read's (a path that passed the checks above names it the same way).
  const token = tokenAt(yield* Market, path)
  if (token === undefined) {
    return yield* new NotFound({ message: `no token ${address} on ${chain}: check the chain and address` })
  }
  return token
})

export const ohlcvParameters = ["timeframe", "metric", "denomination", "countBack", "from", "to"] as const
export const candleMetrics = ["price", "marketCap"] as const
export const candleDenominations = ["usd", "native"] as const

/**
 * Candles oldest first (spec "GET .../ohlcv" rules 1-4). `from`/`to` are integer Unix ms, `to`
 * exclusive; `countBack` 1-5,000. An unknown token has no candles: an empty list, as with trades.
 */
export const getCandles = Effect.fnUntraced(function*(path: TokenPath, params: Readonly<Record<string, string | undefined>>) {
  const issues = new Issues()
  const chain = issues.chain("chain", path.chain)
  const address = issues.address("address", chain, path.address)
  refuseUnknown(issues, params, ohlcvParameters)
  const timeframe = issues.oneOf("timeframe", params.timeframe, Candles.timeframes, "1m")
  const metric = issues.oneOf("metric", params.metric, candleMetrics, "marketCap")
  const denomination = issues.oneOf("denomination", params.denomination, candleDenominations, "usd")
  const countBack = issues.integer("countBack", params.countBack, 1)
  if (countBack !== undefined && countBack > maxCandleCount) {
    issues.add("countBack", `countBack is at most ${maxCandleCount}: page further back with to set to the oldest candle's time`)
  }
  const from = issues.integer("from", params.from, 0)
  const to = issues.integer("to", params.to, 0)
  if (from !== undefined && to !== undefined && from >= to) issues.add("from", "from must be before to (to is exclusive)")
  yield* issues.check()
  const market = yield* Market
  const token = market.engine.token(chain!, address!)
  const candles: Array<CandleValue> =
    token === undefined
      ? []
      : token.tape.candles({ timeframe: timeframe!, metric: metric!, denomination: denomination!, from, to, countBack })
  const response: CandlesResponse = { candles }
  return response
})
