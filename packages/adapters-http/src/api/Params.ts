/**
 * Query parameters of the read endpoints as the contract describes them. Every value arrives as a
 * string; the use cases read the values (numbers, lists, booleans, cursors) so that each problem
 * is answered on its own field. These schemas refuse parameters an endpoint does not know and a
 * parameter sent twice. A parameter with a type, allowed words, a pattern or bounds is declared
 * with `HttpText.documentedAs`: passed to the use case as sent, and documented in /openapi.json as
 * what that use case accepts (its allowed values come from the use case itself).
 */
import type { JsonSchema } from "effect"
import { Schema } from "effect"
import { PositionQueries, TokenQueries, TradeQueries } from "@spot/application"
import { Candles, PositionsQuery } from "@spot/domain"
import * as HttpText from "../HttpText.js"

const text = (description: string) => Schema.optionalKey(Schema.String.annotate({ description }))

const documented = (schema: JsonSchema.JsonSchema, description: string) =>
  HttpText.documentedAs(schema).annotate({ description })

const optionalDocumented = (schema: JsonSchema.JsonSchema, description: string) =>
  Schema.optionalKey(documented(schema, description))

const oneOf = (allowed: ReadonlyArray<string>, fallback?: string): JsonSchema.JsonSchema =>
  fallback === undefined ? { type: "string", enum: [...allowed] } : { type: "string", enum: [...allowed], default: fallback }

/** `true` or `false`, exactly (Params.Issues.boolean). */
const flag = (fallback: boolean): JsonSchema.JsonSchema => ({ type: "boolean", default: fallback })

/** A page size: any whole number, clamped into 1..max, never refused for its size (Params.Issues.limit). */
const pageSize = (fallback: number): JsonSchema.JsonSchema => ({ type: "integer", default: fallback })

/** Integer Unix ms (Params.Issues.integer with a lower bound of 0; its upper bound is the safe-integer range). */
const unixMs: JsonSchema.JsonSchema = { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER }

/** `field:asc` or `field:desc` (PositionQueries). */
const positionSortPattern = `^(${PositionQueries.sortFields.join("|")}):(asc|desc)$`

export const TokenPathParams = Schema.Struct({
  chain: Schema.String.annotate({ description: "Chain slug: solana, base, bsc, robinhood or arc" }),
  address: Schema.String.annotate({ description: "Token address" })
})

export const TokenParams = Schema.Struct({})

/** Discovery takes its request in the body: no query parameter (one is refused, as on every read). */
export const DiscoveryParams = Schema.Struct({})

export const OhlcvParams = Schema.Struct({
  timeframe: optionalDocumented(
    oneOf(Candles.timeframes, "1m"),
    "Bucket size: 1s, 5s, 15s, 30s, 1m (default), 3m, 5m, 15m, 30m, 1h, 4h, 6h, 12h, 1d, 7d (weeks start Monday 00:00 UTC)"
  ),
  metric: optionalDocumented(oneOf(TokenQueries.candleMetrics, "marketCap"), "price or marketCap (default)"),
  denomination: optionalDocumented(oneOf(TokenQueries.candleDenominations, "usd"), "usd (default) or native"),
  countBack: optionalDocumented(
    { type: "integer", minimum: 1, maximum: TokenQueries.maxCandleCount },
    `The N most recent candles opening before \`to\`; above ${TokenQueries.maxCandleCount} is refused`
  ),
  from: optionalDocumented(unixMs, "Unix ms, inclusive: candles whose open time is at or after it; must be before `to`"),
  to: optionalDocumented(unixMs, "Unix ms, exclusive: candles whose open time is before it; to page back, send the oldest candle's time")
})

export const TokenTradesParams = Schema.Struct({
  limit: optionalDocumented(pageSize(TradeQueries.defaultTradeLimit), `Trades per page; outside 1-${TradeQueries.maxTradeLimit} is clamped, not refused`),
  cursor: text("The opaque nextCursor of the previous page, exactly as received")
})

export const IdentityTradesParams = Schema.Struct({
  identity: documented(oneOf(TradeQueries.identities), "kol: wallets labelled key opinion leaders; partnerscan: wallets with a partner-platform profile"),
  chains: text("Comma-separated chain slugs, each as written (no spaces); absent means every spot chain; a list naming nothing, or with an empty entry, is refused"),
  limit: optionalDocumented(pageSize(TradeQueries.defaultTradeLimit), `Trades per page; outside 1-${TradeQueries.maxTradeLimit} is clamped, not refused`),
  cursor: text("The opaque nextCursor of the previous page, exactly as received")
})

export const PositionsParams = Schema.Struct({
  wallets: Schema.String.annotate({ description: `1 to ${PositionQueries.maxWallets} wallet addresses, comma-separated, each as written (no spaces)` }),
  chains: text("Comma-separated chain slugs, each as written (no spaces); default every spot chain"),
  lifecycle: optionalDocumented(oneOf(PositionQueries.lifecycles, "open"), "Lifecycle to list"),
  hideLowLiquidity: optionalDocumented(flag(true), "Drop open positions in tokens with under 1,000 USD liquidity"),
  hideDust: optionalDocumented(flag(false), "Drop open positions worth under 1 USD"),
  hideTransfers: optionalDocumented(flag(false), "Drop positions no buy opened"),
  chain: text("With token: read one token's positions; send both or neither"),
  token: text("With chain: read one token's positions; send both or neither"),
  q: text("Keep tokens whose symbol or name contains it, any letter case"),
  sort: optionalDocumented(
    { type: "string", pattern: positionSortPattern },
    `field:asc or field:desc, field in ${PositionQueries.sortFields.join(", ")}; default value:desc for open, closedAt:desc for closed`
  ),
  limit: optionalDocumented(pageSize(PositionsQuery.defaultLimit), `Positions per page; clamped to 1-${PositionsQuery.maxLimit}, not refused`),
  cursor: text("Opaque; send back exactly as received, with the same filters")
})
