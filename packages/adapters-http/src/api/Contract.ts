/**
 * The read API's contract: every endpoint with its parameters, success body and errors, built from
 * the same schema objects that encode the responses. /openapi.json is generated from it.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { CandlesResponse, DiscoveryRequest, DiscoveryResponse, PositionsPage, Token, TradePage } from "@spot/domain"
import { BearerAuth } from "../ContractSecurity.js"
import { commonContractErrors, contractErrors, withResponseHeaders } from "../ErrorResponses.js"
import { IdentityTradesParams, OhlcvParams, PositionsParams, TokenPathParams, TokenTradesParams } from "./Params.js"

const tokens = HttpApiGroup.make("tokens")
  .add(
    HttpApiEndpoint.get("getToken", "/v1/tokens/:chain/:address", {
      params: TokenPathParams.fields,
      success: withResponseHeaders(Token),
      error: [...commonContractErrors, contractErrors.notFound]
    }),
    HttpApiEndpoint.get("getCandles", "/v1/tokens/:chain/:address/ohlcv", {
      params: TokenPathParams.fields,
      query: OhlcvParams.fields,
      success: withResponseHeaders(CandlesResponse),
      error: [...commonContractErrors]
    }),
    HttpApiEndpoint.get("getTokenTrades", "/v1/tokens/:chain/:address/trades", {
      params: TokenPathParams.fields,
      query: TokenTradesParams.fields,
      success: withResponseHeaders(TradePage),
      error: [...commonContractErrors]
    })
  )
  .middleware(BearerAuth)

const trades = HttpApiGroup.make("trades")
  .add(
    HttpApiEndpoint.get("getIdentityTrades", "/v1/trades", {
      query: IdentityTradesParams.fields,
      success: withResponseHeaders(TradePage),
      error: [...commonContractErrors]
    })
  )
  .middleware(BearerAuth)

const positions = HttpApiGroup.make("positions")
  .add(
    HttpApiEndpoint.get("getPositions", "/v1/positions", {
      query: PositionsParams.fields,
      success: withResponseHeaders(PositionsPage),
      error: [...commonContractErrors]
    })
  )
  .middleware(BearerAuth)

const discovery = HttpApiGroup.make("discovery")
  .add(
    HttpApiEndpoint.post("discover", "/v1/discovery", {
      payload: DiscoveryRequest,
      success: withResponseHeaders(DiscoveryResponse),
      error: [...commonContractErrors]
    })
  )
  .middleware(BearerAuth)

export const Contract = HttpApi.make("spot-market-data")
  .add(tokens, trades, positions, discovery)
  .annotate(OpenApi.Title, "Spot market-data API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, "Read-only market data for tokens on solana, base, bsc, robinhood and arc. Every /v1 request carries `Authorization: Bearer <API_KEY>`. Streams: wss on the same host at /v1/stream.")
