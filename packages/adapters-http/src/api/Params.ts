/**
 * Query parameters of the read endpoints as the contract describes them. Every value arrives as a
 * string; the use cases read the values (numbers, lists, booleans, cursors) so that each problem
 * is answered on its own field. These schemas refuse parameters an endpoint does not know and a
 * parameter sent twice.
 */
import { Schema } from "effect"

const text = (description: string) => Schema.optionalKey(Schema.String.annotate({ description }))

export const TokenPathParams = Schema.Struct({
  chain: Schema.String.annotate({ description: "Chain slug: solana, base, bsc, robinhood or arc" }),
  address: Schema.String.annotate({ description: "Token address" })
})

export const TokenParams = Schema.Struct({})

export const OhlcvParams = Schema.Struct({
  timeframe: text("Bucket size: 1s, 5s, 15s, 30s, 1m (default), 3m, 5m, 15m, 30m, 1h, 4h, 6h, 12h, 1d, 7d (weeks start Monday 00:00 UTC)"),
  metric: text("price or marketCap (default)"),
  denomination: text("usd (default) or native"),
  countBack: text("Integer 1-5000: the N most recent candles opening before `to`; above 5000 is refused"),
  from: text("Integer Unix ms, inclusive: candles whose open time is at or after it"),
  to: text("Integer Unix ms, exclusive: candles whose open time is before it; to page back, send the oldest candle's time")
})

export const TokenTradesParams = Schema.Struct({
  limit: text("Trades per page, default 20; outside 1-100 is clamped"),
  cursor: text("The opaque nextCursor of the previous page, exactly as received")
})

export const IdentityTradesParams = Schema.Struct({
  identity: Schema.String.annotate({ description: "kol or partnerscan" }),
  chains: text("Comma-separated chain slugs; absent means every spot chain; a list naming nothing is refused"),
  limit: text("Trades per page, default 20; outside 1-100 is clamped"),
  cursor: text("The opaque nextCursor of the previous page, exactly as received")
})

export const PositionsParams = Schema.Struct({
  wallets: Schema.String.annotate({ description: "1 to 100 wallet addresses, comma-separated" }),
  chains: text("Comma-separated chain slugs; default every spot chain"),
  lifecycle: text("open (default) or closed"),
  hideLowLiquidity: text("true (default) or false: drop open positions in tokens with under 1,000 USD liquidity"),
  hideDust: text("true or false (default): drop open positions worth under 1 USD"),
  hideTransfers: text("true or false (default): drop positions no buy opened"),
  chain: text("With token: read one token's positions; send both or neither"),
  token: text("With chain: read one token's positions; send both or neither"),
  q: text("Keep tokens whose symbol or name contains it, any letter case"),
  sort: text("field:asc or field:desc, field in value, pnl, pnlPct, openedAt, closedAt; default value:desc for open, closedAt:desc for closed"),
  limit: text("Positions per page, default 50, clamped to 1-100"),
  cursor: text("Opaque; send back exactly as received, with the same filters")
})
