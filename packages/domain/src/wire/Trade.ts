/**
 * The trade object and the trade page (spec "Trade object", "Trade page"): returned in pages by
 * the trade REST endpoints and as `data` of `spot.trades` updates.
 */
import { Schema } from "effect"
import { ChainSlug, IdentityProfile, Money, TimestampMs, UnsignedDecimalString } from "./Common.js"

/**
 * Wallet classification values the spec names. The set is open: new values can appear and must
 * be kept, so the wire type of a flag is any string. `partner` is named by the `spot.trades`
 * `flags` filter ("wallets flagged `partner`").
 */
export const knownTradeFlags = ["sniper", "bundler", "whale", "partner"] as const
export type KnownTradeFlag = (typeof knownTradeFlags)[number]

export const TradeFlag = Schema.String.annotate({
  identifier: "TradeFlag",
  description:
    "A wallet classification of the trader, such as `sniper`, `bundler` or `whale`; open set: new values can appear and must be kept"
})
export type TradeFlag = typeof TradeFlag.Type

export const TradeSide = Schema.Literals(["buy", "sell"]).annotate({ identifier: "TradeSide", description: "Direction" })
export type TradeSide = typeof TradeSide.Type

/** Identity feeds of `GET /v1/trades` and of `spot.trades` identity mode. */
export const IdentityFeed = Schema.Literals(["kol", "partnerscan"]).annotate({
  identifier: "IdentityFeed",
  description: "`kol`: wallets labelled key opinion leaders; `partnerscan`: wallets with a partner-platform profile"
})
export type IdentityFeed = typeof IdentityFeed.Type

export const TradePlatform = Schema.Struct({
  platform: Schema.String.annotate({ description: "Trading terminal; open set, one value is `partner`" })
}).annotate({ identifier: "TradePlatform", description: "A trading terminal the trade routed through" })
export type TradePlatform = typeof TradePlatform.Type

export const Trade = Schema.Struct({
  id: Schema.String.annotate({
    description:
      "Stable opaque trade ID; not the transaction hash (one transaction can hold several trades); never parsed"
  }),
  chain: ChainSlug,
  token: Schema.String.annotate({ description: "Traded token address" }),
  name: Schema.String.annotate({ description: "Token name; empty until metadata resolves" }),
  symbol: Schema.String.annotate({ description: "Token symbol; empty until metadata resolves" }),
  trader: Schema.String.annotate({ description: "Wallet that sent the swap" }),
  transactionHash: Schema.String.annotate({ description: "On-chain transaction hash" }),
  side: TradeSide,
  amount: UnsignedDecimalString.annotateKey({ description: "Token units traded" }),
  price: Money.annotateKey({ description: "Price at execution" }),
  volume: Money.annotateKey({ description: "Value of the trade" }),
  marketCap: Money.annotateKey({ description: "Market cap at execution" }),
  flags: Schema.optionalKey(
    Schema.Array(TradeFlag).annotate({ description: "The trader's wallet classifications; omitted when empty" })
  ),
  platforms: Schema.optionalKey(
    Schema.Array(TradePlatform).annotate({
      description: "Trading terminals the trade routed through; omitted when empty"
    })
  ),
  identities: Schema.optionalKey(
    Schema.Array(IdentityProfile).annotate({
      description: "The trader's resolved public profiles, one per source; omitted when empty"
    })
  ),
  timestamp: TimestampMs.annotateKey({ description: "Execution time" })
}).annotate({ identifier: "Trade", description: "One swap" })
export type Trade = typeof Trade.Type

export const TradePage = Schema.Struct({
  trades: Schema.Array(Trade).annotate({ description: "Trades, newest first" }),
  nextCursor: Schema.NullOr(Schema.String).annotate({
    description: "Opaque cursor of the next page; send back exactly as received"
  }),
  hasMore: Schema.Boolean.annotate({ description: "Paging ends when false" })
}).annotate({ identifier: "TradePage", description: "A page of trades, newest first" })
export type TradePage = typeof TradePage.Type
