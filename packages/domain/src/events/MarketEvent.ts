/**
 * The normalized market-event model: everything the service knows arrives as one of these events,
 * from the embedded simulator or from a real indexer through the ingest interface. The engine folds
 * them, in order, into every object the API serves. See docs/market-events.md.
 *
 * Amounts are integer base units (encoded on the wire as decimal integer strings, decoded to
 * bigint); prices are decimal strings; times are integer Unix milliseconds.
 */
import { Effect, Schema } from "effect"
import { chains } from "../Chain.js"
import { SCALE_DIGITS } from "../Fixed.js"

const Chain = Schema.Literals(chains)
const Address = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(128))
const TxHash = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(160))
const Millis = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const BlockNumber = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
/** Unsigned integer amount of base units, a decimal integer string on the wire. */
const BaseUnits = Schema.BigIntFromString.check(Schema.isGreaterThanOrEqualToBigInt(0n))
/** Base units that must move something: one check, so a negative amount gets one message, not two. */
const PositiveBaseUnits = Schema.BigIntFromString.check(Schema.isGreaterThanBigInt(0n))
/** Unsigned plain decimal string (no exponent), such as a USD price. */
const DecimalText = Schema.String.check(Schema.isPattern(/^\d+(\.\d+)?$/))
const Pct = Schema.String.check(Schema.isPattern(/^\d+(\.\d+)?$/))
const Decimals = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(36))
/**
 * A token's own decimals: at most 18, the places of every decimal string the API serves (amounts,
 * supply, prices). A token with more would show amounts below 10^-18 of a token as 0, and the
 * figures derived from them wrong (docs/market-events.md).
 */
const TokenDecimals = Schema.Int.check(
  Schema.isGreaterThanOrEqualTo(0),
  Schema.isLessThanOrEqualTo(SCALE_DIGITS, { message: `must be at most ${SCALE_DIGITS}: the API's decimal strings carry ${SCALE_DIGITS} places` })
)
const OptionalText = Schema.NullOr(Schema.String.check(Schema.isMaxLength(2048)))

/** Every event carries `id`, its identity for de-duplication, and `timestamp`, when it happened. */
const eventFields = {
  id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256)),
  timestamp: Millis
}

export const TokenMetadataFields = Schema.Struct({
  name: Schema.String,
  symbol: Schema.String,
  image: OptionalText,
  description: OptionalText,
  website: OptionalText,
  twitter: OptionalText,
  telegram: OptionalText,
  discord: OptionalText
})
export type TokenMetadataFields = typeof TokenMetadataFields.Type

/** A token was created. `launchpad` null for a plain token; `hasCurve` false for curve-less launchers. */
export const TokenLaunched = Schema.Struct({
  type: Schema.Literal("tokenLaunched"),
  ...eventFields,
  chain: Chain,
  token: Address,
  creator: Address,
  decimals: TokenDecimals,
  supply: BaseUnits,
  launchpad: Schema.NullOr(Schema.String),
  hasCurve: Schema.Boolean,
  block: BlockNumber,
  transactionHash: TxHash,
  /** Flags the launch carried, such as `mayhem_mode`. */
  annotations: Schema.Array(Schema.String),
  /** Present when the metadata is known at launch; otherwise a later `metadataResolved`. */
  metadata: Schema.NullOr(TokenMetadataFields)
}).annotate({ identifier: "TokenLaunchedEvent" })

/**
 * The state of a swap's pool right after it, as an indexer decodes it from the swap's own
 * transaction (pump.fun's trade event carries the curve's reserves, a Uniswap pair's `Sync` its
 * reserves): the pool's value, like `liquidityChanged`'s, and the curve's completion, like
 * `curveProgressed`'s (null when the pool is not a bonding curve). A swap that carries it needs
 * neither of those events after it.
 */
export const PoolAfterSwap = Schema.Struct({
  /** The pool's total value in native base units (both sides; virtual reserves on a curve). */
  liquidityNative: BaseUnits,
  /** Bonding-curve completion after the swap, 0-100; null when the pool is not a curve. */
  bondingCurvePct: Schema.NullOr(Pct)
}).annotate({ identifier: "PoolAfterSwap" })
export type PoolAfterSwap = typeof PoolAfterSwap.Type

/** One swap on one pool. `side` is from the trader's point of view on the token. */
export const Swap = Schema.Struct({
  type: Schema.Literal("swap"),
  ...eventFields,
  chain: Chain,
  token: Address,
  pool: Address,
  dex: Schema.String,
  trader: Address,
  transactionHash: TxHash,
  block: BlockNumber,
  /** Position of the swap inside its block (transaction index × 1000 + instruction), for ordering. */
  indexInBlock: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  side: Schema.Literals(["buy", "sell"]),
  /** Token base units traded. */
  tokenAmount: PositiveBaseUnits,
  /** Quote-asset side of the swap, in the quote asset's base units. */
  quoteAmount: BaseUnits,
  quoteAddress: Address,
  quoteSymbol: Schema.String,
  quoteDecimals: Decimals,
  /** Value of the swap in the chain's native asset base units (lamports, wei). */
  nativeAmount: BaseUnits,
  /** USD price of one whole native unit at execution. */
  nativeUsd: DecimalText,
  /** Fees in native base units, by kind; never added together. */
  fees: Schema.Struct({
    transaction: BaseUnits,
    validator: BaseUnits,
    platform: BaseUnits,
    dex: BaseUnits
  }),
  /** Trading terminal the swap was routed through (such as `partner`), null when none is known. */
  terminal: Schema.NullOr(Schema.String),
  /** The pool right after the swap, when the indexer knows it; null (or absent) when not. */
  poolAfter: Schema.NullOr(PoolAfterSwap).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null)))
}).annotate({ identifier: "SwapEvent" })

/** A token transfer outside a swap: airdrops, wallet moves, mints (`from` null) and burns (`to` null). */
export const Transfer = Schema.Struct({
  type: Schema.Literal("transfer"),
  ...eventFields,
  chain: Chain,
  token: Address,
  from: Schema.NullOr(Address),
  to: Schema.NullOr(Address),
  amount: PositiveBaseUnits,
  transactionHash: TxHash,
  block: BlockNumber
}).annotate({ identifier: "TransferEvent" })

/** Name, symbol and links resolved (possibly late, possibly updated). */
export const MetadataResolved = Schema.Struct({
  type: Schema.Literal("metadataResolved"),
  ...eventFields,
  chain: Chain,
  token: Address,
  metadata: TokenMetadataFields
}).annotate({ identifier: "MetadataResolvedEvent" })

/**
 * The first inbound funding of a wallet was looked up. `funder` null when the lookup settled with
 * no known funder. Serves the token's `devFunding` (for creators), the position `funding`,
 * fresh-wallet and funded-by-exchange holder groups.
 */
export const WalletFunded = Schema.Struct({
  type: Schema.Literal("walletFunded"),
  ...eventFields,
  chain: Chain,
  wallet: Address,
  funder: Schema.NullOr(Address),
  sourceKind: Schema.NullOr(Schema.Literals(["cex", "wallet"])),
  sourceLabel: Schema.NullOr(Schema.String),
  /** Amount of the funding in `assetDecimals` base units. */
  amount: Schema.NullOr(BaseUnits),
  asset: Schema.NullOr(Address),
  assetSymbol: Schema.NullOr(Schema.String),
  assetDecimals: Schema.NullOr(Decimals),
  /** When the funding transaction happened (not when it was looked up). */
  fundedAt: Schema.NullOr(Millis),
  transactionHash: Schema.NullOr(TxHash)
}).annotate({ identifier: "WalletFundedEvent" })

/** Bonding-curve completion observed, 0-100. */
export const CurveProgressed = Schema.Struct({
  type: Schema.Literal("curveProgressed"),
  ...eventFields,
  chain: Chain,
  token: Address,
  bondingCurvePct: Pct
}).annotate({ identifier: "CurveProgressedEvent" })

/** The token left its launchpad (migration), moving to `pool` on `dex`. */
export const Graduated = Schema.Struct({
  type: Schema.Literal("graduated"),
  ...eventFields,
  chain: Chain,
  token: Address,
  pool: Address,
  dex: Schema.String,
  transactionHash: TxHash
}).annotate({ identifier: "GraduatedEvent" })

/**
 * A pool's liquidity changed: its total value in native base units, and its quote asset; `block`,
 * the block it changed in (null or absent when unknown), dates the token's first pool for the
 * sniper and insider groups.
 */
export const LiquidityChanged = Schema.Struct({
  type: Schema.Literal("liquidityChanged"),
  ...eventFields,
  chain: Chain,
  token: Address,
  pool: Address,
  dex: Schema.String,
  anchorAddress: Address,
  anchorSymbol: Schema.String,
  liquidityNative: BaseUnits,
  nativeUsd: DecimalText,
  block: Schema.NullOr(BlockNumber).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null)))
}).annotate({ identifier: "LiquidityChangedEvent" })

/** Contract security signals scored. */
export const SecurityScored = Schema.Struct({
  type: Schema.Literal("securityScored"),
  ...eventFields,
  chain: Chain,
  token: Address,
  mintDisabled: Schema.Boolean,
  transferBlockable: Schema.Boolean,
  lpBurntPct: Schema.NullOr(Pct),
  transferFeeBps: Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(10_000)))
}).annotate({ identifier: "SecurityScoredEvent" })

/** An external listing of the token (such as a paid listing service). */
export const TokenListed = Schema.Struct({
  type: Schema.Literal("tokenListed"),
  ...eventFields,
  chain: Chain,
  token: Address,
  platform: Schema.String,
  isPaid: Schema.Boolean,
  paidAt: Schema.NullOr(Millis)
}).annotate({ identifier: "TokenListedEvent" })

/**
 * A wallet label was set or cleared. Known labels: `kol` (key opinion leader: the `kol` feed),
 * `partnerscan` (partner-platform profile: the `partnerscan` feed), `phishing` (labelled malicious
 * by a security source), `whale`. Unknown labels are kept and shown as trade flags.
 */
export const WalletLabeled = Schema.Struct({
  type: Schema.Literal("walletLabeled"),
  ...eventFields,
  chain: Chain,
  wallet: Address,
  label: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)),
  active: Schema.Boolean
}).annotate({ identifier: "WalletLabeledEvent" })

/** A public profile of a wallet resolved by `source`; replaces that source's earlier profile. */
export const IdentityResolved = Schema.Struct({
  type: Schema.Literal("identityResolved"),
  ...eventFields,
  chain: Chain,
  wallet: Address,
  source: Schema.String.check(Schema.isMinLength(1)),
  handle: Schema.NullOr(Schema.String),
  displayName: Schema.NullOr(Schema.String),
  avatar: Schema.NullOr(Schema.String),
  twitter: Schema.NullOr(Schema.String),
  telegram: Schema.NullOr(Schema.String),
  farcaster: Schema.NullOr(Schema.String)
}).annotate({ identifier: "IdentityResolvedEvent" })

/** USD price of one whole unit of the chain's native asset. */
export const NativePriceUpdated = Schema.Struct({
  type: Schema.Literal("nativePrice"),
  ...eventFields,
  chain: Chain,
  usd: DecimalText
}).annotate({ identifier: "NativePriceEvent" })

export const MarketEvent = Schema.Union([
  TokenLaunched,
  Swap,
  Transfer,
  MetadataResolved,
  WalletFunded,
  CurveProgressed,
  Graduated,
  LiquidityChanged,
  SecurityScored,
  TokenListed,
  WalletLabeled,
  IdentityResolved,
  NativePriceUpdated
]).annotate({ identifier: "MarketEvent" })

/** Every event's `type`, in the union's order (for messages naming what `type` may be). */
export const marketEventTypes = [
  "tokenLaunched",
  "swap",
  "transfer",
  "metadataResolved",
  "walletFunded",
  "curveProgressed",
  "graduated",
  "liquidityChanged",
  "securityScored",
  "tokenListed",
  "walletLabeled",
  "identityResolved",
  "nativePrice"
] as const satisfies ReadonlyArray<MarketEvent["type"]>
/** Compiles only while `marketEventTypes` names every member of the union. */
const everyTypeNamed: Exclude<MarketEvent["type"], (typeof marketEventTypes)[number]> extends never ? true : never = true
void everyTypeNamed

export type TokenLaunched = typeof TokenLaunched.Type
export type Swap = typeof Swap.Type
export type Transfer = typeof Transfer.Type
export type MetadataResolved = typeof MetadataResolved.Type
export type WalletFunded = typeof WalletFunded.Type
export type CurveProgressed = typeof CurveProgressed.Type
export type Graduated = typeof Graduated.Type
export type LiquidityChanged = typeof LiquidityChanged.Type
export type SecurityScored = typeof SecurityScored.Type
export type TokenListed = typeof TokenListed.Type
export type WalletLabeled = typeof WalletLabeled.Type
export type IdentityResolved = typeof IdentityResolved.Type
export type NativePriceUpdated = typeof NativePriceUpdated.Type
export type MarketEvent = typeof MarketEvent.Type
export type MarketEventType = MarketEvent["type"]
/** The JSON form of an event, as an indexer sends it. */
export type MarketEventJson = typeof MarketEvent.Encoded

/**
 * The token an event is about, for the events that need the token launched first; undefined for
 * launches and for wallet and chain facts.
 */
export const subjectTokenOf = (event: MarketEvent): { readonly chain: MarketEvent["chain"]; readonly token: string } | undefined => {
  switch (event.type) {
    case "tokenLaunched":
    case "walletFunded":
    case "walletLabeled":
    case "identityResolved":
    case "nativePrice":
      return undefined
    default:
      return event
  }
}

/** Decodes one JSON event; fails with a SchemaError naming every problem. */
export const decodeMarketEvent = Schema.decodeUnknownExit(MarketEvent)
export const encodeMarketEvent = Schema.encodeSync(MarketEvent)
