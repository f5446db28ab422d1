/**
 * The served read endpoints: each decodes its request with the contract's schemas and hands it
 * to one use case; the use case's typed errors become the envelope in ErrorResponses. Tokens,
 * trades and discovery answer with bytes assembled from per-object caches (Encoding): a token's
 * body is encoded once per change of the token, not per request.
 */
import { Effect, type Layer } from "effect"
import { HttpRouter } from "effect/http"
import { DiscoveryRequest } from "@spot/domain"
import { DiscoveryQueries, PositionQueries, TokenQueries, TradeQueries } from "@spot/application"
import { Market } from "@spot/application"
import type { CursorCodec, ReadError, TradeHistory } from "@spot/application"
import type { DirectRoute } from "../DirectReads.js"
import type { ApiError } from "../ApiError.js"
import * as ApiRoute from "../ApiRoute.js"
import { discoveryBytes, encodeCandles, encodePositionsPage, tokenBytes, tradePageBytes } from "./Encoding.js"
import { DiscoveryParams, IdentityTradesParams, OhlcvParams, PositionsParams, TokenParams, TokenPathParams, TokenTradesParams } from "./Params.js"

/** Needs the market, the cursor codec and the trade history (pages past memory). */
export const routes: Layer.Layer<
  never,
  never,
  | HttpRouter.HttpRouter
  | HttpRouter.Request<"Requires", Market.Market>
  | HttpRouter.Request<"Requires", CursorCodec>
  | HttpRouter.Request<"Requires", TradeHistory.TradeHistory>
  | HttpRouter.Request<"Error", ReadError | ApiError>
> = HttpRouter.addAll([
  ApiRoute.get("/v1/tokens/:chain/:address", {
    params: TokenPathParams,
    query: TokenParams,
    handler: ({ params }) => Effect.map(TokenQueries.getToken(params), (token) => ApiRoute.preEncodedBytes(tokenBytes(token)))
  }),
  ApiRoute.get("/v1/tokens/:chain/:address/ohlcv", {
    params: TokenPathParams,
    query: OhlcvParams,
    handler: ({ params, query }) =>
      Effect.map(TokenQueries.getCandles(params, query), (candles) => ApiRoute.preEncoded(JSON.stringify(encodeCandles(candles))))
  }),
  ApiRoute.get("/v1/tokens/:chain/:address/trades", {
    params: TokenPathParams,
    query: TokenTradesParams,
    handler: ({ params, query }) => Effect.map(TradeQueries.tokenTrades(params, query), (page) => ApiRoute.preEncodedBytes(tradePageBytes(page)))
  }),
  ApiRoute.get("/v1/trades", {
    query: IdentityTradesParams,
    handler: ({ query }) => Effect.map(TradeQueries.identityTrades(query), (page) => ApiRoute.preEncodedBytes(tradePageBytes(page)))
  }),
  ApiRoute.get("/v1/positions", {
    query: PositionsParams,
    handler: ({ query }) =>
      Effect.map(PositionQueries.positions(query), (page) => ApiRoute.preEncoded(JSON.stringify(encodePositionsPage(page))))
  }),
  ApiRoute.post("/v1/discovery", {
    query: DiscoveryParams,
    payload: DiscoveryRequest,
    handler: ({ payload }) => Effect.map(DiscoveryQueries.discover(payload), (columns) => ApiRoute.preEncodedBytes(discoveryBytes(columns)))
  })
])

const tokenPathPrefix = "/v1/tokens/"

/**
 * Reads answered before Effect's server when they succeed (DirectReads): `GET
 * /v1/tokens/{chain}/{address}` of a token the market holds, with no query string. Its body is
 * the one the route above sends (`tokenBytes`); a chain, address or query the route would refuse,
 * and an unknown token, are declined and answered by the route.
 */
export const directRoutes: Effect.Effect<ReadonlyArray<DirectRoute>, never, Market.Market> = Effect.gen(function*() {
  const market = yield* Market.Market
  const tokenRead: DirectRoute = (url) => {
    if (!url.startsWith(tokenPathPrefix)) return undefined
    const slash = url.indexOf("/", tokenPathPrefix.length)
    if (slash < 0) return undefined
    // A valid address has no "/", "?", "%" or "#": anything after the chain that is not one is declined.
    const token = TokenQueries.tokenAt(market, { chain: url.slice(tokenPathPrefix.length, slash), address: url.slice(slash + 1) })
    return token === undefined ? undefined : tokenBytes(token)
  }
  return [tokenRead]
})
