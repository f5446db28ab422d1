import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { BUY_BLOCKS_KEPT, type BuyContext, HolderBook, type HoldersValue } from "../../../src/market/Holders.js"
import { Holders } from "../../../src/wire/Token.js"

const LAUNCH = 1_000
const T0 = 1_700_000_000_000
const DAY = 86_400_000

const ctx = (block: number, overrides: Partial<BuyContext> = {}): BuyContext => ({
  block,
  timestamp: T0 + (block - LAUNCH) * 400,
  walletFundedAt: null,
  fundedByCex: false,
  terminal: null,
  phishing: false,
  ...overrides
})

const newBook = (supply = 1_000_000n, excluded: ReadonlySet<string> = new Set(["pool", "burn"])) =>
  new HolderBook(supply, "creator", LAUNCH, { isExcludedFromTop10: (a) => excluded.has(a) })

/** A swap as the engine drives it: flags first, then the balance change. */
const buy = (book: HolderBook, wallet: string, amount: bigint, context: BuyContext) => {
  const flags = book.recordTrade(wallet, "buy", context)
  book.credit(wallet, amount)
  return flags
}
const sell = (book: HolderBook, wallet: string, amount: bigint, context: BuyContext) => {
  const flags = book.recordTrade(wallet, "sell", context)
  book.debit(wallet, amount)
  return flags
}

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

describe("HoldersValue", () => {
  it("is field for field the Type of the wire schema Holders, and toWire decodes with it", () => {
    const sameType: Equals<HoldersValue, typeof Holders.Type> = true
    expect(sameType).toBe(true)
    const book = newBook()
    buy(book, "a", 10n, ctx(LAUNCH))
    const wire = book.toWire()
    expect(Schema.decodeUnknownSync(Holders)(wire)).toEqual(wire)
  })
})

describe("sniper and insider: counted in blocks from the launch block", () => {
  it("the launch block and the next are sniper and insider; +2 insider only; +3 neither", () => {
    const book = newBook()
    expect(buy(book, "at-launch", 1n, ctx(LAUNCH))).toEqual(["sniper", "insider"])
    expect(buy(book, "plus-1", 1n, ctx(LAUNCH + 1))).toEqual(["sniper", "insider"])
    expect(buy(book, "plus-2", 1n, ctx(LAUNCH + 2))).toEqual(["insider"])
    expect(buy(book, "plus-3", 1n, ctx(LAUNCH + 3))).toEqual([])
    const wire = book.toWire()
    expect([wire.sniperCount, wire.insiderCount]).toEqual([2, 3])
  })

  it("a sell in the first blocks flags nothing; a block before launch flags nothing", () => {
    const book = newBook()
    book.credit("early-seller", 5n)
    expect(sell(book, "early-seller", 1n, ctx(LAUNCH))).toEqual([])
    expect(buy(book, "before-launch", 1n, ctx(LAUNCH - 1))).toEqual([])
  })

  it("a wallet that bought late keeps no sniper flag; one that sniped keeps it after selling out", () => {
    const book = newBook()
    buy(book, "s", 100n, ctx(LAUNCH))
    sell(book, "s", 100n, ctx(LAUNCH + 10))
    expect(book.flagsOf("s")).toEqual(["sniper", "insider"])
    expect(book.toWire().sniperPct).toBe("0")
    expect(book.toWire().sniperCount).toBe(1)
    buy(book, "s", 50_000n, ctx(LAUNCH + 11))
    expect(book.toWire().sniperPct).toBe("5")
  })
})

describe("bundler: the fourth or later buy in one block", () => {
  it("buys 1-3 of a block are not bundlers, the 4th and later are; the next block starts over", () => {
    const book = newBook()
    const block = LAUNCH + 10
    expect(["a", "b", "c", "d", "e"].map((w) => buy(book, w, 1n, ctx(block)).includes("bundler"))).toEqual([
      false,
      false,
      false,
      true,
      true
    ])
    expect(buy(book, "f", 1n, ctx(block + 1)).includes("bundler")).toBe(false)
    expect(book.toWire().bundlerCount).toBe(2)
  })

  it("sells do not count toward the block's buys", () => {
    const book = newBook()
    const block = LAUNCH + 10
    for (const w of ["a", "b", "c"]) book.credit(w, 10n)
    for (const w of ["a", "b", "c"]) sell(book, w, 1n, ctx(block))
    buy(book, "x", 1n, ctx(block))
    buy(book, "y", 1n, ctx(block))
    buy(book, "z", 1n, ctx(block))
    expect(book.flagsOf("z")).toEqual([])
  })

  it("every buy counts, including repeated buys by one wallet in the block", () => {
    const book = newBook()
    const block = LAUNCH + 20
    expect(buy(book, "a", 1n, ctx(block))).toEqual([])
    expect(buy(book, "a", 1n, ctx(block))).toEqual([])
    expect(buy(book, "a", 1n, ctx(block))).toEqual([])
    expect(buy(book, "a", 1n, ctx(block))).toEqual(["bundler"])
    const other = newBook()
    buy(other, "a", 1n, ctx(block))
    buy(other, "a", 1n, ctx(block))
    buy(other, "b", 1n, ctx(block))
    expect(buy(other, "c", 1n, ctx(block))).toEqual(["bundler"])
    expect(other.flagsOf("a")).toEqual([])
  })
})

describe("late buys: counted in their own block", () => {
  it("a fourth buy of a block is a bundler even when a buy of a later block arrived before it", () => {
    const book = newBook()
    const block = LAUNCH + 20
    for (const wallet of ["a1", "a2", "a3"]) expect(buy(book, wallet, 1n, ctx(block))).toEqual([])
    expect(buy(book, "next", 1n, ctx(block + 1))).toEqual([])
    expect(buy(book, "a5", 1n, ctx(block))).toEqual(["bundler"])
    // and the later block kept its own count: its second buy is no bundler
    expect(buy(book, "next2", 1n, ctx(block + 1))).toEqual([])
    expect(book.toWire().bundlerCount).toBe(1)
  })

  it("keeps the counts of the last BUY_BLOCKS_KEPT blocks; an older block starts over", () => {
    const book = newBook()
    const block = LAUNCH + 100
    for (let i = 0; i < 3; i++) buy(book, `old${i}`, 1n, ctx(block))
    for (let b = 1; b <= BUY_BLOCKS_KEPT; b++) buy(book, `later${b}`, 1n, ctx(block + b))
    expect(buy(book, "late", 1n, ctx(block))).toEqual([])
  })
})

describe("terminals, funding and labels", () => {
  it("any known terminal makes a pro trader, the partner terminal also a partner; both stay", () => {
    const book = newBook()
    expect(buy(book, "p", 1n, ctx(LAUNCH + 10, { terminal: "axiom" }))).toEqual(["proTrader"])
    expect(buy(book, "q", 1n, ctx(LAUNCH + 11, { terminal: "partner" }))).toEqual(["proTrader", "partner"])
    expect(buy(book, "q", 1n, ctx(LAUNCH + 12))).toEqual(["proTrader", "partner"])
  })

  it("fresh: funded less than seven days before the first trade on this token", () => {
    const book = newBook()
    const at = ctx(LAUNCH + 10).timestamp
    expect(buy(book, "fresh", 1n, ctx(LAUNCH + 10, { walletFundedAt: at - 7 * DAY + 1 }))).toEqual(["freshWallet"])
    expect(buy(book, "week", 1n, ctx(LAUNCH + 10, { walletFundedAt: at - 7 * DAY }))).toEqual([])
    // A later trade is measured from the first one, not from itself.
    book.recordTrade("old", "sell", ctx(LAUNCH + 10))
    expect(buy(book, "old", 1n, ctx(LAUNCH + 10 + 1_000, { walletFundedAt: at - DAY }))).toEqual(["freshWallet"])
  })

  it("fresh is measured from the earliest trade, also when that trade arrives late", () => {
    const book = newBook()
    const early = ctx(LAUNCH + 10)
    const fundedAt = early.timestamp - 5 * DAY
    // funded 7 days and a minute before the trade that arrives first: not fresh
    const later = ctx(LAUNCH + 10, { timestamp: fundedAt + 7 * DAY + 60_000, walletFundedAt: fundedAt })
    expect(buy(book, "g", 2n, later)).toEqual([])
    // its earlier trade (5 days after the funding) arrives late: it was fresh when it first traded
    expect(buy(book, "g", 1n, { ...early, walletFundedAt: fundedAt })).toEqual(["freshWallet"])
    expect(book.toWire().freshWalletCount).toBe(1)
  })

  it("what is known of a wallet that gets tokens by transfer counts from its first token", () => {
    const book = newBook()
    buy(book, "h", 10n, ctx(LAUNCH + 10))
    book.learnWallet("x", false, true)
    book.credit("x", 3n)
    book.learnWallet("y", true, false)
    book.credit("y", 3n)
    expect(book.toWire()).toMatchObject({ count: 3, phishingPct: "0.0003", phishingCount: 0, fundedByCexPct: "33.333333333333333333" })
    expect(book.flagsOf("x")).toEqual(["phishing"])
  })

  it("funding resolved later sets or clears fresh; the count keeps a wallet that was ever fresh", () => {
    const book = newBook()
    const first = ctx(LAUNCH + 10)
    buy(book, "w", 100_000n, first)
    expect(book.onWalletFunded("w", first.timestamp - DAY, false)).toBe(true)
    expect(book.flagsOf("w")).toEqual(["freshWallet"])
    expect(book.toWire().freshWalletPct).toBe("10")
    expect(book.onWalletFunded("w", first.timestamp - 30 * DAY, false)).toBe(true)
    expect(book.flagsOf("w")).toEqual([])
    expect(book.toWire().freshWalletPct).toBe("0")
    expect(book.toWire().freshWalletCount).toBe(1)
    expect(book.onWalletFunded("w", first.timestamp - 30 * DAY, false)).toBe(false)
    expect(book.onWalletFunded("stranger", 0, true)).toBe(false)
  })

  it("fundedByCexPct is the share of current holders (by count) funded by an exchange", () => {
    const book = newBook()
    buy(book, "a", 1n, ctx(LAUNCH + 10, { fundedByCex: true }))
    buy(book, "b", 1n, ctx(LAUNCH + 10))
    buy(book, "c", 1n, ctx(LAUNCH + 11))
    book.credit("pool", 1_000n)
    book.credit("d", 5n) // a transfer in: never traded
    expect(book.toWire().fundedByCexPct).toBe("25")
    expect(book.onWalletFunded("d", null, true)).toBe(true)
    expect(book.toWire().fundedByCexPct).toBe("50")
    book.debit("a", 1n)
    expect(book.toWire().fundedByCexPct).toBe("33.333333333333333333")
  })

  it("phishing: the share follows the label now; the count is wallets that traded while labelled", () => {
    const book = newBook()
    expect(buy(book, "bad", 20_000n, ctx(LAUNCH + 10, { phishing: true }))).toEqual(["phishing"])
    buy(book, "later", 30_000n, ctx(LAUNCH + 11))
    expect(book.onPhishingLabel("later", true)).toBe(true)
    expect(book.toWire()).toMatchObject({ phishingPct: "5", phishingCount: 1 })
    expect(book.onPhishingLabel("bad", false)).toBe(true)
    expect(book.onPhishingLabel("bad", false)).toBe(false)
    expect(book.toWire()).toMatchObject({ phishingPct: "3", phishingCount: 1 })
    expect(book.flagsOf("bad")).toEqual([])
  })
})

describe("holders, top ten and dev share", () => {
  it("excluded addresses are neither holders nor in the top ten; a late exclusion moves them out", () => {
    const book = newBook(1_000n)
    book.credit("pool", 500n)
    book.credit("burn", 100n)
    book.credit("a", 50n)
    book.credit("b", 25n)
    expect(book.holderCount()).toBe(2)
    expect(book.toWire().top10Pct).toBe("7.5")
    const excluded = new Set(["pool", "burn"])
    const late = new HolderBook(1_000n, "creator", LAUNCH, { isExcludedFromTop10: (a) => excluded.has(a) })
    late.credit("vault", 400n)
    late.credit("a", 50n)
    expect(late.toWire()).toMatchObject({ count: 2, top10Pct: "45" })
    excluded.add("vault")
    expect(late.onExclusionChanged("vault")).toBe(true)
    expect(late.toWire()).toMatchObject({ count: 1, top10Pct: "5" })
    excluded.delete("vault")
    expect(late.onExclusionChanged("vault")).toBe(true)
    expect(late.toWire()).toMatchObject({ count: 2, top10Pct: "45" })
  })

  it("top10Pct sums the ten largest, follows a top holder selling out, and is not clamped above 100", () => {
    const book = newBook(10_000n)
    for (let i = 1; i <= 12; i++) book.credit(`w${i}`, BigInt(i * 100))
    // 12+11+...+3 hundreds
    expect(book.toWire().top10Pct).toBe("75")
    book.debit("w12", 1_200n)
    expect(book.toWire().top10Pct).toBe("65")
    book.setSupply(1_000n)
    expect(book.toWire().top10Pct).toBe("650")
  })

  it("debits never take a balance below zero", () => {
    const book = newBook()
    book.credit("a", 5n)
    book.debit("a", 7n)
    book.debit("nobody", 7n)
    expect([book.balanceOf("a"), book.balanceOf("nobody"), book.holderCount()]).toEqual([0n, 0n, 0])
  })

  it("devPct is the creator's balance over supply", () => {
    const book = newBook(3_000n)
    book.credit("creator", 1_000n)
    expect(book.toWire().devPct).toBe("33.333333333333333333")
    expect(book.devPct()).toBe(33_333_333_333_333_333_333n)
  })

  it("recordTrade returns a shared list per flag set (no allocation per call)", () => {
    const book = newBook()
    const first = buy(book, "a", 1n, ctx(LAUNCH))
    const second = buy(book, "b", 1n, ctx(LAUNCH))
    expect(second).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
  })
})
