/**
 * One token's state, folded from its events, and its wire object. The engine owns one TokenBook per
 * token; the book is also the token's discovery candidate.
 */
import type { Chain } from "../Chain.js"
import { canonicalAddress, nativeAsset } from "../Chain.js"
import type { DiscoveryCandidate } from "../discovery/Discovery.js"
import type { TokenMetadataFields } from "../events/MarketEvent.js"
import * as Fixed from "../Fixed.js"
import * as Wide from "./Wide.js"
import type { Interner } from "./Interned.js"
import type { Token } from "../wire/Token.js"
import { HolderBook } from "./Holders.js"
import type { TradeContext, TradeRing } from "./TradeFeed.js"
import { TradeTape } from "./TradeTape.js"
import { PositionBook } from "./Positions.js"
import type { FundingValue } from "./Funding.js"
import { unresolvedFunding } from "./Funding.js"

export interface PoolState {
  readonly address: string
  readonly dex: string
  anchorAddress: string
  anchorSymbol: string
  liquidityNative: Fixed.Fixed
  liquidityUsd: Fixed.Fixed
  /** Order in which the pool was first seen, for a stable order among equally deep pools. */
  readonly seenOrder: number
  /** A bonding curve: a swap on it reported the curve's completion (emptied when the token graduates). */
  isCurve: boolean
}

interface MoneyFixed {
  native: Fixed.Fixed
  usd: Fixed.Fixed
}

/** The all-time highs before any trade (replaced, never mutated). */
const noMoney: Readonly<MoneyFixed> = Object.freeze({ native: 0n, usd: 0n })

const money = (m: MoneyFixed) => ({ native: Fixed.format(m.native), usd: Fixed.format(m.usd) })

const emptyMetadata: TokenMetadataFields = {
  name: "",
  symbol: "",
  image: null,
  description: null,
  website: null,
  twitter: null,
  telegram: null,
  discord: null
}

interface SecurityFacts {
  readonly mintDisabled: boolean
  readonly transferBlockable: boolean
  readonly lpBurntPct: string | null
  readonly transferFeeBps: number | null
}

const unscored: SecurityFacts = Object.freeze({ mintDisabled: false, transferBlockable: false, lpBurntPct: null, transferFeeBps: null })

/**
 * Addresses that never count as holders: burn sinks, no key can move tokens from. Solana's
 * incinerator and its system program (all ones, the counterpart of the EVM zero address); the EVM
 * `dead` and zero addresses. Pools and the curve are added per token.
 */
const burnAddresses = new Set([
  "1nc1nerator11111111111111111111111111111111",
  "11111111111111111111111111111111",
  "0x000000000000000000000000000000000000dead",
  "0x0000000000000000000000000000000000000000"
])

/** Shared by every token without curve readings (never mutated: the first reading replaces it). */
const noSamples: Array<number> = []

/** The all-time sums a token keeps (see `TokenBook.totals`). */
export const TotalKind = { volume: 0, feeTransaction: 1, feeValidator: 2, feePlatform: 3, feeDex: 4 } as const
const TOTAL_KINDS = 5

const CURVE_HISTORY_MS = 3_600_000
const CURVE_SAMPLE_MS = 60_000

/**
 * How far a token's `updatedAt` may step past the market's clock or its latest change
 * (`TokenBook.publish`): the minute of clock skew an event may carry ahead, plus a second. With
 * less, a token told of an event dated ahead runs out of room before the clock reaches that event:
 * at 30 batches a second, 1,000 states later its next ones share an `updatedAt`. With this, states
 * share one only past one state per millisecond for over a minute.
 */
export const MAX_UPDATED_AT_LEAD_MS = 61_000

export class TokenBook implements DiscoveryCandidate {
  readonly key: string
  private currentMetadata: TokenMetadataFields = emptyMetadata
  private currentTradeContext: TradeContext | undefined = undefined
  bondingCurvePct: Fixed.Fixed | null
  graduatedAt: number | null = null
  graduatedToPool: string | null = null
  graduatedToDex: string | null = null
  /** Pools in the order first seen (tokens have one to a few; looked up by a linear scan). */
  readonly pools: Array<PoolState> = []
  /** Every wallet's position in this token, numbered like the holder book's wallets. */
  readonly positions: PositionBook
  priceNative: Fixed.Fixed = 0n
  priceUsd: Fixed.Fixed = 0n
  hasMarket = false
  /**
   * The latest trade's native value, its USD per native unit and its token amount: the market cap
   * (and a position's value) is supply (holdings) × value ÷ amount, in USD × the rate as well,
   * with one rounding at the end, not the price already truncated to 18 decimals (which keeps few
   * significant digits for a cheap token of a large supply) times the supply, nor the trade's USD
   * value already truncated.
   */
  lastValueNative: Fixed.Fixed = 0n
  lastUsdPerNative: Fixed.Fixed = 0n
  lastAmount: Fixed.Fixed = 0n
  athPrice: Readonly<MoneyFixed> = noMoney
  athPriceAt = 0
  athMarketCap: Readonly<MoneyFixed> = noMoney
  athMarketCapAt = 0
  /**
   * All-time volume and the four fee kinds (`TotalKind`), each as two wide integers (Wide.ts): the
   * native sum in the chain's native base units (exact, converted to Fixed on read) and the USD sum
   * as Fixed, each term valued at its swap's `nativeUsd`. Columns, not BigInt fields: they change
   * on every swap.
   */
  readonly totals = new Float64Array(TOTAL_KINDS * 2 * Wide.LIMBS)
  /** Replaced whole by each `securityScored` (the default is shared by every unscored token). */
  security: SecurityFacts = unscored
  platforms: Array<{ platform: string; isPaid: boolean; paidAt: number | null }> = []
  devFunding: FundingValue = unresolvedFunding
  /**
   * `stableKeyOf` the id of the launch event that created the token (a 53-bit hash, not the id's
   * text: a number per token instead of a string). A launch of the same token with another id is
   * refused; the same launch sent again is a repeat, which the event log drops.
   */
  launchIdKey = 0
  /** `updatedAt` as last published (`publish`, at the engine's drain). */
  private publishedAt: number
  /** The latest time among the changes since (NaN: none). */
  private changedAt = NaN
  /** The latest time of any change so far (an event dated ahead of the clock included). */
  private latestChangeAt: number
  readonly tape: TradeTape
  /** The newest trades of this token (created by the engine on the first trade). */
  recentTrades: TradeRing | undefined = undefined
  readonly holders: HolderBook
  /**
   * Curve readings `[time, pct, ...]`, oldest first, one per minute at most: the last hour's, and
   * the one in effect an hour before the newest (for bondingCurveActivity). A curve's first is 0 at launch.
   */
  private curveSamples: Array<number> = noSamples
  private cachedWire: Token | undefined
  private currentSupply: bigint
  /** `currentSupply` in whole tokens as a Fixed: every market cap multiplies by it. */
  private supplyWhole: Fixed.Fixed

  constructor(
    readonly chain: Chain,
    readonly address: string,
    readonly creator: string,
    readonly decimals: number,
    supply: bigint,
    readonly launchpad: string | null,
    readonly hasCurve: boolean,
    readonly launchBlock: number,
    readonly createdAt: number,
    readonly annotations: ReadonlyArray<string>,
    tapeRetainMs: number
  ) {
    this.key = `${chain}:${address}`
    this.currentSupply = supply
    this.supplyWhole = Fixed.fromBaseUnits(supply, decimals)
    this.bondingCurvePct = hasCurve ? 0n : null
    if (hasCurve) this.curveSamples = [createdAt, 0]
    this.publishedAt = createdAt
    this.latestChangeAt = createdAt
    this.tape = new TradeTape({ retainMs: tapeRetainMs })
    this.holders = new HolderBook(supply, creator, hasCurve ? launchBlock : null, this)
    this.positions = new PositionBook(chain, address, decimals)
  }

  /** Total supply in base units. */
  get supply(): bigint {
    return this.currentSupply
  }
  set supply(value: bigint) {
    this.currentSupply = value
    this.supplyWhole = Fixed.fromBaseUnits(value, this.decimals)
    this.currentTradeContext = undefined
  }

  /**
   * A mint or burn moved the supply at `at`. The market cap follows the supply at the last price,
   * so a mint can lift it above its all-time high without a trade: the high moves with it (an
   * all-time high is never below the current value).
   */
  changeSupply(value: bigint, at: number): void {
    this.supply = value
    this.holders.setSupply(value)
    if (!this.hasMarket) return
    const marketCapUsd = this.marketCapUsd
    if (marketCapUsd > this.athMarketCap.usd) {
      this.athMarketCap = { native: this.marketCapNative, usd: marketCapUsd }
      this.athMarketCapAt = at
    }
  }

  get metadata(): TokenMetadataFields {
    return this.currentMetadata
  }
  set metadata(value: TokenMetadataFields) {
    this.currentMetadata = value
    this.currentTradeContext = undefined
  }

  /** The token as its trades see it now (shared by every trade until supply or metadata change). */
  get tradeContext(): TradeContext {
    let context = this.currentTradeContext
    if (context === undefined) {
      context = { token: this, supply: this.currentSupply, metadata: this.currentMetadata }
      this.currentTradeContext = context
    }
    return context
  }

  // --- discovery candidate view -------------------------------------------------------------

  get name(): string {
    return this.metadata.name
  }
  get symbol(): string {
    return this.metadata.symbol
  }
  get twitter(): string | null {
    return this.metadata.twitter
  }
  get website(): string | null {
    return this.metadata.website
  }
  get telegram(): string | null {
    return this.metadata.telegram
  }
  get discord(): string | null {
    return this.metadata.discord
  }
  get creatorFunder(): string | null {
    return this.devFunding.address
  }
  get anchorSymbol(): string | null {
    return this.deepestPool()?.anchorSymbol ?? null
  }
  get anchorAddress(): string | null {
    return this.deepestPool()?.anchorAddress ?? null
  }
  get volume24hUsd(): Fixed.Fixed {
    return this.tape.volume24h().usd
  }
  /** Supply × the latest trade's price, exact to 18 decimals (0 before any trade). */
  get marketCapNative(): Fixed.Fixed {
    return this.marketCapAt(this.lastValueNative, this.lastAmount)
  }
  get marketCapUsd(): Fixed.Fixed {
    return this.marketCapUsdAt(this.lastValueNative, this.lastUsdPerNative, this.lastAmount)
  }
  get liquidityUsd(): Fixed.Fixed {
    let sum = 0n
    for (const pool of this.pools) sum += pool.liquidityUsd
    return sum
  }
  get liquidityNative(): Fixed.Fixed {
    let sum = 0n
    for (const pool of this.pools) sum += pool.liquidityNative
    return sum
  }
  get holdersCount(): number {
    return this.holders.holderCount()
  }
  get buys24h(): number {
    return this.tape.count24h().buys
  }
  get sells24h(): number {
    return this.tape.count24h().sells
  }
  get devHoldingPct(): Fixed.Fixed {
    return this.holders.devPct()
  }
  get snipersPct(): Fixed.Fixed {
    return this.holders.snipersPct()
  }
  get top10Pct(): Fixed.Fixed {
    return this.holders.top10Pct()
  }
  get globalFeesPaidUsd(): Fixed.Fixed {
    return this.totalUsd(TotalKind.feePlatform) + this.totalUsd(TotalKind.feeDex)
  }

  /** Adds one swap's term to an all-time sum: `units` native base units worth `usd`. */
  addTotal(kind: number, units: bigint, usd: Fixed.Fixed): void {
    Wide.add(this.totals, kind * 2 * Wide.LIMBS, units)
    Wide.add(this.totals, (kind * 2 + 1) * Wide.LIMBS, usd)
  }

  /** An all-time sum's native base units. */
  totalUnits(kind: number): bigint {
    return Wide.read(this.totals, kind * 2 * Wide.LIMBS)
  }

  /** An all-time sum's USD value (Fixed). */
  totalUsd(kind: number): Fixed.Fixed {
    return Wide.read(this.totals, (kind * 2 + 1) * Wide.LIMBS)
  }
  /**
   * Curve points gained over the hour before `now`: the curve now minus the reading in effect at
   * `now` − 1 h (the newest reading at or before it; the first one for a curve younger than that).
   */
  bondingCurveActivity(now: number): number {
    const samples = this.curveSamples
    if (this.bondingCurvePct === null || samples.length === 0) return 0
    const hourAgo = now - CURVE_HISTORY_MS
    let reference = samples[1]!
    for (let i = 2; i < samples.length && samples[i]! <= hourAgo; i += 2) reference = samples[i + 1]!
    return Fixed.toNumber(this.bondingCurvePct) - reference
  }

  // --- folding --------------------------------------------------------------------------------

  /** Whole-token supply × value ÷ amount: the market cap at a trade's price, with one rounding. */
  marketCapAt(value: Fixed.Fixed, amount: Fixed.Fixed): Fixed.Fixed {
    return Fixed.mulDiv(value, this.supplyWhole, amount)
  }

  /** Whole-token supply × native value × USD per native ÷ amount, in USD, with one rounding. */
  marketCapUsdAt(valueNative: Fixed.Fixed, usdPerNative: Fixed.Fixed, amount: Fixed.Fixed): Fixed.Fixed {
    return Fixed.usdAtTrade(this.supplyWhole, valueNative, usdPerNative, amount)
  }

  isExcludedFromTop10(address: string): boolean {
    return burnAddresses.has(address) || this.poolAt(address) !== undefined || address === this.address
  }

  /**
   * When the token last changed: the latest change's time, or 1 ms past the last published
   * `updatedAt` when no change since is later (several changes in one millisecond, a late event).
   * It strictly increases from one published state to the next (the engine publishes at each
   * drain: a batch's fold, a clock tick; up to the bound of `publish`), so two states a client can
   * see do not share one, and a client merging a REST snapshot with the stream by "the later
   * updatedAt" (spec, "Combining a snapshot with a stream") does not keep an older state on a tie.
   * Per published state, not per change: per change, 5,000 swaps of one millisecond in one batch
   * would move it 3.4 s ahead of the clock (docs/market-events.md).
   */
  get updatedAt(): number {
    const changed = this.changedAt
    if (Number.isNaN(changed)) return this.publishedAt
    return changed > this.publishedAt ? changed : this.publishedAt + 1
  }

  /** Records a change at `at`. */
  touch(at: number): void {
    if (!(at <= this.changedAt)) this.changedAt = at
    if (at > this.latestChangeAt) this.latestChangeAt = at
    this.cachedWire = undefined
    this.wireChanges++
  }

  /**
   * The state readers have now is published: `updatedAt` is fixed (the engine's `drainChanges`).
   * The 1 ms step never takes it more than `MAX_UPDATED_AT_LEAD_MS` past the market's `clock` (or
   * past the token's latest change, when that is dated ahead): at more than one published state
   * per millisecond, sustained, it would otherwise run ahead of the clock without bound (1.6 s
   * ahead with 12,000 one-swap batches in 10 s). Only there can two states share
   * an `updatedAt`.
   */
  publish(clock: number): void {
    const changed = this.changedAt
    if (Number.isNaN(changed)) return
    const published = this.publishedAt
    const ceiling = (clock > this.latestChangeAt ? clock : this.latestChangeAt) + MAX_UPDATED_AT_LEAD_MS
    const next = changed > published ? changed : published + 1 <= ceiling ? published + 1 : published
    if (next !== this.updatedAt) {
      this.cachedWire = undefined
      this.wireChanges++
    }
    this.publishedAt = next
    this.changedAt = NaN
  }

  /**
   * Bumped on every change of the wire object (`toWire`): an encoder keeps its encoding beside the
   * token with the version it encoded, so a token is encoded once per change however many readers
   * it has.
   */
  get wireVersion(): number {
    return this.wireChanges
  }
  private wireChanges = 0

  /**
   * The pool a swap or liquidity event names, registered on first sight under its canonical address
   * (EVM lower case, like every holder address): a pool named in another letter case is the same
   * pool. Names already canonical (the usual case) are found without building a new string. A new
   * pool keeps its venue and anchor as `interner`'s copies (the engine's).
   */
  pool(named: string, dex: string, anchorAddress: string, anchorSymbol: string, interner: Interner): PoolState {
    let pool = this.poolAt(named)
    if (pool !== undefined) return pool
    const address = canonicalAddress(this.chain, named)
    pool = this.poolAt(address)
    if (pool === undefined) {
      pool = { address, dex: interner.of(dex), anchorAddress: interner.of(canonicalAddress(this.chain, anchorAddress)), anchorSymbol: interner.of(anchorSymbol), liquidityNative: 0n, liquidityUsd: 0n, seenOrder: this.pools.length, isCurve: false }
      this.pools.push(pool)
      // A pool is no holder: one that already held tokens (sent to it before the pool was known,
      // e.g. at graduation) leaves the holder count and the top ten now.
      this.holders.onExclusionChanged(address)
    }
    return pool
  }

  poolAt(address: string): PoolState | undefined {
    const pools = this.pools
    for (let i = 0; i < pools.length; i++) if (pools[i]!.address === address) return pools[i]
    return undefined
  }

  deepestPool(): PoolState | undefined {
    let best: PoolState | undefined
    for (const pool of this.pools) {
      if (
        best === undefined ||
        pool.liquidityUsd > best.liquidityUsd ||
        (pool.liquidityUsd === best.liquidityUsd && pool.seenOrder < best.seenOrder)
      ) best = pool
    }
    return best
  }

  /** Venues of the token's pools, deepest pool first, each venue once. */
  dexes(): Array<string> {
    const pools = [...this.pools].sort((a, b) =>
      a.liquidityUsd === b.liquidityUsd ? a.seenOrder - b.seenOrder : a.liquidityUsd > b.liquidityUsd ? -1 : 1
    )
    const out: Array<string> = []
    for (const pool of pools) if (!out.includes(pool.dex)) out.push(pool.dex)
    return out
  }

  /**
   * A trade of `amount` tokens for `valueNative` at `usdPerNative` (price and market cap as the
   * engine derived them from those) moves the all-time highs, and, when it is the token's latest
   * trade (`current`; a late trade, older than the latest, leaves them), the price and the basis of
   * the current market cap.
   */
  recordPrice(
    valueNative: Fixed.Fixed,
    usdPerNative: Fixed.Fixed,
    amount: Fixed.Fixed,
    priceNative: Fixed.Fixed,
    priceUsd: Fixed.Fixed,
    marketCapNative: Fixed.Fixed,
    marketCapUsd: Fixed.Fixed,
    at: number,
    current: boolean
  ): void {
    if (current || !this.hasMarket) {
      this.priceNative = priceNative
      this.priceUsd = priceUsd
      this.hasMarket = true
      this.lastValueNative = valueNative
      this.lastUsdPerNative = usdPerNative
      this.lastAmount = amount
    }
    if (priceUsd > this.athPrice.usd) {
      this.athPrice = { native: priceNative, usd: priceUsd }
      this.athPriceAt = at
    }
    if (marketCapUsd > this.athMarketCap.usd) {
      this.athMarketCap = { native: marketCapNative, usd: marketCapUsd }
      this.athMarketCapAt = at
    }
  }

  /**
   * A pool's value (native, as a Fixed) and quote asset as last reported, valued at `usdPerNative`
   * (a changed anchor kept as `interner`'s copy).
   */
  setPoolLiquidity(pool: PoolState, anchorAddress: string, anchorSymbol: string, liquidityNative: Fixed.Fixed, usdPerNative: Fixed.Fixed, interner: Interner): void {
    // one spelling per address: an EVM anchor lower-case, as the pool's own address
    const anchor = canonicalAddress(this.chain, anchorAddress)
    if (pool.anchorAddress !== anchor) pool.anchorAddress = interner.of(anchor)
    if (pool.anchorSymbol !== anchorSymbol) pool.anchorSymbol = interner.of(anchorSymbol)
    pool.liquidityNative = liquidityNative
    pool.liquidityUsd = Fixed.mul(liquidityNative, usdPerNative)
  }

  /** A curve reading: kept while the token is on its curve (ignored once graduated or without one). */
  /** Records a curve reading; false (nothing recorded) for a token without a curve or graduated. */
  progressCurve(pct: Fixed.Fixed, at: number): boolean {
    if (!this.hasCurve || this.graduatedAt !== null) return false
    this.recordCurve(pct, at)
    return true
  }

  recordCurve(pct: Fixed.Fixed, at: number): void {
    this.bondingCurvePct = pct
    // samples: [time0, pct0, time1, pct1, ...] oldest first, at most one per minute, last hour only
    const n = this.curveSamples.length
    if (n === 0) this.curveSamples = [at, Fixed.toNumber(pct)]
    else if (at - this.curveSamples[n - 2]! >= CURVE_SAMPLE_MS) this.curveSamples.push(at, Fixed.toNumber(pct))
    let drop = 0
    while (drop + 2 < this.curveSamples.length && this.curveSamples[drop + 2]! <= at - CURVE_HISTORY_MS) drop += 2
    if (drop > 0) this.curveSamples = this.curveSamples.slice(drop)
  }

  // --- wire -----------------------------------------------------------------------------------

  /** The token object; built once per change and reused until the next one. */
  toWire(): Token {
    if (this.cachedWire !== undefined) return this.cachedWire
    const deepest = this.deepestPool()
    const liquidity = { native: this.liquidityNative, usd: this.liquidityUsd }
    const wire: Token = {
      chain: this.chain,
      address: this.address,
      name: this.metadata.name,
      symbol: this.metadata.symbol,
      decimals: this.decimals,
      supply: Fixed.formatUnits(this.supply, this.decimals),
      creator: this.creator,
      devFunding: {
        status: this.devFunding.status,
        address: this.devFunding.address,
        sourceKind: this.devFunding.sourceKind,
        sourceLabel: this.devFunding.sourceLabel
      },
      createdAt: this.createdAt,
      launchpad: this.launchpad,
      bondingCurvePct: this.bondingCurvePct === null ? null : Fixed.format(this.bondingCurvePct),
      graduatedAt: this.graduatedAt,
      graduatedToPool: this.graduatedToPool,
      graduatedToDex: this.graduatedToDex,
      dexes: this.dexes(),
      anchorAddress: deepest?.anchorAddress ?? null,
      anchorSymbol: deepest?.anchorSymbol ?? null,
      price: money({ native: this.priceNative, usd: this.priceUsd }),
      marketCap: money({ native: this.marketCapNative, usd: this.marketCapUsd }),
      liquidity: money(liquidity),
      ath: {
        price: money(this.athPrice),
        // Before any priced trade the ATH is the zero price the token was created at, "reached" at
        // its creation: a real time, never the epoch (docs/http-api.md).
        priceAt: this.athPriceAt === 0 ? this.createdAt : this.athPriceAt,
        marketCap: money(this.athMarketCap),
        marketCapAt: this.athMarketCapAt === 0 ? this.createdAt : this.athMarketCapAt
      },
      stats: this.tape.stats(),
      totals: {
        volume: this.total(TotalKind.volume),
        fees: {
          transaction: this.total(TotalKind.feeTransaction),
          validator: this.total(TotalKind.feeValidator),
          platform: this.total(TotalKind.feePlatform),
          dex: this.total(TotalKind.feeDex)
        }
      },
      holders: this.holders.toWire(),
      security: {
        mintDisabled: this.security.mintDisabled,
        transferBlockable: this.security.transferBlockable,
        lpBurntPct: this.security.lpBurntPct,
        transferFeeBps: this.security.transferFeeBps,
        rugPct: "0"
      },
      metadata: {
        description: this.metadata.description,
        website: this.metadata.website,
        twitter: this.metadata.twitter,
        telegram: this.metadata.telegram,
        discord: this.metadata.discord,
        twitterReuseCount: 0
      },
      ...(this.platforms.length > 0 ? { platforms: this.platforms.map((p) => ({ ...p })) } : {}),
      ...(this.annotations.length > 0 ? { annotations: this.annotations.map((kind) => ({ kind })) } : {}),
      updatedAt: this.updatedAt
    }
    this.cachedWire = wire
    return wire
  }

  private total(kind: number) {
    return { native: Fixed.format(nativeValue(this.chain, this.totalUnits(kind))), usd: Fixed.format(this.totalUsd(kind)) }
  }
}

/** The native asset's whole-unit value of `amount` base units. */
export const nativeValue = (chain: Chain, amount: bigint): Fixed.Fixed => Fixed.fromBaseUnits(amount, nativeAsset[chain].decimals)

/**
 * `Fixed.mul(nativeValue(chain, amount), usdPerNative)` with one multiplication fewer: scaling
 * both sides of a truncating division by the same power of ten leaves its quotient unchanged.
 */
export const nativeUsdValue = (chain: Chain, amount: bigint, usdPerNative: Fixed.Fixed): Fixed.Fixed => {
  const decimals = nativeAsset[chain].decimals
  return decimals <= Fixed.SCALE_DIGITS
    ? (amount * usdPerNative) / Fixed.pow10(decimals)
    : Fixed.mul(Fixed.fromBaseUnits(amount, decimals), usdPerNative)
}
