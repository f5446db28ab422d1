/**
 * Throughput and memory of one token's book with 10k holders (numbers are printed; the assertions
 * only pin what must hold on any machine: top-ten rescans stay rare).
 */
import { describe, expect, it } from "@effect/vitest"
import { type BuyContext, HolderBook } from "../../../src/market/Holders.js"

const HOLDERS = 10_000
const CALLS = 200_000
const LAUNCH = 1_000

/** mulberry32: a seeded PRNG, so every run replays the same market. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

// The domain package compiles without DOM or Node types: reach the host's clock and console untyped.
const host = globalThis as unknown as { performance: { now(): number }; console: { log(text: string): void } }
const now = (): number => host.performance.now()

/** Solana-like addresses: 44 characters. */
const addressOf = (i: number): string => `W${i.toString(36).padStart(8, "0")}${"x".repeat(35)}`

/**
 * A book whose holders have heavy-tailed balances (a few whales, a long tail), as after a launch;
 * `flat` gives everyone the same balance instead (the worst case for the top buffer: any top
 * holder that sells at all drops below every outsider).
 */
const seededBook = (random: () => number, wallets: ReadonlyArray<string>, flat = false): HolderBook => {
  const book = new HolderBook(10n ** 15n, wallets[0]!, LAUNCH, { isExcludedFromTop10: (a) => a === "pool" })
  let block = LAUNCH
  for (let i = 0; i < wallets.length; i++) {
    if (random() < 0.3) block++
    const ctx: BuyContext = {
      block,
      timestamp: 1_700_000_000_000 + block * 400,
      walletFundedAt: random() < 0.2 ? 1_700_000_000_000 : null,
      fundedByCex: random() < 0.3,
      terminal: random() < 0.2 ? "partner" : random() < 0.3 ? "axiom" : null,
      phishing: random() < 0.01
    }
    book.recordTrade(wallets[i]!, "buy", ctx)
    book.credit(wallets[i]!, flat ? 10n ** 12n : BigInt(Math.floor(1e12 / (1 + i) ** 1.1 + random() * 1e6)))
  }
  return book
}

interface Run {
  readonly callsPerSecond: number
  readonly rescans: number
}

/**
 * CALLS swaps (recordTrade + credit or debit) on random wallets; sells take a random fraction and
 * sometimes everything. `readTop10Every` > 0 also reads top10Pct that often (the engine's toWire).
 */
const runSwaps = (
  book: HolderBook,
  wallets: ReadonlyArray<string>,
  random: () => number,
  readTop10Every: number,
  whaleBias: number
): Run => {
  // Pre-drawn inputs, so the timed loop measures the book and not the generator.
  const who = new Int32Array(CALLS)
  const isBuy = new Uint8Array(CALLS)
  const amount: Array<bigint> = new Array(CALLS)
  const contexts: Array<BuyContext> = new Array(CALLS)
  let block = LAUNCH + 100
  for (let i = 0; i < CALLS; i++) {
    // whaleBias of the trades hit the 100 largest wallets (they move the top ten); the rest anyone.
    who[i] = random() < whaleBias ? Math.floor(random() * 100) : Math.floor(random() * wallets.length)
    isBuy[i] = random() < 0.5 ? 1 : 0
    const r = random()
    // One sell in ten empties the wallet (the debit is clamped at its balance).
    amount[i] = isBuy[i] === 0 && r < 0.1 ? 10n ** 18n : BigInt(Math.floor(random() * 5e9)) + 1n
    if (random() < 0.1) block++
    contexts[i] = {
      block,
      timestamp: 1_700_000_000_000 + block * 400,
      walletFundedAt: null,
      fundedByCex: false,
      terminal: random() < 0.3 ? "axiom" : null,
      phishing: false
    }
  }
  const rescansBefore = book.top10Rescans()
  const start = now()
  for (let i = 0; i < CALLS; i++) {
    const wallet = wallets[who[i]!]!
    if (isBuy[i] === 1) {
      book.recordTrade(wallet, "buy", contexts[i]!)
      book.credit(wallet, amount[i]!)
    } else {
      book.recordTrade(wallet, "sell", contexts[i]!)
      book.debit(wallet, amount[i]!)
    }
    if (readTop10Every > 0 && i % readTop10Every === 0) book.top10Pct()
  }
  const seconds = (now() - start) / 1000
  return { callsPerSecond: Math.round(CALLS / seconds), rescans: book.top10Rescans() - rescansBefore }
}

describe("HolderBook at 10k holders", () => {
  it("top-ten rescans stay rare: under 1 per 1,000 swaps reading top10Pct, under 1 per 100 with 90% on the largest (calls/s and heap per holder printed, not checked)", () => {
    const random = prng(42)
    const wallets = Array.from({ length: HOLDERS }, (_, i) => addressOf(i))
    const book = seededBook(random, wallets)
    expect(book.holderCount()).toBe(HOLDERS)

    const quiet = runSwaps(book, wallets, random, 0, 0.1)
    const reading = runSwaps(book, wallets, random, 1, 0.1)
    const whales = runSwaps(book, wallets, random, 1, 0.9)

    const flatWallets = wallets.slice()
    const flatBook = seededBook(random, flatWallets, true)
    const flat = runSwaps(flatBook, flatWallets, random, 1, 0)

    const perHolder = book.heapBytes() / HOLDERS
    host.console.log(
      [
        `holders=${book.holderCount()}`,
        `recordTrade+credit/debit: ${quiet.callsPerSecond} swaps/s (${quiet.rescans} rescans)`,
        `with top10Pct() after every swap: ${reading.callsPerSecond} swaps/s (${reading.rescans} rescans / ${CALLS})`,
        `90% of swaps on the 100 largest, top10Pct() every swap: ${whales.callsPerSecond} swaps/s ` +
          `(${whales.rescans} rescans / ${CALLS})`,
        `equal balances, top10Pct() every swap: ${flat.callsPerSecond} swaps/s (${flat.rescans} rescans / ${CALLS})`,
        `heapBytes per holder ≈ ${perHolder.toFixed(1)}`
      ].join("\n")
    )
    // Rescans are what would make this O(holders): they must stay a small fraction of swaps.
    expect(reading.rescans).toBeLessThan(CALLS / 1_000)
    expect(whales.rescans).toBeLessThan(CALLS / 100)
  })
})
