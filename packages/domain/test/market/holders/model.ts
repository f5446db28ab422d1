/**
 * A brute-force reference for the holder book: it keeps the whole operation log and recomputes
 * every answer from it with the spec's definitions, sharing no code with the book.
 */
import { Arbitrary, Schema } from "effect"
import * as Fixed from "../../../src/Fixed.js"
import type { BuyContext, HolderBook, HoldersValue, WalletFlag } from "../../../src/market/Holders.js"

export const LAUNCH_BLOCK = 100
export const DAY = 24 * 60 * 60 * 1000
export const CREATOR = "w0"
export const wallets: ReadonlyArray<string> = Array.from({ length: 24 }, (_, i) => `w${i}`)
export const initiallyExcluded: ReadonlyArray<string> = ["pool", "burn"]
export const everyAddress: ReadonlyArray<string> = [...wallets, ...initiallyExcluded]

export type Op =
  | {
      readonly kind: "trade"
      readonly wallet: string
      readonly side: "buy" | "sell"
      readonly blockStep: number
      readonly amount: bigint
      readonly ctx: Omit<BuyContext, "block" | "timestamp" | "walletFundedAt"> & {
        readonly fundedAgoDays: number | null
      }
    }
  | { readonly kind: "transfer"; readonly from: string | null; readonly to: string | null; readonly amount: bigint }
  | { readonly kind: "supply"; readonly supply: bigint }
  | { readonly kind: "funded"; readonly wallet: string; readonly fundedAgoDays: number | null; readonly cex: boolean }
  | { readonly kind: "label"; readonly wallet: string; readonly active: boolean }
  | { readonly kind: "exclusion"; readonly wallet: string }

const int = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))
const pick = <A>(choices: ReadonlyArray<A>, roll: number): A => choices[roll % choices.length]!

/** Amounts from a small set half the time, so ties among the largest holders are common. */
const smallAmounts: ReadonlyArray<bigint> = [1n, 5n, 10n, 50n, 100n, 500n]
const amountOf = (roll: number): bigint => (roll % 2 === 0 ? pick(smallAmounts, roll >> 1) : BigInt(1 + (roll % 2_000)))
/** Mostly ordinary wallets (spread even when rolls are small); sometimes the pool or burn address. */
const addressOf = (roll: number): string =>
  roll % 16 === 15 ? pick(initiallyExcluded, roll >> 4) : pick(wallets, roll)
const fundedAgoDaysOf = (roll: number): number | null => pick([null, 0, 1, 6, 7, 8, 30, -1], roll)

/**
 * One op decoded from integer genes (shrinking shrinks the genes): the first picks the kind with
 * weights trade 8, transfer 4, funding 2, label 2, supply 1, exclusion 1.
 */
export const decodeOp = (g: ReadonlyArray<number>): Op => {
  const kind = g[0]! % 18
  if (kind < 8) {
    const side = pick(["buy", "buy", "sell"] as const, g[2]!)
    return {
      kind: "trade",
      wallet: addressOf(g[1]!),
      side,
      blockStep: pick([0, 0, 0, 1, 1, 2], g[3]!),
      // Sells mostly partial, so top holders shrink below outsiders without leaving.
      amount: side === "sell" ? pick(smallAmounts, g[4]!) : amountOf(g[4]!),
      ctx: {
        fundedAgoDays: fundedAgoDaysOf(g[5]!),
        fundedByCex: g[6]! % 2 === 0,
        terminal: pick([null, null, "partner", "axiom"], g[7]!),
        phishing: g[8]! % 4 === 0
      }
    }
  }
  if (kind < 12) {
    return {
      kind: "transfer",
      from: g[2]! % 6 === 0 ? null : addressOf(g[1]!),
      to: g[3]! % 6 === 0 ? null : addressOf(g[5]!),
      amount: amountOf(g[4]!)
    }
  }
  if (kind < 14) {
    return { kind: "funded", wallet: addressOf(g[1]!), fundedAgoDays: fundedAgoDaysOf(g[5]!), cex: g[6]! % 2 === 0 }
  }
  if (kind < 16) return { kind: "label", wallet: addressOf(g[1]!), active: g[8]! % 2 === 0 }
  if (kind < 17) return { kind: "supply", supply: BigInt(g[4]!) * 10n }
  return { kind: "exclusion", wallet: addressOf(g[1]!) }
}

const genes = Arbitrary.all([
  int(0, 1_000),
  int(0, 10_000),
  int(0, 1_000),
  int(0, 1_000),
  int(0, 10_000),
  int(0, 1_000),
  int(0, 1_000),
  int(0, 1_000),
  int(0, 1_000)
])
export const opsArbitrary: Arbitrary.Arbitrary<Array<Op>> = Arbitrary.map(
  Arbitrary.array(genes, { minLength: 40, maxLength: 120 }),
  (all) => all.map(decodeOp)
)
export const supplyArbitrary = Arbitrary.map(int(0, 4_000), (n) => BigInt(n) * 10n)

/** What each op looked like when applied, with blocks and times resolved. */
export type Applied =
  | {
      readonly kind: "trade"
      readonly wallet: string
      readonly side: "buy" | "sell"
      readonly ctx: BuyContext
      readonly amount: bigint
    }
  | { readonly kind: "credit" | "debit"; readonly wallet: string; readonly amount: bigint }
  | { readonly kind: "supply"; readonly supply: bigint }
  | { readonly kind: "funded"; readonly wallet: string; readonly fundedAt: number | null; readonly cex: boolean }
  | { readonly kind: "label"; readonly wallet: string; readonly active: boolean }
  | { readonly kind: "exclusion"; readonly wallet: string; readonly excluded: boolean }

const flagOrder: ReadonlyArray<WalletFlag> = [
  "sniper",
  "insider",
  "bundler",
  "freshWallet",
  "proTrader",
  "partner",
  "phishing"
]

/** The reference: holds the log and answers by recomputation. */
export class Reference {
  readonly log: Array<Applied> = []
  supply: bigint
  readonly excluded = new Set<string>(initiallyExcluded)
  /** Union over every step of the wallets that were fresh at that step. */
  readonly everFresh = new Set<string>()

  /**
   * `poolAtLaunch`: the launch made the first pool (a bonding curve) at LAUNCH_BLOCK; otherwise the
   * first pool's block is the earliest block of the trades so far (each trade's own included).
   */
  constructor(supply: bigint, readonly poolAtLaunch = true) {
    this.supply = supply
  }

  known(wallet: string, upTo: number = this.log.length): boolean {
    for (let i = 0; i < upTo; i++) {
      const a = this.log[i]!
      if ((a.kind === "trade" || a.kind === "credit") && a.wallet === wallet) return true
    }
    return false
  }

  balance(wallet: string): bigint {
    let b = 0n
    for (const a of this.log) {
      if (a.kind === "credit" && a.wallet === wallet) b += a.amount
      if (a.kind === "debit" && a.wallet === wallet) b = a.amount > b ? 0n : b - a.amount
    }
    return b
  }

  flags(wallet: string): Set<WalletFlag> {
    const out = new Set<WalletFlag>()
    let firstTrade: number | null = null
    let fundedAt: number | null = null
    let fundingKnown = false
    let phishing = false
    const buysPerBlock = new Map<number, number>()
    let firstPool = this.poolAtLaunch ? LAUNCH_BLOCK : Infinity
    for (let i = 0; i < this.log.length; i++) {
      const a = this.log[i]!
      if (a.kind === "trade") {
        if (!this.poolAtLaunch) firstPool = Math.min(firstPool, a.ctx.block)
        if (a.side === "buy") {
          const nth = (buysPerBlock.get(a.ctx.block) ?? 0) + 1
          buysPerBlock.set(a.ctx.block, nth)
          if (a.wallet === wallet) {
            const d = a.ctx.block - firstPool
            if (d >= 0 && d <= 1) out.add("sniper")
            if (d >= 0 && d <= 2) out.add("insider")
            if (nth >= 4) out.add("bundler")
          }
        }
        if (a.wallet !== wallet) continue
        if (firstTrade === null) firstTrade = a.ctx.timestamp
        if (a.ctx.terminal !== null) out.add("proTrader")
        if (a.ctx.terminal === "partner") out.add("partner")
        if (a.ctx.walletFundedAt !== null) {
          fundedAt = a.ctx.walletFundedAt
          fundingKnown = true
        }
        phishing = a.ctx.phishing
      } else if (a.kind === "funded" && a.wallet === wallet && firstTrade !== null) {
        fundedAt = a.fundedAt
        fundingKnown = true
      } else if (a.kind === "label" && a.wallet === wallet && this.known(wallet, i)) {
        phishing = a.active
      }
    }
    const fresh = firstTrade !== null && fundingKnown && fundedAt !== null && firstTrade - fundedAt < 7 * DAY
    if (fresh) out.add("freshWallet")
    if (phishing) out.add("phishing")
    return out
  }

  fundedByCex(wallet: string): boolean {
    let cex = false
    for (let i = 0; i < this.log.length; i++) {
      const a = this.log[i]!
      if (a.kind === "trade" && a.wallet === wallet && a.ctx.fundedByCex) cex = true
      if (a.kind === "funded" && a.wallet === wallet && this.known(wallet, i)) cex = a.cex
    }
    return cex
  }

  tradedWhilePhishing(wallet: string): boolean {
    return this.log.some((a) => a.kind === "trade" && a.wallet === wallet && a.ctx.phishing)
  }

  /** Recomputes every wallet's balance, flags and exchange funding from the log. */
  snapshot(): Snapshot {
    const balance = new Map<string, bigint>()
    const flags = new Map<string, Set<WalletFlag>>()
    const cex = new Map<string, boolean>()
    for (const w of everyAddress) {
      balance.set(w, this.balance(w))
      flags.set(w, this.flags(w))
      cex.set(w, this.fundedByCex(w))
    }
    return { balance, flags, cex }
  }

  /** Call after each applied op: the "ever fresh" set is a union over steps. */
  noteStep(snapshot: Snapshot): void {
    for (const w of everyAddress) if (snapshot.flags.get(w)!.has("freshWallet")) this.everFresh.add(w)
  }

  holders(s: Snapshot): Array<string> {
    return everyAddress.filter((w) => !this.excluded.has(w) && s.balance.get(w)! > 0n)
  }

  top10Sum(s: Snapshot): bigint {
    const sorted = this.holders(s)
      .map((w) => s.balance.get(w)!)
      .sort((a, b) => (a > b ? -1 : a < b ? 1 : 0))
    return sorted.slice(0, 10).reduce((sum, b) => sum + b, 0n)
  }

  groupShare(s: Snapshot, flag: WalletFlag): string {
    let sum = 0n
    for (const w of everyAddress) if (s.flags.get(w)!.has(flag)) sum += s.balance.get(w)!
    return Fixed.format(Fixed.pct(sum, this.supply))
  }

  groupCount(s: Snapshot, flag: WalletFlag): number {
    if (flag === "freshWallet") return this.everFresh.size
    if (flag === "phishing") return everyAddress.filter((w) => this.tradedWhilePhishing(w)).length
    return everyAddress.filter((w) => s.flags.get(w)!.has(flag)).length
  }

  expected(s: Snapshot): HoldersValue {
    const holders = this.holders(s)
    const cex = holders.filter((w) => s.cex.get(w)!).length
    const share = (f: WalletFlag) => this.groupShare(s, f)
    const count = (f: WalletFlag) => this.groupCount(s, f)
    return {
      count: holders.length,
      top10Pct: Fixed.format(Fixed.pct(this.top10Sum(s), this.supply)),
      devPct: Fixed.format(Fixed.pct(s.balance.get(CREATOR)!, this.supply)),
      sniperPct: share("sniper"),
      sniperCount: count("sniper"),
      bundlerPct: share("bundler"),
      bundlerCount: count("bundler"),
      insiderPct: share("insider"),
      insiderCount: count("insider"),
      freshWalletPct: share("freshWallet"),
      freshWalletCount: count("freshWallet"),
      proTraderPct: share("proTrader"),
      proTraderCount: count("proTrader"),
      partnerPct: share("partner"),
      partnerCount: count("partner"),
      phishingPct: share("phishing"),
      phishingCount: count("phishing"),
      fundedByCexPct: Fixed.format(Fixed.pct(BigInt(cex), BigInt(holders.length)))
    }
  }

  static listed(set: Set<WalletFlag>): Array<WalletFlag> {
    return flagOrder.filter((f) => set.has(f))
  }
}

export interface Snapshot {
  readonly balance: ReadonlyMap<string, bigint>
  readonly flags: ReadonlyMap<string, Set<WalletFlag>>
  readonly cex: ReadonlyMap<string, boolean>
}

/** Drives a book and the reference through one op; returns the flags `recordTrade` answered, if it was a trade. */
export class Driver {
  block = LAUNCH_BLOCK
  time = 1_700_000_000_000

  constructor(readonly book: HolderBook, readonly ref: Reference) {}

  /** Applies `op` to both; returns the reference's recomputation after it and what `recordTrade` answered. */
  apply(op: Op): { readonly snapshot: Snapshot; readonly answered: ReadonlyArray<WalletFlag> | undefined } {
    const { book, ref } = this
    let answered: ReadonlyArray<WalletFlag> | undefined
    switch (op.kind) {
      case "trade": {
        this.block += op.blockStep
        this.time += 400
        const ctx: BuyContext = {
          block: this.block,
          timestamp: this.time,
          walletFundedAt: op.ctx.fundedAgoDays === null ? null : this.time - op.ctx.fundedAgoDays * DAY,
          fundedByCex: op.ctx.fundedByCex,
          terminal: op.ctx.terminal,
          phishing: op.ctx.phishing
        }
        answered = book.recordTrade(op.wallet, op.side, ctx)
        ref.log.push({ kind: "trade", wallet: op.wallet, side: op.side, ctx, amount: op.amount })
        if (op.side === "buy") {
          book.credit(op.wallet, op.amount)
          ref.log.push({ kind: "credit", wallet: op.wallet, amount: op.amount })
        } else {
          book.debit(op.wallet, op.amount)
          ref.log.push({ kind: "debit", wallet: op.wallet, amount: op.amount })
        }
        break
      }
      case "transfer": {
        if (op.from !== null) {
          book.debit(op.from, op.amount)
          ref.log.push({ kind: "debit", wallet: op.from, amount: op.amount })
        }
        if (op.to !== null) {
          book.credit(op.to, op.amount)
          ref.log.push({ kind: "credit", wallet: op.to, amount: op.amount })
        }
        break
      }
      case "supply":
        book.setSupply(op.supply)
        ref.supply = op.supply
        ref.log.push({ kind: "supply", supply: op.supply })
        break
      case "funded": {
        const fundedAt = op.fundedAgoDays === null ? null : this.time - op.fundedAgoDays * DAY
        book.onWalletFunded(op.wallet, fundedAt, op.cex)
        ref.log.push({ kind: "funded", wallet: op.wallet, fundedAt, cex: op.cex })
        break
      }
      case "label":
        book.onPhishingLabel(op.wallet, op.active)
        ref.log.push({ kind: "label", wallet: op.wallet, active: op.active })
        break
      case "exclusion": {
        const excluded = !ref.excluded.has(op.wallet)
        if (excluded) ref.excluded.add(op.wallet)
        else ref.excluded.delete(op.wallet)
        book.onExclusionChanged(op.wallet)
        ref.log.push({ kind: "exclusion", wallet: op.wallet, excluded })
        break
      }
    }
    const snapshot = ref.snapshot()
    ref.noteStep(snapshot)
    return { snapshot, answered }
  }
}
