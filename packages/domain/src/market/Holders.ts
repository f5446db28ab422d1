/**
 * The per-token holder book: balances, wallet-risk flags and the spec's `holders` object, kept
 * incrementally so the engine can call it on every swap and transfer (see docs/holders.md).
 *
 * Per wallet the book keeps a struct-of-arrays slot (balance, a flag bitmask, first-trade time)
 * instead of one object per wallet: that is the main per-token memory cost. Group shares are
 * running balance sums adjusted on every balance change of a flagged wallet; the top-10 share
 * comes from a small sorted buffer of the largest holders that is rebuilt by a full scan only when
 * fewer than ten of its members are provably above every holder outside it.
 */
import * as Fixed from "../Fixed.js"
import * as Wide from "./Wide.js"

export type WalletFlag = "sniper" | "insider" | "bundler" | "freshWallet" | "proTrader" | "partner" | "phishing"

/** What the engine knows about the trading wallet at the time of a swap. */
export interface BuyContext {
  readonly block: number
  readonly timestamp: number
  /** When the wallet's first inbound funding happened, if known. */
  readonly walletFundedAt: number | null
  /** The wallet's funder is a known exchange. */
  readonly fundedByCex: boolean
  /** Trading terminal the swap routed through. */
  readonly terminal: string | null
  /** The wallet is currently labelled malicious. */
  readonly phishing: boolean
}

/** The spec's `holders` object (field for field the Type of the wire schema `Holders`). */
export interface HoldersValue {
  readonly count: number
  readonly top10Pct: string
  readonly devPct: string
  readonly sniperPct: string
  readonly sniperCount: number
  readonly bundlerPct: string
  readonly bundlerCount: number
  readonly insiderPct: string
  readonly insiderCount: number
  readonly freshWalletPct: string
  readonly freshWalletCount: number
  readonly proTraderPct: string
  readonly proTraderCount: number
  readonly partnerPct: string
  readonly partnerCount: number
  readonly phishingPct: string
  readonly phishingCount: number
  readonly fundedByCexPct: string
}

export interface HolderBookOptions {
  /** Size of the sorted buffer of largest holders (at least 10); larger means rarer rescans. */
  readonly topBufferSize?: number
}

/** "Funded less than seven days before it traded". */
export const FRESH_WALLET_WINDOW_MS = 7 * 24 * 60 * 60 * 1000
/** A buy with `block − firstPoolBlock` in [0, SNIPER_BLOCKS) is a sniper's; likewise for insiders. */
export const SNIPER_BLOCKS = 2
export const INSIDER_BLOCKS = 3
/** The wallet making this buy (counted from 1) or a later one in one block is a bundler. */
export const BUNDLER_BUY_ORDINAL = 4
/** Blocks whose buy counts a book keeps for late buys (trades normally arrive in block order). */
export const BUY_BLOCKS_KEPT = 8
export const DEFAULT_TOP_BUFFER_SIZE = 32

// Group bits: bit i is group i, in the order of `groupFlags` (also the order flags are listed in).
const SNIPER = 1 << 0
const INSIDER = 1 << 1
const BUNDLER = 1 << 2
const FRESH = 1 << 3
const PRO_TRADER = 1 << 4
const PARTNER = 1 << 5
/** Currently labelled malicious (the phishing share); can be cleared. */
const PHISHING = 1 << 6
const GROUP_MASK = (1 << 7) - 1
const GROUPS = 7
// Wallet facts that are not groups.
const FUNDED_BY_CEX = 1 << 7
/** Was ever fresh: freshWalletCount counts this bit, because FRESH can be re-evaluated away. */
const EVER_FRESH = 1 << 8
/** Traded while labelled malicious: phishingCount counts this bit. */
const TRADED_WHILE_PHISHING = 1 << 9
/** isExcludedFromTop10 answered true (cached; refreshed by `onExclusionChanged`). */
const EXCLUDED = 1 << 10
/** Member of the top buffer. */
const IN_TOP = 1 << 11
/** Has traded this token (firstTradeAt is set). */
const TRADED = 1 << 12

const groupFlags: ReadonlyArray<WalletFlag> = [
  "sniper",
  "insider",
  "bundler",
  "freshWallet",
  "proTrader",
  "partner",
  "phishing"
]
/** The bit whose first setting makes group i's `...Count` grow; the group bit itself when permanent. */
const countedBit: ReadonlyArray<number> = [
  SNIPER,
  INSIDER,
  BUNDLER,
  EVER_FRESH,
  PRO_TRADER,
  PARTNER,
  TRADED_WHILE_PHISHING
]
const COUNTED_MASK = SNIPER | INSIDER | BUNDLER | EVER_FRESH | PRO_TRADER | PARTNER | TRADED_WHILE_PHISHING

/** One frozen flag list per group bitmask, shared by every book: `recordTrade` allocates no array. */
const flagListCache: Array<ReadonlyArray<WalletFlag> | undefined> = new Array(GROUP_MASK + 1)
export const flagListOf = (groupBits: number): ReadonlyArray<WalletFlag> => {
  let list = flagListCache[groupBits]
  if (list === undefined) {
    const built: Array<WalletFlag> = []
    for (let g = 0; g < GROUPS; g++) if ((groupBits & (1 << g)) !== 0) built.push(groupFlags[g]!)
    list = Object.freeze(built)
    flagListCache[groupBits] = list
  }
  return list
}

/**
 * Which addresses never count as holders. An object rather than a callback, so that a book holds
 * plain data and references only (engine snapshots serialize it).
 */
export interface TopExclusions {
  isExcludedFromTop10(address: string): boolean
}

const INITIAL_CAPACITY = 16
const L = Wide.LIMBS
/** Doubles per wallet slot: balance (L limbs), flags, first trade time. */
const S = L + 2
const FLAGS_AT = L
const FIRST_TRADE_AT = L + 1
/** Where `outsiderBound` sits in `sums`. */
const BOUND = GROUPS * L
const NO_TRADE = Number.NaN

export class HolderBook {
  private supply: bigint
  private readonly creator: string
  /**
   * The block of the token's first pool (snipers and insiders count from it): given at launch when
   * the launch made the pool (a launchpad's bonding curve), else the earliest block a pool was seen
   * in (`poolSeenAt`: a pool's liquidity event with its block, every trade); NaN until then.
   */
  private firstPoolBlock: number
  private readonly firstPoolAtLaunch: boolean
  /** Answers which addresses never count as holders (the token: burn sinks, its pools, itself). */
  private readonly exclusions: TopExclusions

  // Struct-of-arrays wallet slots; `slotOf` maps an address to its index.
  private readonly slotOf = new Map<string, number>()
  /** Balances in base units, a wide integer per slot (Wide.ts): they change on every trade. */
  /**
   * Per wallet slot, S doubles: the balance in base units as a wide integer (Wide.ts: it changes on
   * every trade), the flag bits, and the time of the wallet's first trade here (NO_TRADE: none).
   */
  private walletData = new Float64Array(INITIAL_CAPACITY * S)
  private slotCount = 0
  private addressBytes = 0
  /** The last wallet looked up and its slot: a swap asks for the same wallet two or three times. */
  private lastWallet: string | undefined = undefined
  private lastSlot = 0

  /** Non-excluded wallets with a positive balance, and those of them funded by an exchange. */
  private holders = 0
  private cexHolders = 0

  /** Each group's balance sum, a wide integer per group, then `outsiderBound` (see `top`). */
  private readonly sums = new Float64Array((GROUPS + 1) * L)
  private readonly groupCount: Array<number> = [0, 0, 0, 0, 0, 0, 0]

  /**
   * Buys per block for the last `BUY_BLOCKS_KEPT` blocks that had a buy, as pairs (block, buys),
   * most recent last: a late buy (its block older than the newest) still counts in its own block.
   */
  private readonly buyBlocks: Array<number> = []

  /**
   * The largest non-excluded holders, sorted by balance descending. Every holder outside the buffer
   * has a balance ≤ `outsiderBound`, so the first ten members are the true top ten while the tenth
   * is ≥ the bound (or the buffer holds every holder).
   */
  private readonly top: Int32Array
  private topLength = 0
  private rescans = 0

  constructor(
    supply: bigint,
    creator: string,
    /** The first pool's block when the launch made it (a bonding curve), else null: learned from `poolSeenAt`. */
    poolBlockAtLaunch: number | null,
    exclusions: TopExclusions,
    options?: HolderBookOptions
  ) {
    this.supply = supply
    this.creator = creator
    this.firstPoolAtLaunch = poolBlockAtLaunch !== null
    this.firstPoolBlock = poolBlockAtLaunch ?? Number.NaN
    this.exclusions = exclusions
    this.top = new Int32Array(Math.max(10, options?.topBufferSize ?? DEFAULT_TOP_BUFFER_SIZE))
  }

  /**
   * A pool of the token exists at `block` (its liquidity changed then, or a trade went through it):
   * the first pool's block is the earliest such, unless the launch made the pool.
   */
  poolSeenAt(block: number): void {
    if (!this.firstPoolAtLaunch && !(block >= this.firstPoolBlock)) this.firstPoolBlock = block
  }

  /**
   * Called for every swap BEFORE the balance change; assigns flags for this token and returns the
   * wallet's flags after it (a shared frozen list: no allocation per call).
   */
  recordTrade(wallet: string, side: "buy" | "sell", ctx: BuyContext): ReadonlyArray<WalletFlag> {
    const slot = this.slotFor(wallet)
    const before = this.walletData[slot * S + FLAGS_AT]
    let after = before
    // The first trade is the earliest one, whatever order trades arrive in (a late trade can be it).
    if ((after & TRADED) === 0 || ctx.timestamp < this.walletData[slot * S + FIRST_TRADE_AT]!) {
      after |= TRADED
      this.walletData[slot * S + FIRST_TRADE_AT] = ctx.timestamp
    }
    this.poolSeenAt(ctx.block)
    if (side === "buy") {
      const sincePool = ctx.block - this.firstPoolBlock
      if (sincePool >= 0 && sincePool < INSIDER_BLOCKS) {
        after |= sincePool < SNIPER_BLOCKS ? SNIPER | INSIDER : INSIDER
      }
      if (this.countBuyIn(ctx.block) >= BUNDLER_BUY_ORDINAL) after |= BUNDLER
    }
    if (ctx.terminal !== null) after |= ctx.terminal === "partner" ? PRO_TRADER | PARTNER : PRO_TRADER
    // An unresolved funding (null) keeps what an earlier trade or `onWalletFunded` established.
    if (ctx.walletFundedAt !== null) after = this.withFreshness(after, slot, ctx.walletFundedAt)
    if (ctx.fundedByCex) after |= FUNDED_BY_CEX
    after = ctx.phishing ? after | PHISHING | TRADED_WHILE_PHISHING : after & ~PHISHING
    if (after !== before) this.changeFlags(slot, before, after)
    return flagListOf(after & GROUP_MASK)
  }

  /** Counts a buy in `block`; the buys in that block so far, this one included. */
  private countBuyIn(block: number): number {
    const blocks = this.buyBlocks
    // Most buys are in the newest block; a late one looks further back.
    for (let i = blocks.length - 2; i >= 0; i -= 2) {
      if (blocks[i] === block) return ++blocks[i + 1]!
    }
    if (blocks.length >= BUY_BLOCKS_KEPT * 2) {
      // the oldest pair leaves (in place: no array per new block)
      blocks.copyWithin(0, 2)
      blocks.length -= 2
    }
    blocks.push(block, 1)
    return 1
  }

  /**
   * What the engine knows of a wallet about to receive tokens without a trade (a transfer in): an
   * exchange funding and a phishing label already known count toward `fundedByCexPct` and
   * `phishingPct` from its first token, as they would have had it traded. Call before `credit`.
   */
  learnWallet(wallet: string, fundedByCex: boolean, phishing: boolean): void {
    const slot = this.slotFor(wallet)
    const before = this.walletData[slot * S + FLAGS_AT]!
    let after = fundedByCex ? before | FUNDED_BY_CEX : before & ~FUNDED_BY_CEX
    after = phishing ? after | PHISHING : after & ~PHISHING
    if (after !== before) this.changeFlags(slot, before, after)
  }

  /** Balance up (buy, transfer in, mint). */
  credit(wallet: string, amount: bigint): void {
    if (amount <= 0n) return
    const slot = this.slotFor(wallet)
    const wasEmpty = Wide.isZero(this.walletData, slot * S)
    Wide.add(this.walletData, slot * S, amount)
    const f = this.walletData[slot * S + FLAGS_AT]
    if ((f & GROUP_MASK) !== 0) this.addToGroups(f, amount)
    if ((f & EXCLUDED) !== 0) return
    if (wasEmpty) {
      this.holders++
      if ((f & FUNDED_BY_CEX) !== 0) this.cexHolders++
    }
    if ((f & IN_TOP) !== 0) this.moveUp(this.topIndexOf(slot))
    else this.offerToTop(slot)
  }

  /** Balance down (sell, transfer out, burn); never below zero (a larger debit empties the wallet). */
  debit(wallet: string, amount: bigint): void {
    if (amount <= 0n) return
    const slot = this.slotIfAny(wallet)
    if (slot === undefined) return
    const balances = this.walletData
    if (Wide.isZero(balances, slot * S)) return
    const before = Wide.read(balances, slot * S)
    const taken = amount < before ? amount : before
    if (taken === before) Wide.clear(balances, slot * S)
    else Wide.subtract(balances, slot * S, taken)
    const emptied = taken === before
    const f = this.walletData[slot * S + FLAGS_AT]
    if ((f & GROUP_MASK) !== 0) this.addToGroups(f, -taken)
    if ((f & EXCLUDED) !== 0) return
    if (emptied) {
      this.holders--
      if ((f & FUNDED_BY_CEX) !== 0) this.cexHolders--
    }
    // An outsider that shrinks stays below the bound; only members need repositioning.
    if ((f & IN_TOP) !== 0) {
      const index = this.topIndexOf(slot)
      if (emptied) this.removeFromTop(index)
      else this.moveDown(index)
    }
  }

  /** Mint/burn changes total supply. */
  setSupply(supply: bigint): void {
    this.supply = supply
  }

  /**
   * Funding resolved after the wallet traded: re-evaluates freshWallet (first trade on this token −
   * fundedAt < 7 days; a null fundedAt clears it) and funded-by-exchange. True if anything changed.
   */
  onWalletFunded(wallet: string, fundedAt: number | null, fundedByCex: boolean): boolean {
    const slot = this.slotOf.get(wallet)
    if (slot === undefined) return false
    const before = this.walletData[slot * S + FLAGS_AT]
    let after = fundedByCex ? before | FUNDED_BY_CEX : before & ~FUNDED_BY_CEX
    if ((after & TRADED) !== 0) {
      after = fundedAt === null ? after & ~FRESH : this.withFreshness(after, slot, fundedAt)
    }
    if (after === before) return false
    this.changeFlags(slot, before, after)
    return true
  }

  /** Phishing label set/cleared for a wallet known to this book. True if anything changed. */
  onPhishingLabel(wallet: string, active: boolean): boolean {
    const slot = this.slotOf.get(wallet)
    if (slot === undefined) return false
    const before = this.walletData[slot * S + FLAGS_AT]
    const after = active ? before | PHISHING : before & ~PHISHING
    if (after === before) return false
    this.changeFlags(slot, before, after)
    return true
  }

  /**
   * `isExcludedFromTop10` may now answer differently for `address` (a pool learned after it already
   * held tokens): re-asks it and moves the wallet into or out of the holder count and the top ten.
   */
  onExclusionChanged(address: string): boolean {
    const slot = this.slotOf.get(address)
    if (slot === undefined) return false
    const f = this.walletData[slot * S + FLAGS_AT]
    const excluded = this.exclusions.isExcludedFromTop10(address)
    if (excluded === ((f & EXCLUDED) !== 0)) return false
    const holds = !Wide.isZero(this.walletData, slot * S)
    if (excluded) {
      this.walletData[slot * S + FLAGS_AT] = f | EXCLUDED
      if (holds) {
        this.holders--
        if ((f & FUNDED_BY_CEX) !== 0) this.cexHolders--
        if ((f & IN_TOP) !== 0) this.removeFromTop(this.topIndexOf(slot))
      }
    } else {
      this.walletData[slot * S + FLAGS_AT] = f & ~EXCLUDED
      if (holds) {
        this.holders++
        if ((f & FUNDED_BY_CEX) !== 0) this.cexHolders++
        this.offerToTop(slot)
      }
    }
    return true
  }

  flagsOf(wallet: string): ReadonlyArray<WalletFlag> {
    const slot = this.slotOf.get(wallet)
    return flagListOf(slot === undefined ? 0 : this.walletData[slot * S + FLAGS_AT] & GROUP_MASK)
  }

  balanceOf(wallet: string): bigint {
    const slot = this.slotOf.get(wallet)
    return slot === undefined ? 0n : Wide.read(this.walletData, slot * S)
  }

  /** Wallets with a positive balance, not counting excluded addresses (pools, curve, burn). */
  holderCount(): number {
    return this.holders
  }

  /** Whether `wallet` is funded by a known exchange, as far as this book knows. */
  isFundedByCex(wallet: string): boolean {
    const slot = this.slotOf.get(wallet)
    return slot !== undefined && (this.walletData[slot * S + FLAGS_AT] & FUNDED_BY_CEX) !== 0
  }

  toWire(): HoldersValue {
    const supply = this.supply
    const share = (balance: bigint): string => Fixed.format(Fixed.pct(balance, supply))
    const groups = this.sums
    const g = (group: number): bigint => Wide.read(groups, group * L)
    const n = this.groupCount
    return {
      count: this.holders,
      top10Pct: Fixed.format(this.top10Pct()),
      devPct: Fixed.format(this.devPct()),
      sniperPct: share(g(0)),
      sniperCount: n[0]!,
      bundlerPct: share(g(2)),
      bundlerCount: n[2]!,
      insiderPct: share(g(1)),
      insiderCount: n[1]!,
      freshWalletPct: share(g(3)),
      freshWalletCount: n[3]!,
      proTraderPct: share(g(4)),
      proTraderCount: n[4]!,
      partnerPct: share(g(5)),
      partnerCount: n[5]!,
      phishingPct: share(g(6)),
      phishingCount: n[6]!,
      fundedByCexPct: Fixed.format(Fixed.pct(BigInt(this.cexHolders), BigInt(this.holders)))
    }
  }

  devPct(): Fixed.Fixed {
    return Fixed.pct(this.balanceOf(this.creator), this.supply)
  }

  snipersPct(): Fixed.Fixed {
    return Fixed.pct(Wide.read(this.sums, 0), this.supply)
  }

  /** Not clamped: reads above 100 when balances outgrow a drifted supply. */
  top10Pct(): Fixed.Fixed {
    this.ensureTopTen()
    const top = this.top
    const end = this.topLength < 10 ? this.topLength : 10
    let sum = 0n
    for (let i = 0; i < end; i++) sum += Wide.read(this.walletData, top[i]! * S)
    return Fixed.pct(sum, this.supply)
  }

  /** How many times the top buffer was rebuilt by a full scan (for benchmarks and tests). */
  top10Rescans(): number {
    return this.rescans
  }

  /**
   * Approximate retained bytes. Per wallet: a Map entry (~28 B) and the address string (16 B + its
   * characters); per slot of capacity: 2 B of flags, 8 B of first-trade time and the balance's
   * wide integer (24 B).
   */
  heapBytes(): number {
    const perWallet = 28
    return 512 + this.slotCount * perWallet + this.addressBytes + (this.walletData.length / S) * 8 * S + this.top.length * 4
  }


  /**
   * The wallet's slot, if it has one (slots are never removed, so the memo never goes stale). The
   * token's positions use the same numbering (PositionBook).
   */
  slotIfAny(wallet: string): number | undefined {
    if (wallet === this.lastWallet) return this.lastSlot
    const slot = this.slotOf.get(wallet)
    if (slot !== undefined) {
      this.lastWallet = wallet
      this.lastSlot = slot
    }
    return slot
  }

  /** The wallet's slot, given one now if it had none. */
  slotFor(wallet: string): number {
    const existing = this.slotIfAny(wallet)
    if (existing !== undefined) return existing
    const slot = this.slotCount++
    if (slot * S === this.walletData.length) this.grow()
    this.slotOf.set(wallet, slot)
    if (this.exclusions.isExcludedFromTop10(wallet)) this.walletData[slot * S + FLAGS_AT] = EXCLUDED
    this.walletData[slot * S + FIRST_TRADE_AT] = NO_TRADE
    this.addressBytes += 16 + ((wallet.length + 7) & ~7)
    return slot
  }

  private grow(): void {
    const data = new Float64Array(this.walletData.length * 2)
    data.set(this.walletData)
    this.walletData = data
  }

  private withFreshness(flags: number, slot: number, fundedAt: number): number {
    return this.walletData[slot * S + FIRST_TRADE_AT] - fundedAt < FRESH_WALLET_WINDOW_MS ? flags | FRESH | EVER_FRESH : flags & ~FRESH
  }

  /**
   * Applies a flag change: group sums for groups entered or left, counts for bits set for the first
   * time, and the exchange-funded holder count.
   */
  private changeFlags(slot: number, before: number, after: number): void {
    this.walletData[slot * S + FLAGS_AT] = after
    const holds = !Wide.isZero(this.walletData, slot * S)
    const groupChange = (before ^ after) & GROUP_MASK
    if (groupChange !== 0 && holds) {
      const balance = Wide.read(this.walletData, slot * S)
      for (let g = 0; g < GROUPS; g++) {
        const bit = 1 << g
        if ((groupChange & bit) === 0) continue
        if ((after & bit) !== 0) Wide.add(this.sums, g * L, balance)
        else Wide.subtract(this.sums, g * L, balance)
      }
    }
    const firstSet = after & ~before & COUNTED_MASK
    if (firstSet !== 0) {
      for (let g = 0; g < GROUPS; g++) if ((firstSet & countedBit[g]!) !== 0) this.groupCount[g]!++
    }
    if (((before ^ after) & FUNDED_BY_CEX) !== 0 && holds && (after & EXCLUDED) === 0) {
      this.cexHolders += (after & FUNDED_BY_CEX) !== 0 ? 1 : -1
    }
  }

  private addToGroups(flags: number, delta: bigint): void {
    const sums = this.sums
    for (let g = 0; g < GROUPS; g++) if ((flags & (1 << g)) !== 0) Wide.add(sums, g * L, delta)
  }

  private topIndexOf(slot: number): number {
    const top = this.top
    for (let i = 0; i < this.topLength; i++) if (top[i] === slot) return i
    return -1 // unreachable while IN_TOP is kept in step with the buffer
  }

  /** A non-member's balance grew (or it became eligible): admit it, evicting the smallest, or raise the bound. */
  private offerToTop(slot: number): void {
    const top = this.top
    const balances = this.walletData
    let index: number
    if (this.topLength < top.length) {
      index = this.topLength++
    } else {
      const smallest = top[top.length - 1]!
      if (Wide.compare(balances, slot * S, smallest * S) <= 0) {
        this.raiseOutsiderBound(slot)
        return
      }
      this.walletData[smallest * S + FLAGS_AT] = this.walletData[smallest * S + FLAGS_AT] & ~IN_TOP
      this.raiseOutsiderBound(smallest)
      index = top.length - 1
    }
    this.walletData[slot * S + FLAGS_AT] = this.walletData[slot * S + FLAGS_AT] | IN_TOP
    top[index] = slot
    this.moveUp(index)
  }

  /** The bound becomes `slot`'s balance if that is larger. */
  private raiseOutsiderBound(slot: number): void {
    const balances = this.walletData
    const bound = this.sums
    const at = slot * S
    if (Wide.compareAcross(balances, at, bound, BOUND) > 0) {
      bound[BOUND] = balances[at]!
      bound[BOUND + 1] = balances[at + 1]!
      bound[BOUND + 2] = balances[at + 2]!
    }
  }

  private moveUp(index: number): void {
    const top = this.top
    const balances = this.walletData
    const slot = top[index]!
    let i = index
    while (i > 0 && Wide.compare(balances, top[i - 1]! * S, slot * S) < 0) {
      top[i] = top[i - 1]!
      i--
    }
    top[i] = slot
  }

  private moveDown(index: number): void {
    const top = this.top
    const balances = this.walletData
    const slot = top[index]!
    const last = this.topLength - 1
    let i = index
    while (i < last && Wide.compare(balances, top[i + 1]! * S, slot * S) > 0) {
      top[i] = top[i + 1]!
      i++
    }
    top[i] = slot
  }

  private removeFromTop(index: number): void {
    const top = this.top
    const removed = top[index]! * S + FLAGS_AT
    this.walletData[removed] = this.walletData[removed]! & ~IN_TOP
    top.copyWithin(index, index + 1, this.topLength)
    this.topLength--
  }

  /** Rebuilds the buffer by a full scan when its first ten are no longer provably the top ten. */
  private ensureTopTen(): void {
    if (this.topLength === this.holders) return
    if (this.topLength >= 10 && Wide.compareAcross(this.walletData, this.top[9]! * S, this.sums, BOUND) >= 0) return
    this.rescans++
    this.topLength = 0
    Wide.clear(this.sums, BOUND)
    const data = this.walletData
    for (let slot = 0; slot < this.slotCount; slot++) data[slot * S + FLAGS_AT] = data[slot * S + FLAGS_AT]! & ~IN_TOP
    for (let slot = 0; slot < this.slotCount; slot++) {
      if ((data[slot * S + FLAGS_AT]! & EXCLUDED) !== 0) continue
      if (!Wide.isZero(data, slot * S)) this.offerToTop(slot)
    }
  }
}
