/**
 * The token object (spec "Resources and their fields" → "Token object"): returned by
 * `GET /v1/tokens/{chain}/{address}`, as `data` of `spot.tokens` updates and as `data` of
 * discovery entries. Every field is always present unless marked optional.
 */
import { Schema } from "effect"
import { ChainSlug, Count, DecimalString, Money, TimestampMs, UnsignedDecimalString } from "./Common.js"

/** Known `devFunding.status` values. */
export const DevFundingStatus = Schema.Literals(["unresolved", "resolved"]).annotate({
  identifier: "DevFundingStatus",
  description: "`unresolved` while the lookup can still resolve; `resolved` once settled"
})
export type DevFundingStatus = typeof DevFundingStatus.Type

/** Kind of the creator's funder. */
export const FundingSourceKind = Schema.Literals(["cex", "wallet"]).annotate({
  identifier: "FundingSourceKind",
  description: "`cex` for a known exchange, `wallet` for another wallet"
})
export type FundingSourceKind = typeof FundingSourceKind.Type

export const DevFunding = Schema.Struct({
  status: DevFundingStatus,
  address: Schema.NullOr(Schema.String).annotate({ description: "Funder address" }),
  sourceKind: Schema.NullOr(FundingSourceKind),
  sourceLabel: Schema.NullOr(Schema.String).annotate({ description: "Display label of the funder" })
}).annotate({
  identifier: "DevFunding",
  description:
    "First inbound funding of the creator wallet; address, sourceKind and sourceLabel are null in both statuses when no funder is known"
})
export type DevFunding = typeof DevFunding.Type

export const StatsWindow = Schema.Struct({
  priceChangePct: DecimalString.annotateKey({ description: "Signed percentage price change over the window" }),
  volume: Money,
  buyCount: Count,
  sellCount: Count,
  buyVolume: Money,
  sellVolume: Money
}).annotate({ identifier: "StatsWindow", description: "Trading statistics over one trailing window ending now" })
export type StatsWindow = typeof StatsWindow.Type

/** Keys of `stats`. */
export const statsWindowKeys = ["5m", "30m", "1h", "6h", "24h"] as const
export type StatsWindowKey = (typeof statsWindowKeys)[number]

export const Stats = Schema.Struct({
  "5m": StatsWindow,
  "30m": StatsWindow,
  "1h": StatsWindow,
  "6h": StatsWindow,
  "24h": StatsWindow
}).annotate({ identifier: "Stats", description: "Trailing windows ending now, keyed 5m, 30m, 1h, 6h, 24h" })
export type Stats = typeof Stats.Type

export const Fees = Schema.Struct({
  transaction: Money,
  validator: Money,
  platform: Money,
  dex: Money
}).annotate({
  identifier: "Fees",
  description: "All-time fees by kind; the kinds are measured on different bases and must not be added together"
})
export type Fees = typeof Fees.Type

export const Totals = Schema.Struct({
  volume: Money.annotateKey({ description: "All-time volume" }),
  fees: Fees
}).annotate({ identifier: "Totals", description: "All-time totals" })
export type Totals = typeof Totals.Type

export const Holders = Schema.Struct({
  count: Count.annotateKey({ description: "Current holders" }),
  top10Pct: UnsignedDecimalString.annotateKey({
    description: "Share of the 10 largest holders; can read above 100 when supply data drifts"
  }),
  devPct: UnsignedDecimalString.annotateKey({ description: "Share held by the creator" }),
  sniperPct: UnsignedDecimalString,
  sniperCount: Count.annotateKey({ description: "Wallets that bought within two blocks of the first pool" }),
  bundlerPct: UnsignedDecimalString,
  bundlerCount: Count.annotateKey({ description: "Wallets that made the fourth or later buy in a single block" }),
  insiderPct: UnsignedDecimalString,
  insiderCount: Count.annotateKey({
    description: "Wallets that bought within three blocks of the first pool (overlaps with snipers)"
  }),
  freshWalletPct: UnsignedDecimalString,
  freshWalletCount: Count.annotateKey({ description: "Wallets funded less than seven days before they traded" }),
  proTraderPct: UnsignedDecimalString,
  proTraderCount: Count.annotateKey({ description: "Wallets that have traded through a known trading terminal" }),
  partnerPct: UnsignedDecimalString,
  partnerCount: Count.annotateKey({ description: "Wallets that have traded through the partner trading terminal" }),
  phishingPct: UnsignedDecimalString.annotateKey({
    description: "Share held by wallets a security source labels malicious"
  }),
  phishingCount: Count.annotateKey({ description: "Wallets that ever traded the token while labelled malicious" }),
  fundedByCexPct: UnsignedDecimalString.annotateKey({
    description: "Share of current holders funded by a known exchange, 0-100"
  })
}).annotate({
  identifier: "Holders",
  description:
    "Holder concentration and wallet risk groups. Each ...Pct is the share of supply the group holds now (0-100); each ...Count is the number of wallets that ever carried the group's flag on this token (never decreases)"
})
export type Holders = typeof Holders.Type

export const Security = Schema.Struct({
  mintDisabled: Schema.Boolean.annotate({
    description:
      "true when no more can be minted (mint authority revoked on Solana; no mint power on EVM chains)"
  }),
  transferBlockable: Schema.Boolean.annotate({
    description: "true when transfers can be blocked (freeze authority on Solana; blacklist or pause on EVM chains)"
  }),
  lpBurntPct: Schema.NullOr(UnsignedDecimalString).annotate({
    description: "Share of liquidity burnt or locked, 0-100; null until observed"
  }),
  transferFeeBps: Schema.NullOr(Schema.Int).annotate({
    description: "Transfer fee in basis points (250 means 2.50%); null when the contract has not been scored"
  }),
  rugPct: UnsignedDecimalString.annotateKey({ description: "Not yet populated; always \"0\"" })
}).annotate({ identifier: "Security", description: "Contract security signals" })
export type Security = typeof Security.Type

export const Metadata = Schema.Struct({
  description: Schema.NullOr(Schema.String),
  website: Schema.NullOr(Schema.String),
  twitter: Schema.NullOr(Schema.String),
  telegram: Schema.NullOr(Schema.String),
  discord: Schema.NullOr(Schema.String),
  twitterReuseCount: Count.annotateKey({ description: "Not yet populated; always 0" })
}).annotate({ identifier: "Metadata", description: "Project links" })
export type Metadata = typeof Metadata.Type

export const PlatformListing = Schema.Struct({
  platform: Schema.String.annotate({ description: "Listing platform; open set, one value is `listingService`" }),
  isPaid: Schema.Boolean,
  paidAt: Schema.NullOr(TimestampMs)
}).annotate({ identifier: "PlatformListing", description: "An external listing of the token" })
export type PlatformListing = typeof PlatformListing.Type

export const Annotation = Schema.Struct({
  kind: Schema.String.annotate({ description: "Open set; one kind is `mayhem_mode`; new kinds can appear" })
}).annotate({ identifier: "Annotation", description: "A flag the launch carried" })
export type Annotation = typeof Annotation.Type

export const Ath = Schema.Struct({
  price: Money,
  priceAt: TimestampMs,
  marketCap: Money,
  marketCapAt: TimestampMs
}).annotate({ identifier: "Ath", description: "All-time highs of price and market cap, with when they were reached" })
export type Ath = typeof Ath.Type

export const Token = Schema.Struct({
  chain: ChainSlug,
  address: Schema.String.annotate({ description: "Token address" }),
  name: Schema.String,
  symbol: Schema.String,
  decimals: Count,
  supply: UnsignedDecimalString.annotateKey({ description: "Total supply" }),
  creator: Schema.String.annotate({ description: "Creator address" }),
  devFunding: DevFunding,
  createdAt: TimestampMs.annotateKey({ description: "Creation time" }),
  launchpad: Schema.NullOr(Schema.String).annotate({
    description: "Launchpad the token launched on; null if none"
  }),
  bondingCurvePct: Schema.NullOr(UnsignedDecimalString).annotate({
    description: "Bonding-curve completion 0-100; null off launchpad curves"
  }),
  graduatedAt: Schema.NullOr(TimestampMs).annotate({
    description: "When the token left its launchpad; null until then"
  }),
  graduatedToPool: Schema.NullOr(Schema.String).annotate({ description: "Pool the token moved to on graduation" }),
  graduatedToDex: Schema.NullOr(Schema.String).annotate({ description: "Venue that pool trades on" }),
  dexes: Schema.Array(Schema.String).annotate({ description: "Venues of the token's top pools, deepest pool first" }),
  anchorAddress: Schema.NullOr(Schema.String).annotate({
    description: "Address of the quote asset in the deepest pool"
  }),
  anchorSymbol: Schema.NullOr(Schema.String).annotate({ description: "Symbol of that quote asset" }),
  price: Money.annotateKey({ description: "Current price" }),
  marketCap: Money.annotateKey({ description: "Current market cap (uses total supply)" }),
  liquidity: Money.annotateKey({ description: "Current liquidity" }),
  ath: Ath,
  stats: Stats,
  totals: Totals,
  holders: Holders,
  security: Security,
  metadata: Metadata,
  platforms: Schema.optionalKey(
    Schema.Array(PlatformListing).annotate({ description: "External listings; omitted when empty" })
  ),
  annotations: Schema.optionalKey(
    Schema.Array(Annotation).annotate({ description: "Flags the launch carried; omitted when empty" })
  ),
  updatedAt: TimestampMs.annotateKey({ description: "When the token object last changed" })
}).annotate({
  identifier: "Token",
  description: "One token's full state"
})
export type Token = typeof Token.Type
