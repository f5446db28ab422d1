/**
 * One wallet's spot position in one token: a mutable state the engine folds each swap and
 * transfer of that wallet in that token into, and its wire form (spec "Position").
 *
 * Cost basis is a weighted average within a cycle; a cycle runs from the event that lifts the
 * balance from zero to the event that brings it back to zero. Every rule, with its reason, is in
 * docs/positions.md.
 *
 * The apply functions run on the hot path: they mutate the state in place and allocate nothing
 * but the bigints of the arithmetic. `toWire` builds the response object and is for reads only.
 */
import type { Chain } from "../Chain.js"
import * as Fixed from "../Fixed.js"
import type { IdentityProfile, Money } from "../wire/Common.js"
import type { Position, PositionFunding as WirePositionFunding } from "../wire/Position.js"

/** One swap of the position's wallet in the position's token, valued at execution. */
export interface Fill {
  /** Token base units traded (positive). */
  readonly tokenAmount: bigint
  /** Value of the swap in the chain's native unit. */
  readonly valueNative: Fixed.Fixed
  /** Value of the swap in USD at execution. */
  readonly valueUsd: Fixed.Fixed
  /** Every fee the swap paid (transaction, validator, platform, dex), in native. */
  readonly feesNative: Fixed.Fixed
  readonly feesUsd: Fixed.Fixed
  /** The token's market cap at execution. */
  readonly marketCapNative: Fixed.Fixed
  readonly marketCapUsd: Fixed.Fixed
  readonly timestamp: number
}

/** Sums of a position's cycles before the current one (see `PositionState`). */
interface EarlierCycles {
  buyCount: number
  sellCount: number
  tokensBought: bigint
  tokensSold: bigint
  investedNative: Fixed.Fixed
  investedUsd: Fixed.Fixed
  receivedNative: Fixed.Fixed
  receivedUsd: Fixed.Fixed
  feesNative: Fixed.Fixed
  feesUsd: Fixed.Fixed
  realizedPnlNative: Fixed.Fixed
  realizedPnlUsd: Fixed.Fixed
}

/**
 * The position's state. Fields without a `lifetime` prefix describe the current cycle (or the last
 * one, once it closed); `lifetime...` figures sum every cycle. Money is `Fixed`, token amounts are
 * base units.
 *
 * Every lifetime sum moves exactly like its current-cycle figure, so the state keeps only the sums
 * of the cycles before the current one (`earlier`, created when a second cycle opens) and a
 * lifetime figure is `earlier + current`. Most positions live one cycle: they carry no second
 * copy of each sum and a swap updates each figure once.
 */
export class PositionState {
  /** Token base units held now; never negative. */
  holdings = 0n
  /** True while the current cycle has seen no buy: it was opened by tokens that came in without one. */
  isTransfer = false

  buyCount = 0
  sellCount = 0
  tokensBought = 0n
  tokensSold = 0n
  investedNative: Fixed.Fixed = 0n
  investedUsd: Fixed.Fixed = 0n
  receivedNative: Fixed.Fixed = 0n
  receivedUsd: Fixed.Fixed = 0n
  feesNative: Fixed.Fixed = 0n
  feesUsd: Fixed.Fixed = 0n
  realizedPnlNative: Fixed.Fixed = 0n
  realizedPnlUsd: Fixed.Fixed = 0n
  /** Cost of the tokens held now (the weighted average cost times holdings, held exactly). */
  costBasisNative: Fixed.Fixed = 0n
  costBasisUsd: Fixed.Fixed = 0n
  /**
   * Average cost of one whole token; changes only when tokens come in, kept after the cycle closes.
   * While `avgCostFromBasis` is set (tokens came in and none left since) it is cost basis over
   * holdings, computed when read or when tokens next leave; otherwise it is the stored value. Most
   * positions are never read between swaps, so a buy skips two divisions and two stored bigints.
   */
  avgCostFromBasis = false
  storedAvgCostNative: Fixed.Fixed = 0n
  storedAvgCostUsd: Fixed.Fixed = 0n
  /** Σ market cap × amount over the cycle's buys (divide by tokensBought) and sells (by tokensSold). */
  entryMarketCapNativeByAmount = 0n
  entryMarketCapUsdByAmount = 0n
  exitMarketCapNativeByAmount = 0n
  exitMarketCapUsdByAmount = 0n

  /** Start of the current cycle. */
  openedAt: number
  /** End of the current cycle; null while it is open. */
  closedAt: number | null = null
  /** Time of the last change. */
  updatedAt: number
  /** Number of changes applied so far. */
  version = 0

  cycleCount = 0
  winningCycleCount = 0
  /** Sums of the cycles before the current one; null while there was none. */
  earlier: EarlierCycles | null = null

  constructor(
    readonly wallet: string,
    readonly chain: Chain,
    readonly token: string,
    readonly decimals: number,
    timestamp: number
  ) {
    this.openedAt = timestamp
    this.updatedAt = timestamp
  }

  get avgCostNative(): Fixed.Fixed {
    return this.avgCostFromBasis
      ? Fixed.mulDiv(this.costBasisNative, Fixed.pow10(this.decimals), this.holdings)
      : this.storedAvgCostNative
  }
  get avgCostUsd(): Fixed.Fixed {
    return this.avgCostFromBasis ? Fixed.mulDiv(this.costBasisUsd, Fixed.pow10(this.decimals), this.holdings) : this.storedAvgCostUsd
  }

  get lifetimeBuyCount(): number {
    return this.earlier === null ? this.buyCount : this.earlier.buyCount + this.buyCount
  }
  get lifetimeSellCount(): number {
    return this.earlier === null ? this.sellCount : this.earlier.sellCount + this.sellCount
  }
  get lifetimeTokensBought(): bigint {
    return this.earlier === null ? this.tokensBought : this.earlier.tokensBought + this.tokensBought
  }
  get lifetimeTokensSold(): bigint {
    return this.earlier === null ? this.tokensSold : this.earlier.tokensSold + this.tokensSold
  }
  get lifetimeInvestedNative(): Fixed.Fixed {
    return this.earlier === null ? this.investedNative : this.earlier.investedNative + this.investedNative
  }
  get lifetimeInvestedUsd(): Fixed.Fixed {
    return this.earlier === null ? this.investedUsd : this.earlier.investedUsd + this.investedUsd
  }
  get lifetimeReceivedNative(): Fixed.Fixed {
    return this.earlier === null ? this.receivedNative : this.earlier.receivedNative + this.receivedNative
  }
  get lifetimeReceivedUsd(): Fixed.Fixed {
    return this.earlier === null ? this.receivedUsd : this.earlier.receivedUsd + this.receivedUsd
  }
  get lifetimeFeesNative(): Fixed.Fixed {
    return this.earlier === null ? this.feesNative : this.earlier.feesNative + this.feesNative
  }
  get lifetimeFeesUsd(): Fixed.Fixed {
    return this.earlier === null ? this.feesUsd : this.earlier.feesUsd + this.feesUsd
  }
  get lifetimeRealizedPnlNative(): Fixed.Fixed {
    return this.earlier === null ? this.realizedPnlNative : this.earlier.realizedPnlNative + this.realizedPnlNative
  }
  get lifetimeRealizedPnlUsd(): Fixed.Fixed {
    return this.earlier === null ? this.realizedPnlUsd : this.earlier.realizedPnlUsd + this.realizedPnlUsd
  }
}

/**
 * A position that holds nothing and has seen no event yet (version 0, no cycle). The engine
 * creates it for the first event of the wallet in the token and applies that event at once.
 */
export const makePosition = (
  wallet: string,
  chain: Chain,
  token: string,
  decimals: number,
  timestamp: number
): PositionState => new PositionState(wallet, chain, token, decimals, timestamp)

/** Moves the current cycle's sums into `earlier` before a new cycle resets them. */
const keepEarlierCycle = (p: PositionState): void => {
  const e = p.earlier
  if (e === null) {
    p.earlier = {
      buyCount: p.buyCount,
      sellCount: p.sellCount,
      tokensBought: p.tokensBought,
      tokensSold: p.tokensSold,
      investedNative: p.investedNative,
      investedUsd: p.investedUsd,
      receivedNative: p.receivedNative,
      receivedUsd: p.receivedUsd,
      feesNative: p.feesNative,
      feesUsd: p.feesUsd,
      realizedPnlNative: p.realizedPnlNative,
      realizedPnlUsd: p.realizedPnlUsd
    }
    return
  }
  e.buyCount += p.buyCount
  e.sellCount += p.sellCount
  e.tokensBought += p.tokensBought
  e.tokensSold += p.tokensSold
  e.investedNative += p.investedNative
  e.investedUsd += p.investedUsd
  e.receivedNative += p.receivedNative
  e.receivedUsd += p.receivedUsd
  e.feesNative += p.feesNative
  e.feesUsd += p.feesUsd
  e.realizedPnlNative += p.realizedPnlNative
  e.realizedPnlUsd += p.realizedPnlUsd
}

/** Starts a cycle: the balance is being lifted from zero. */
const openCycle = (p: PositionState, timestamp: number, byTransfer: boolean): void => {
  if (p.cycleCount > 0) keepEarlierCycle(p)
  p.isTransfer = byTransfer
  p.buyCount = 0
  p.sellCount = 0
  p.tokensBought = 0n
  p.tokensSold = 0n
  p.investedNative = 0n
  p.investedUsd = 0n
  p.receivedNative = 0n
  p.receivedUsd = 0n
  p.feesNative = 0n
  p.feesUsd = 0n
  p.realizedPnlNative = 0n
  p.realizedPnlUsd = 0n
  p.costBasisNative = 0n
  p.costBasisUsd = 0n
  p.avgCostFromBasis = false
  p.storedAvgCostNative = 0n
  p.storedAvgCostUsd = 0n
  p.entryMarketCapNativeByAmount = 0n
  p.entryMarketCapUsdByAmount = 0n
  p.exitMarketCapNativeByAmount = 0n
  p.exitMarketCapUsdByAmount = 0n
  p.openedAt = timestamp
  p.closedAt = null
  p.cycleCount++
}

/**
 * Ends the cycle once the balance is back at zero; a no-op while tokens are held, when the cycle
 * already closed, or when no cycle ever opened (a transfer out of a wallet we saw nothing arrive in).
 */
const closeCycleIfEmpty = (p: PositionState, timestamp: number): void => {
  if (p.holdings !== 0n || p.closedAt !== null || p.cycleCount === 0) return
  // The proportional cost removal leaves exactly zero when the last token leaves; reset anyway
  // so a closed cycle can never carry cost into the next one.
  p.costBasisNative = 0n
  p.costBasisUsd = 0n
  p.closedAt = timestamp
  if (p.realizedPnlUsd > 0n) p.winningCycleCount++
}

/** Tokens came in: the average cost per whole token is now the cost basis over the holdings. */
const refreshAverageCost = (p: PositionState): void => {
  if (p.holdings !== 0n) p.avgCostFromBasis = true
}

/** Tokens are about to leave: fix the average at cost basis over holdings before either moves. */
const settleAverageCost = (p: PositionState): void => {
  if (!p.avgCostFromBasis) return
  p.storedAvgCostNative = p.avgCostNative
  p.storedAvgCostUsd = p.avgCostUsd
  p.avgCostFromBasis = false
}

const touch = (p: PositionState, timestamp: number): void => {
  p.updatedAt = timestamp
  p.version++
}

/** Tokens arrived without a buy: zero cost basis; opens a transfer cycle from a zero balance. */
const receiveWithoutCost = (p: PositionState, amount: bigint, timestamp: number): void => {
  if (p.holdings === 0n) openCycle(p, timestamp, true)
  p.holdings += amount
  refreshAverageCost(p)
}

export const applyBuy = (p: PositionState, fill: Fill): void => {
  const amount = fill.tokenAmount
  if (p.holdings === 0n) openCycle(p, fill.timestamp, false)
  // A buy turns a transfer-opened cycle into a traded one; tokens already held keep zero cost.
  p.isTransfer = false
  p.holdings += amount
  p.buyCount++
  p.tokensBought += amount
  p.investedNative += fill.valueNative
  p.investedUsd += fill.valueUsd
  p.feesNative += fill.feesNative
  p.feesUsd += fill.feesUsd
  p.costBasisNative += fill.valueNative
  p.costBasisUsd += fill.valueUsd
  p.entryMarketCapNativeByAmount += fill.marketCapNative * amount
  p.entryMarketCapUsdByAmount += fill.marketCapUsd * amount
  refreshAverageCost(p)
  touch(p, fill.timestamp)
  closeCycleIfEmpty(p, fill.timestamp)
}

export const applySell = (p: PositionState, fill: Fill): void => {
  const amount = fill.tokenAmount
  // Selling more than we saw arrive: the missing tokens came in unseen (an earlier transfer or
  // history before ours), so they are received without cost first, exactly like a transfer in.
  if (amount > p.holdings) receiveWithoutCost(p, amount - p.holdings, fill.timestamp)
  settleAverageCost(p)
  const costOutNative = Fixed.mulDiv(p.costBasisNative, amount, p.holdings)
  const costOutUsd = Fixed.mulDiv(p.costBasisUsd, amount, p.holdings)
  p.holdings -= amount
  p.costBasisNative -= costOutNative
  p.costBasisUsd -= costOutUsd
  p.sellCount++
  p.tokensSold += amount
  p.receivedNative += fill.valueNative
  p.receivedUsd += fill.valueUsd
  p.feesNative += fill.feesNative
  p.feesUsd += fill.feesUsd
  p.exitMarketCapNativeByAmount += fill.marketCapNative * amount
  p.exitMarketCapUsdByAmount += fill.marketCapUsd * amount
  // A cycle no buy opened realizes nothing: its tokens cost nothing, and counting their whole
  // sale value as profit would turn every airdrop dump into a "winning" trade.
  if (!p.isTransfer) {
    const realizedNative = fill.valueNative - costOutNative
    const realizedUsd = fill.valueUsd - costOutUsd
    p.realizedPnlNative += realizedNative
    p.realizedPnlUsd += realizedUsd
  }
  touch(p, fill.timestamp)
  closeCycleIfEmpty(p, fill.timestamp)
}

export const applyTransferIn = (p: PositionState, amount: bigint, timestamp: number): void => {
  receiveWithoutCost(p, amount, timestamp)
  touch(p, timestamp)
  closeCycleIfEmpty(p, timestamp)
}

export const applyTransferOut = (p: PositionState, amount: bigint, timestamp: number): void => {
  // Tokens we never saw arrive cannot leave our books: the move is capped at the holdings.
  const moved = amount > p.holdings ? p.holdings : amount
  if (moved > 0n) {
    settleAverageCost(p)
    p.costBasisNative -= Fixed.mulDiv(p.costBasisNative, moved, p.holdings)
    p.costBasisUsd -= Fixed.mulDiv(p.costBasisUsd, moved, p.holdings)
    p.holdings -= moved
  }
  touch(p, timestamp)
  closeCycleIfEmpty(p, timestamp)
}

/** Current cycle status: open while the position holds tokens. */
export const statusOf = (p: PositionState): "open" | "closed" => (p.holdings > 0n ? "open" : "closed")

/** What the position's wire form needs to know about its token. */
export interface PositionTokenView {
  readonly address: string
  readonly chain: Chain
  readonly decimals: number
  readonly image: string | null
  readonly name: string
  readonly symbol: string
  /** Latest price of one whole token. */
  readonly priceNative: Fixed.Fixed
  readonly priceUsd: Fixed.Fixed
  readonly marketCapNative: Fixed.Fixed
  readonly marketCapUsd: Fixed.Fixed
  /** Total supply in base units. */
  readonly supply: bigint
  /** False for a token with no market record: value and PnL fields are then null. */
  readonly hasMarket: boolean
  readonly isStablecoin: boolean
  readonly liquidityUsd: Fixed.Fixed
}

/** The wallet's funding, as the spec's position `funding` object. */
export type PositionFunding = WirePositionFunding

/** A trader's resolved public profile (spec "Identity profile"). */
export type IdentityProfileValue = IdentityProfile

/** The spec's Position object. */
export type PositionWire = Position

/** The price-derived figures of a position at its token's latest price, as exact Fixed values. */
export interface PositionValuation {
  readonly valueNative: Fixed.Fixed
  readonly valueUsd: Fixed.Fixed
  readonly unrealizedPnlNative: Fixed.Fixed
  readonly unrealizedPnlUsd: Fixed.Fixed
  readonly totalPnlNative: Fixed.Fixed
  readonly totalPnlUsd: Fixed.Fixed
  /** totalPnl / invested × 100 in USD; null when nothing was invested in the cycle. */
  readonly pnlPct: Fixed.Fixed | null
}

/**
 * Value and PnL at the token's latest price; null for a token with no market record. The same
 * figures feed `toWire` and the positions read's sort keys, so the two always agree.
 */
export const valuationOf = (p: PositionState, token: PositionTokenView): PositionValuation | null => {
  if (!token.hasMarket) return null
  const unit = Fixed.pow10(p.decimals)
  const valueNative = Fixed.mulDiv(token.priceNative, p.holdings, unit)
  const valueUsd = Fixed.mulDiv(token.priceUsd, p.holdings, unit)
  // (price − avgCost) × holdings, from the exact cost basis so no per-token rounding creeps in.
  const unrealizedPnlNative = valueNative - p.costBasisNative
  const unrealizedPnlUsd = valueUsd - p.costBasisUsd
  const totalPnlUsd = p.realizedPnlUsd + unrealizedPnlUsd
  return {
    valueNative,
    valueUsd,
    unrealizedPnlNative,
    unrealizedPnlUsd,
    totalPnlNative: p.realizedPnlNative + unrealizedPnlNative,
    totalPnlUsd,
    pnlPct: p.investedUsd === 0n ? null : Fixed.pct(totalPnlUsd, p.investedUsd)
  }
}

const money = (native: Fixed.Fixed, usd: Fixed.Fixed): Money => ({
  native: Fixed.format(native),
  usd: Fixed.format(usd)
})

/** Amount-weighted average of market caps; undefined when no amount carried weight. */
const weightedMarketCap = (byAmountNative: bigint, byAmountUsd: bigint, amount: bigint): Money | undefined =>
  amount === 0n ? undefined : money(byAmountNative / amount, byAmountUsd / amount)

/**
 * The position as the spec's Position object, its price-derived fields at the token's latest
 * price. `identities` is omitted when empty; `closedAt` while the cycle is open; the average entry
 * (exit) market cap while the cycle has no buy (sell).
 */
export const toWire = (
  p: PositionState,
  token: PositionTokenView,
  funding: PositionFunding,
  identities: ReadonlyArray<IdentityProfileValue>
): PositionWire => {
  const status = statusOf(p)
  const valuation = valuationOf(p, token)
  const avgEntryMarketCap = weightedMarketCap(
    p.entryMarketCapNativeByAmount,
    p.entryMarketCapUsdByAmount,
    p.tokensBought
  )
  const avgExitMarketCap = weightedMarketCap(p.exitMarketCapNativeByAmount, p.exitMarketCapUsdByAmount, p.tokensSold)
  return {
    walletAddress: p.wallet,
    chain: p.chain,
    product: "spot",
    status,
    token: {
      address: token.address,
      chain: token.chain,
      decimals: token.decimals,
      image: token.image,
      name: token.name,
      symbol: token.symbol,
      price: money(token.priceNative, token.priceUsd),
      marketCap: money(token.marketCapNative, token.marketCapUsd)
    },
    holdings: Fixed.formatUnits(p.holdings, p.decimals),
    holdingsPctSupply: Fixed.format(Fixed.pct(p.holdings, token.supply)),
    avgCost: money(p.avgCostNative, p.avgCostUsd),
    invested: money(p.investedNative, p.investedUsd),
    received: money(p.receivedNative, p.receivedUsd),
    fees: money(p.feesNative, p.feesUsd),
    realizedPnl: money(p.realizedPnlNative, p.realizedPnlUsd),
    buyCount: p.buyCount,
    sellCount: p.sellCount,
    tokensBought: Fixed.formatUnits(p.tokensBought, p.decimals),
    tokensSold: Fixed.formatUnits(p.tokensSold, p.decimals),
    isStablecoin: token.isStablecoin,
    isTransfer: p.isTransfer,
    openedAt: p.openedAt,
    updatedAt: p.updatedAt,
    version: p.version,
    funding,
    lifetime: {
      buyCount: p.lifetimeBuyCount,
      cycleCount: p.cycleCount,
      fees: money(p.lifetimeFeesNative, p.lifetimeFeesUsd),
      invested: money(p.lifetimeInvestedNative, p.lifetimeInvestedUsd),
      realizedPnl: money(p.lifetimeRealizedPnlNative, p.lifetimeRealizedPnlUsd),
      received: money(p.lifetimeReceivedNative, p.lifetimeReceivedUsd),
      sellCount: p.lifetimeSellCount,
      tokensBought: Fixed.formatUnits(p.lifetimeTokensBought, p.decimals),
      tokensSold: Fixed.formatUnits(p.lifetimeTokensSold, p.decimals),
      winningCycleCount: p.winningCycleCount
    },
    ...(status === "closed" && p.closedAt !== null ? { closedAt: p.closedAt } : {}),
    ...(avgEntryMarketCap === undefined ? {} : { avgEntryMarketCap }),
    ...(avgExitMarketCap === undefined ? {} : { avgExitMarketCap }),
    ...(identities.length === 0 ? {} : { identities }),
    value: valuation === null ? null : money(valuation.valueNative, valuation.valueUsd),
    unrealizedPnl: valuation === null ? null : money(valuation.unrealizedPnlNative, valuation.unrealizedPnlUsd),
    totalPnl: valuation === null ? null : money(valuation.totalPnlNative, valuation.totalPnlUsd),
    pnlPct: valuation === null || valuation.pnlPct === null ? null : Fixed.format(valuation.pnlPct)
  }
}
