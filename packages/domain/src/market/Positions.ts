/**
 * One wallet's spot position in one token: a mutable state the engine folds each swap and
 * transfer of that wallet in that token into, and its wire form (spec "Position").
 *
 * Cost basis is a weighted average within a cycle; a cycle runs from the event that lifts the
 * balance from zero to the event that brings it back to zero. Every rule, with its reason, is in
 * docs/positions.md.
 *
 * The apply functions run on the hot path: they update the position's columns in its token's
 * `PositionBook` in place (exact wide integers, see Wide.ts) and allocate nothing but the
 * BigInts of the arithmetic, which die young. `toWire` builds the response object, for reads only.
 */
import type { Chain } from "../Chain.js"
import * as Fixed from "../Fixed.js"
import * as Wide from "./Wide.js"
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
export interface EarlierCycles {
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

// Column layout of one position: wide integers first (Wide.LIMBS doubles each), then plain numbers.
const W = Wide.LIMBS
const HOLDINGS = 0
const BOUGHT = 1 * W
const SOLD = 2 * W
const INVESTED_N = 3 * W
const INVESTED_U = 4 * W
const RECEIVED_N = 5 * W
const RECEIVED_U = 6 * W
const FEES_N = 7 * W
const FEES_U = 8 * W
const REALIZED_N = 9 * W
const REALIZED_U = 10 * W
const COST_N = 11 * W
const COST_U = 12 * W
const AVG_N = 13 * W
const AVG_U = 14 * W
const ENTRY_CAP_N = 15 * W
const ENTRY_CAP_U = 16 * W
const EXIT_CAP_N = 17 * W
const EXIT_CAP_U = 18 * W
const WIDE_FIELDS = 19
/** Wide fields a new cycle resets (everything but the holdings). */
const CYCLE_WIDE_FROM = BOUGHT
const OPENED_AT = WIDE_FIELDS * W
const CLOSED_AT = OPENED_AT + 1 // NaN while open
const UPDATED_AT = OPENED_AT + 2
const VERSION = OPENED_AT + 3
const BUY_COUNT = OPENED_AT + 4
const SELL_COUNT = OPENED_AT + 5
const CYCLE_COUNT = OPENED_AT + 6
const WINNING_CYCLES = OPENED_AT + 7
const FLAGS = OPENED_AT + 8
/** The engine's change round in which the position last changed (see `markChanged`). */
const CHANGE_MARK = OPENED_AT + 9
/** Doubles per position. */
const STRIDE = OPENED_AT + 10
/**
 * Positions per chunk of a book: a book's first chunk doubles until it holds this many, then
 * the book adds whole chunks and never copies them again (a popular token's thousands of positions
 * are megabytes: copying them on every growth cost a tenth of the fold, mostly in fresh pages).
 */
const CHUNK_SHIFT = 6
const CHUNK_SLOTS = 1 << CHUNK_SHIFT
const CHUNK_MASK = CHUNK_SLOTS - 1
const CHUNK_LENGTH = CHUNK_SLOTS * STRIDE
/** Where the position at `slot` starts in its chunk (`PositionBook.chunkOf`). */
const offsetOf = (slot: number): number => (slot & CHUNK_MASK) * STRIDE

// FLAGS bits.
const EXISTS = 1
/** The current cycle was opened by tokens that came in without a buy (`isTransfer`), buys since or not. */
const TRANSFER = 2
/**
 * The average cost is cost basis over holdings (tokens came in and none left since), computed
 * when read or when tokens next leave; otherwise it is the stored AVG value. Most positions are
 * never read between swaps, so a buy skips two divisions.
 */
const AVG_FROM_BASIS = 4
/** The current cycle has seen no buy yet (it was opened by a transfer): its sells realize nothing. */
const NO_BUY = 8

const noAddresses: Array<string | undefined> = []

/**
 * Every wallet's position in one token, as columns: slot i is the position of the wallet the
 * token's holder book numbered i, so the engine finds a wallet's holder entry and position with one
 * lookup. A position is `STRIDE` doubles in a Float64Array (no object, no BigInt per position),
 * `CHUNK_SLOTS` positions per array: the engine updates it on every trade without leaving anything
 * for the garbage collector.
 * The sums of earlier cycles, which most positions never have, live in a sparse map.
 */
export class PositionBook {
  private chunks: Array<Float64Array> = []
  private addresses: Array<string | undefined> = noAddresses
  private earlierBySlot: Map<number, EarlierCycles> | undefined = undefined
  private count = 0

  constructor(readonly chain: Chain, readonly token: string, readonly decimals: number) {}

  /** Positions opened so far. */
  get size(): number {
    return this.count
  }

  /** Whether slot `slot` holds a position. */
  has(slot: number): boolean {
    const chunk = this.chunks[slot >>> CHUNK_SHIFT]
    const at = offsetOf(slot)
    return chunk !== undefined && at < chunk.length && (chunk[at + FLAGS]! & EXISTS) !== 0
  }

  /**
   * Opens the position of `wallet` at `slot` (nothing held, no event applied yet, version 0) if
   * there is none; true when it was opened now.
   */
  open(slot: number, wallet: string, timestamp: number): boolean {
    const data = this.room(slot)
    const at = offsetOf(slot)
    if ((data[at + FLAGS]! & EXISTS) !== 0) return false
    data[at + FLAGS] = EXISTS
    data[at + OPENED_AT] = timestamp
    data[at + UPDATED_AT] = timestamp
    data[at + CLOSED_AT] = NaN
    if (this.addresses === noAddresses) this.addresses = []
    this.addresses[slot] = wallet
    this.count++
    return true
  }

  /**
   * Records that the position at `slot` changed in change round `round`; true the first time in
   * that round (the engine lists each changed position once per round without a set).
   */
  markChanged(slot: number, round: number): boolean {
    const data = this.chunkOf(slot)
    const at = offsetOf(slot) + CHANGE_MARK
    if (data[at] === round) return false
    data[at] = round
    return true
  }

  /** A read/write view of the position at `slot` (which must exist). */
  at(slot: number): PositionState {
    return new PositionState(this, slot)
  }

  /** Every open slot, in slot order. */
  *slots(): IterableIterator<number> {
    const chunks = this.chunks
    for (let c = 0; c < chunks.length; c++) {
      const chunk = chunks[c]!
      for (let at = 0; at < chunk.length; at += STRIDE) if ((chunk[at + FLAGS]! & EXISTS) !== 0) yield (c << CHUNK_SHIFT) + at / STRIDE
    }
  }

  /** @internal the columns of the chunk holding `slot` (the position starts at `offsetOf(slot)`). */
  chunkOf(slot: number): Float64Array {
    return this.chunks[slot >>> CHUNK_SHIFT]!
  }

  /** @internal */
  walletAt(slot: number): string {
    return this.addresses[slot]!
  }

  /** @internal */
  earlierOf(slot: number): EarlierCycles | null {
    return this.earlierBySlot?.get(slot) ?? null
  }

  /** @internal */
  setEarlier(slot: number, earlier: EarlierCycles): void {
    if (this.earlierBySlot === undefined) this.earlierBySlot = new Map()
    this.earlierBySlot.set(slot, earlier)
  }

  /** The chunk for `slot`, made or grown to hold it. */
  private room(slot: number): Float64Array {
    const chunks = this.chunks
    const index = slot >>> CHUNK_SHIFT
    const chunk = chunks[index]
    if (chunk !== undefined && offsetOf(slot) < chunk.length) return chunk
    if (index === 0) {
      // The first chunk doubles (4, 8, 16, 32, 64 positions; most tokens never fill it).
      const slots = Math.min(CHUNK_SLOTS, Math.max(slot + 1, 4, ((chunk?.length ?? 0) / STRIDE) * 2))
      return this.replaceFirst(slots)
    }
    // Past the first chunk every chunk is whole, and so is every chunk before it.
    if ((chunks[0]?.length ?? 0) < CHUNK_LENGTH) this.replaceFirst(CHUNK_SLOTS)
    while (chunks.length <= index) chunks.push(new Float64Array(CHUNK_LENGTH))
    return chunks[index]!
  }

  private replaceFirst(slots: number): Float64Array {
    const grown = new Float64Array(slots * STRIDE)
    const first = this.chunks[0]
    if (first !== undefined) grown.set(first)
    this.chunks[0] = grown
    return grown
  }
}

/**
 * One position: a view of its slot in a `PositionBook`. Fields without a `lifetime` prefix describe
 * the current cycle (or the last one, once it closed); `lifetime...` figures sum every cycle. Money
 * is `Fixed`, token amounts are base units. Reading a field builds its BigInt; views are cheap and
 * made per read, never kept by the engine.
 *
 * Every lifetime sum moves exactly like its current-cycle figure, so the book keeps only the sums
 * of the cycles before the current one (`earlier`, created when a second cycle opens) and a
 * lifetime figure is `earlier + current`.
 */
export class PositionState {
  constructor(readonly book: PositionBook, readonly slot: number) {}

  private wide(field: number): bigint {
    return Wide.read(this.book.chunkOf(this.slot), offsetOf(this.slot) + field)
  }
  private number(field: number): number {
    return this.book.chunkOf(this.slot)[offsetOf(this.slot) + field]!
  }

  get wallet(): string {
    return this.book.walletAt(this.slot)
  }
  get chain(): Chain {
    return this.book.chain
  }
  get token(): string {
    return this.book.token
  }
  get decimals(): number {
    return this.book.decimals
  }

  /** Token base units held now; never negative. */
  get holdings(): bigint {
    return this.wide(HOLDINGS)
  }
  get isTransfer(): boolean {
    return (this.number(FLAGS) & TRANSFER) !== 0
  }
  get buyCount(): number {
    return this.number(BUY_COUNT)
  }
  get sellCount(): number {
    return this.number(SELL_COUNT)
  }
  get tokensBought(): bigint {
    return this.wide(BOUGHT)
  }
  get tokensSold(): bigint {
    return this.wide(SOLD)
  }
  get investedNative(): Fixed.Fixed {
    return this.wide(INVESTED_N)
  }
  get investedUsd(): Fixed.Fixed {
    return this.wide(INVESTED_U)
  }
  get receivedNative(): Fixed.Fixed {
    return this.wide(RECEIVED_N)
  }
  get receivedUsd(): Fixed.Fixed {
    return this.wide(RECEIVED_U)
  }
  get feesNative(): Fixed.Fixed {
    return this.wide(FEES_N)
  }
  get feesUsd(): Fixed.Fixed {
    return this.wide(FEES_U)
  }
  get realizedPnlNative(): Fixed.Fixed {
    return this.wide(REALIZED_N)
  }
  get realizedPnlUsd(): Fixed.Fixed {
    return this.wide(REALIZED_U)
  }
  /** Cost of the tokens held now (the weighted average cost times holdings, held exactly). */
  get costBasisNative(): Fixed.Fixed {
    return this.wide(COST_N)
  }
  get costBasisUsd(): Fixed.Fixed {
    return this.wide(COST_U)
  }
  /** Average cost of one whole token; changes only when tokens come in, kept after the cycle closes. */
  get avgCostNative(): Fixed.Fixed {
    return averageCost(this.book.chunkOf(this.slot), offsetOf(this.slot), COST_N, AVG_N, this.decimals)
  }
  get avgCostUsd(): Fixed.Fixed {
    return averageCost(this.book.chunkOf(this.slot), offsetOf(this.slot), COST_U, AVG_U, this.decimals)
  }
  /** Amount-weighted average market cap of the cycle's buys (sells); meaningful once there is one. */
  get avgEntryMarketCapNative(): Fixed.Fixed {
    return this.wide(ENTRY_CAP_N)
  }
  get avgEntryMarketCapUsd(): Fixed.Fixed {
    return this.wide(ENTRY_CAP_U)
  }
  get avgExitMarketCapNative(): Fixed.Fixed {
    return this.wide(EXIT_CAP_N)
  }
  get avgExitMarketCapUsd(): Fixed.Fixed {
    return this.wide(EXIT_CAP_U)
  }
  /** Start of the current cycle. */
  get openedAt(): number {
    return this.number(OPENED_AT)
  }
  /** End of the current cycle; null while it is open. */
  get closedAt(): number | null {
    const closedAt = this.number(CLOSED_AT)
    return Number.isNaN(closedAt) ? null : closedAt
  }
  /** Time of the last change. */
  get updatedAt(): number {
    return this.number(UPDATED_AT)
  }
  /** Number of changes applied so far. */
  get version(): number {
    return this.number(VERSION)
  }
  get cycleCount(): number {
    return this.number(CYCLE_COUNT)
  }
  get winningCycleCount(): number {
    return this.number(WINNING_CYCLES)
  }
  /** Sums of the cycles before the current one; null while there was none. */
  get earlier(): EarlierCycles | null {
    return this.book.earlierOf(this.slot)
  }

  get lifetimeBuyCount(): number {
    const e = this.earlier
    return e === null ? this.buyCount : e.buyCount + this.buyCount
  }
  get lifetimeSellCount(): number {
    const e = this.earlier
    return e === null ? this.sellCount : e.sellCount + this.sellCount
  }
  get lifetimeTokensBought(): bigint {
    const e = this.earlier
    return e === null ? this.tokensBought : e.tokensBought + this.tokensBought
  }
  get lifetimeTokensSold(): bigint {
    const e = this.earlier
    return e === null ? this.tokensSold : e.tokensSold + this.tokensSold
  }
  get lifetimeInvestedNative(): Fixed.Fixed {
    const e = this.earlier
    return e === null ? this.investedNative : e.investedNative + this.investedNative
  }
  get lifetimeInvestedUsd(): Fixed.Fixed {
    const e = this.earlier
    return e === null ? this.investedUsd : e.investedUsd + this.investedUsd
  }
  get lifetimeReceivedNative(): Fixed.Fixed {
    const e = this.earlier
    return e === null ? this.receivedNative : e.receivedNative + this.receivedNative
  }
  get lifetimeReceivedUsd(): Fixed.Fixed {
    const e = this.earlier
    return e === null ? this.receivedUsd : e.receivedUsd + this.receivedUsd
  }
  get lifetimeFeesNative(): Fixed.Fixed {
    const e = this.earlier
    return e === null ? this.feesNative : e.feesNative + this.feesNative
  }
  get lifetimeFeesUsd(): Fixed.Fixed {
    const e = this.earlier
    return e === null ? this.feesUsd : e.feesUsd + this.feesUsd
  }
  get lifetimeRealizedPnlNative(): Fixed.Fixed {
    const e = this.earlier
    return e === null ? this.realizedPnlNative : e.realizedPnlNative + this.realizedPnlNative
  }
  get lifetimeRealizedPnlUsd(): Fixed.Fixed {
    const e = this.earlier
    return e === null ? this.realizedPnlUsd : e.realizedPnlUsd + this.realizedPnlUsd
  }
}

const averageCost = (data: Float64Array, at: number, cost: number, stored: number, decimals: number): Fixed.Fixed => {
  if ((data[at + FLAGS]! & AVG_FROM_BASIS) === 0) return Wide.read(data, at + stored)
  return Fixed.mulDiv(Wide.read(data, at + cost), Fixed.pow10(decimals), Wide.read(data, at + HOLDINGS))
}

/**
 * A position that holds nothing and has seen no event yet (version 0, no cycle), in a book of its
 * own (for tests and tools; the engine opens positions in each token's book).
 */
export const makePosition = (
  wallet: string,
  chain: Chain,
  token: string,
  decimals: number,
  timestamp: number
): PositionState => {
  const book = new PositionBook(chain, token, decimals)
  book.open(0, wallet, timestamp)
  return book.at(0)
}

/** Moves the current cycle's sums into `earlier` before a new cycle resets them. */
const keepEarlierCycle = (p: PositionState): void => {
  const e = p.earlier
  if (e === null) {
    p.book.setEarlier(p.slot, {
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
    })
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
const openCycle = (p: PositionState, data: Float64Array, at: number, timestamp: number, byTransfer: boolean): void => {
  if (data[at + CYCLE_COUNT]! > 0) keepEarlierCycle(p)
  data.fill(0, at + CYCLE_WIDE_FROM, at + OPENED_AT)
  data[at + FLAGS] = byTransfer ? EXISTS | TRANSFER | NO_BUY : EXISTS
  data[at + BUY_COUNT] = 0
  data[at + SELL_COUNT] = 0
  data[at + OPENED_AT] = timestamp
  data[at + CLOSED_AT] = NaN
  data[at + CYCLE_COUNT]++
}

/**
 * Ends the cycle once the balance is back at zero; a no-op while tokens are held, when the cycle
 * already closed, or when no cycle ever opened (a transfer out of a wallet we saw nothing arrive in).
 */
const closeCycleIfEmpty = (data: Float64Array, at: number, timestamp: number): void => {
  if (!Wide.isZero(data, at + HOLDINGS) || !Number.isNaN(data[at + CLOSED_AT]!) || data[at + CYCLE_COUNT] === 0) return
  // The proportional cost removal leaves exactly zero when the last token leaves; reset anyway
  // so a closed cycle can never carry cost into the next one.
  Wide.clear(data, at + COST_N)
  Wide.clear(data, at + COST_U)
  data[at + CLOSED_AT] = timestamp
  if (Wide.sign(data, at + REALIZED_U) > 0) data[at + WINNING_CYCLES]++
}

/** Tokens came in: the average cost per whole token is now the cost basis over the holdings. */
const refreshAverageCost = (data: Float64Array, at: number): void => {
  if (!Wide.isZero(data, at + HOLDINGS)) data[at + FLAGS] = data[at + FLAGS]! | AVG_FROM_BASIS
}

/** Tokens are about to leave: fix the average at cost basis over holdings before either moves. */
const settleAverageCost = (data: Float64Array, at: number, decimals: number): void => {
  if ((data[at + FLAGS]! & AVG_FROM_BASIS) === 0) return
  Wide.write(data, at + AVG_N, averageCost(data, at, COST_N, AVG_N, decimals))
  Wide.write(data, at + AVG_U, averageCost(data, at, COST_U, AVG_U, decimals))
  data[at + FLAGS] = data[at + FLAGS]! & ~AVG_FROM_BASIS
}

/**
 * The time an event is applied at: its own, or the position's `updatedAt` when it is dated before
 * (a late event). A position's times follow the order its events are applied in, so `openedAt` ≤
 * `closedAt` ≤ `updatedAt` always hold and `updatedAt` never goes back (applied at its own time,
 * a late sell could close a position seconds before it opened).
 */
const positionTime = (data: Float64Array, at: number, timestamp: number): number => {
  const updatedAt = data[at + UPDATED_AT]!
  return timestamp < updatedAt ? updatedAt : timestamp
}

const touch = (data: Float64Array, at: number, timestamp: number): void => {
  data[at + UPDATED_AT] = timestamp
  data[at + VERSION]++
}

/** Tokens arrived without a buy: zero cost basis; opens a transfer cycle from a zero balance. */
const receiveWithoutCost = (p: PositionState, data: Float64Array, at: number, amount: bigint, timestamp: number): void => {
  if (Wide.isZero(data, at + HOLDINGS)) openCycle(p, data, at, timestamp, true)
  Wide.add(data, at + HOLDINGS, amount)
  refreshAverageCost(data, at)
}

/**
 * Folds `amount` at `marketCap` into the amount-weighted average market cap at `average` over the
 * `before` tokens already weighed: (average × before + marketCap × amount) ÷ (before + amount),
 * truncated to 18 decimals. A running average rather than Σ(market cap × amount): the sum of
 * products outgrows any fixed width for large-supply tokens, the average never does.
 */
const weighMarketCap = (data: Float64Array, average: number, before: bigint, marketCap: Fixed.Fixed, amount: bigint): void => {
  if (before === 0n) {
    Wide.write(data, average, marketCap)
    return
  }
  const current = Wide.read(data, average)
  if (current === marketCap) return
  Wide.write(data, average, (current * before + marketCap * amount) / (before + amount))
}

/** Scratch of a fill: the amounts it adds to two sums each, split once (filled and read within one call, nothing kept between calls). */
const amountSplitScratch = new Wide.Split()
const nativeSplitScratch = new Wide.Split()
const usdSplitScratch = new Wide.Split()

export const applyBuy = (p: PositionState, fill: Fill): void => {
  const data = p.book.chunkOf(p.slot)
  const at = offsetOf(p.slot)
  const time = positionTime(data, at, fill.timestamp)
  const amount = fill.tokenAmount
  if (Wide.isZero(data, at + HOLDINGS)) openCycle(p, data, at, time, false)
  const bought = Wide.read(data, at + BOUGHT)
  weighMarketCap(data, at + ENTRY_CAP_N, bought, fill.marketCapNative, amount)
  weighMarketCap(data, at + ENTRY_CAP_U, bought, fill.marketCapUsd, amount)
  // A buy in a transfer-opened cycle: its later sells realize; tokens already held keep zero
  // cost. The cycle stays `isTransfer` (no buy opened it).
  data[at + FLAGS] = data[at + FLAGS]! & ~NO_BUY
  amountSplitScratch.of(amount)
  nativeSplitScratch.of(fill.valueNative)
  usdSplitScratch.of(fill.valueUsd)
  Wide.addSplit(data, at + HOLDINGS, amountSplitScratch)
  data[at + BUY_COUNT]++
  Wide.addSplit(data, at + BOUGHT, amountSplitScratch)
  Wide.addSplit(data, at + INVESTED_N, nativeSplitScratch)
  Wide.addSplit(data, at + INVESTED_U, usdSplitScratch)
  Wide.add(data, at + FEES_N, fill.feesNative)
  Wide.add(data, at + FEES_U, fill.feesUsd)
  Wide.addSplit(data, at + COST_N, nativeSplitScratch)
  Wide.addSplit(data, at + COST_U, usdSplitScratch)
  refreshAverageCost(data, at)
  touch(data, at, time)
  closeCycleIfEmpty(data, at, time)
}

export const applySell = (p: PositionState, fill: Fill): void => {
  const data = p.book.chunkOf(p.slot)
  const at = offsetOf(p.slot)
  const time = positionTime(data, at, fill.timestamp)
  const amount = fill.tokenAmount
  // Selling more than we saw arrive: the missing tokens came in unseen (an earlier transfer or
  // history before ours), so they are received without cost first, exactly like a transfer in.
  let holdings = Wide.read(data, at + HOLDINGS)
  if (amount > holdings) {
    receiveWithoutCost(p, data, at, amount - holdings, time)
    holdings = amount
  }
  settleAverageCost(data, at, p.decimals)
  const costOutNative = Fixed.mulDiv(Wide.read(data, at + COST_N), amount, holdings)
  const costOutUsd = Fixed.mulDiv(Wide.read(data, at + COST_U), amount, holdings)
  const sold = Wide.read(data, at + SOLD)
  weighMarketCap(data, at + EXIT_CAP_N, sold, fill.marketCapNative, amount)
  weighMarketCap(data, at + EXIT_CAP_U, sold, fill.marketCapUsd, amount)
  Wide.subtract(data, at + HOLDINGS, amount)
  Wide.subtract(data, at + COST_N, costOutNative)
  Wide.subtract(data, at + COST_U, costOutUsd)
  data[at + SELL_COUNT]++
  Wide.addSplit(data, at + SOLD, amountSplitScratch.of(amount))
  Wide.addSplit(data, at + RECEIVED_N, nativeSplitScratch.of(fill.valueNative))
  Wide.addSplit(data, at + RECEIVED_U, usdSplitScratch.of(fill.valueUsd))
  Wide.add(data, at + FEES_N, fill.feesNative)
  Wide.add(data, at + FEES_U, fill.feesUsd)
  // A cycle no buy opened realizes nothing: its tokens cost nothing, and counting their whole
  // sale value as profit would turn every airdrop dump into a "winning" trade.
  if ((data[at + FLAGS]! & NO_BUY) === 0) {
    Wide.add(data, at + REALIZED_N, fill.valueNative - costOutNative)
    Wide.add(data, at + REALIZED_U, fill.valueUsd - costOutUsd)
  }
  touch(data, at, time)
  closeCycleIfEmpty(data, at, time)
}

export const applyTransferIn = (p: PositionState, amount: bigint, timestamp: number): void => {
  const data = p.book.chunkOf(p.slot)
  const at = offsetOf(p.slot)
  const time = positionTime(data, at, timestamp)
  receiveWithoutCost(p, data, at, amount, time)
  touch(data, at, time)
  closeCycleIfEmpty(data, at, time)
}

export const applyTransferOut = (p: PositionState, amount: bigint, timestamp: number): void => {
  const data = p.book.chunkOf(p.slot)
  const at = offsetOf(p.slot)
  const time = positionTime(data, at, timestamp)
  // Tokens we never saw arrive cannot leave our books: the move is capped at the holdings.
  const holdings = Wide.read(data, at + HOLDINGS)
  const moved = amount > holdings ? holdings : amount
  if (moved > 0n) {
    settleAverageCost(data, at, p.decimals)
    Wide.subtract(data, at + COST_N, Fixed.mulDiv(Wide.read(data, at + COST_N), moved, holdings))
    Wide.subtract(data, at + COST_U, Fixed.mulDiv(Wide.read(data, at + COST_U), moved, holdings))
    Wide.subtract(data, at + HOLDINGS, moved)
  }
  touch(data, at, time)
  closeCycleIfEmpty(data, at, time)
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
  /**
   * What that price was made of, for values without its truncation: the latest trade's native
   * value, USD per native unit and token amount (whole tokens); a value is holdings × value ÷ amount.
   */
  readonly lastValueNative: Fixed.Fixed
  readonly lastUsdPerNative: Fixed.Fixed
  readonly lastAmount: Fixed.Fixed
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
  // holdings × the latest trade's value ÷ its amount, rounded once: the price served is truncated
  // to 18 decimals, a few significant digits for a cheap token of a large supply
  const holdings = Fixed.fromBaseUnits(p.holdings, p.decimals)
  const valueNative = Fixed.mulDiv(token.lastValueNative, holdings, token.lastAmount)
  const valueUsd = Fixed.usdAtTrade(holdings, token.lastValueNative, token.lastUsdPerNative, token.lastAmount)
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
  const avgEntryMarketCap = p.buyCount === 0 ? undefined : money(p.avgEntryMarketCapNative, p.avgEntryMarketCapUsd)
  const avgExitMarketCap = p.sellCount === 0 ? undefined : money(p.avgExitMarketCapNative, p.avgExitMarketCapUsd)
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
