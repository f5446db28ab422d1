/**
 * Wallet positions (spec "Position", "GET /v1/positions" response): one wallet's position in one
 * token, and the page that carries them.
 */
import { Schema } from "effect"
import {
  ChainSlug,
  Count,
  DecimalString,
  IdentityProfile,
  Money,
  TimestampMs,
  UnsignedDecimalString
} from "./Common.js"

export const Lifecycle = Schema.Literals(["open", "closed"]).annotate({
  identifier: "Lifecycle",
  description: "Current-cycle lifecycle of a position"
})
export type Lifecycle = typeof Lifecycle.Type

export const PositionSortField = Schema.Literals(["value", "pnl", "pnlPct", "openedAt", "closedAt"]).annotate({
  identifier: "PositionSortField",
  description: "Field positions can be sorted on"
})
export type PositionSortField = typeof PositionSortField.Type

export const PositionToken = Schema.Struct({
  address: Schema.String,
  chain: ChainSlug,
  decimals: Count,
  image: Schema.NullOr(Schema.String).annotate({ description: "Image URL; null when unknown" }),
  name: Schema.String,
  symbol: Schema.String,
  price: Money,
  marketCap: Money
}).annotate({ identifier: "PositionToken", description: "The token a position is held in" })
export type PositionToken = typeof PositionToken.Type

/** Values of `funding.status` the spec shows; the field is an open string. */
export const knownPositionFundingStatuses = ["unresolved", "resolved"] as const
/** Values of `funding.sourceKind` the spec shows; the field is an open string. */
export const knownPositionFundingSourceKinds = ["cex", "wallet"] as const

export const PositionFunding = Schema.Struct({
  status: Schema.String.annotate({ description: "Funding lookup status; known values `unresolved`, `resolved`" }),
  address: Schema.NullOr(Schema.String).annotate({ description: "Funder address" }),
  amount: Schema.NullOr(DecimalString),
  asset: Schema.NullOr(Schema.String),
  sourceKind: Schema.NullOr(Schema.String).annotate({ description: "Funder kind; known values `cex`, `wallet`" }),
  sourceLabel: Schema.NullOr(Schema.String).annotate({ description: "Display label of the funder" }),
  symbol: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(TimestampMs),
  tx: Schema.NullOr(Schema.String)
}).annotate({ identifier: "PositionFunding", description: "Funding of the wallet" })
export type PositionFunding = typeof PositionFunding.Type

export const PositionLifetime = Schema.Struct({
  buyCount: Count,
  cycleCount: Count,
  fees: Money,
  invested: Money,
  realizedPnl: Money,
  received: Money,
  sellCount: Count,
  tokensBought: UnsignedDecimalString,
  tokensSold: UnsignedDecimalString,
  winningCycleCount: Count
}).annotate({ identifier: "PositionLifetime", description: "Totals over every cycle of the position" })
export type PositionLifetime = typeof PositionLifetime.Type

export const Position = Schema.Struct({
  walletAddress: Schema.String,
  chain: ChainSlug,
  product: Schema.Literal("spot").annotate({ description: "Always `spot`" }),
  status: Lifecycle,
  token: PositionToken,
  holdings: UnsignedDecimalString,
  holdingsPctSupply: UnsignedDecimalString,
  avgCost: Money,
  invested: Money,
  received: Money,
  fees: Money,
  realizedPnl: Money,
  buyCount: Count,
  sellCount: Count,
  tokensBought: UnsignedDecimalString,
  tokensSold: UnsignedDecimalString,
  isStablecoin: Schema.Boolean,
  isTransfer: Schema.Boolean,
  openedAt: TimestampMs,
  updatedAt: TimestampMs,
  version: Count.annotateKey({ description: "Orders changes to one position; keep the highest" }),
  funding: PositionFunding,
  lifetime: PositionLifetime,
  closedAt: Schema.optionalKey(TimestampMs),
  avgEntryMarketCap: Schema.optionalKey(Money),
  avgExitMarketCap: Schema.optionalKey(Money),
  identities: Schema.optionalKey(Schema.Array(IdentityProfile)),
  value: Schema.optionalKey(
    Schema.NullOr(Money).annotate({ description: "null for a token with no market record" })
  ),
  unrealizedPnl: Schema.optionalKey(
    Schema.NullOr(Money).annotate({ description: "null for a token with no market record" })
  ),
  totalPnl: Schema.optionalKey(
    Schema.NullOr(Money).annotate({ description: "null for a token with no market record" })
  ),
  pnlPct: Schema.optionalKey(
    Schema.NullOr(DecimalString).annotate({
      description: "null for a token with no market record and for a position with no invested cost"
    })
  )
}).annotate({
  identifier: "Position",
  description: "One wallet's position in one token; price-derived fields use the token's latest price"
})
export type Position = typeof Position.Type

export const PositionCounts = Schema.Struct({
  spot: Schema.Struct({ open: Count, closed: Count })
}).annotate({
  identifier: "PositionCounts",
  description:
    "Counts of the wallets' spot positions by lifecycle; ignores lifecycle, the hide switches, q, chain and token"
})
export type PositionCounts = typeof PositionCounts.Type

export const PositionsPage = Schema.Struct({
  asOf: TimestampMs.annotateKey({ description: "Serve-time snapshot" }),
  counts: PositionCounts,
  hasMore: Schema.Boolean,
  positions: Schema.Array(Position),
  nextCursor: Schema.NullOr(Schema.String).annotate({ description: "Opaque cursor; null on the last page" })
}).annotate({ identifier: "PositionsPage", description: "A page of spot positions" })
export type PositionsPage = typeof PositionsPage.Type
