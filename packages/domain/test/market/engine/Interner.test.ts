/**
 * Each engine interns its short repeated texts in a table of its own (Interned.ts): two engines in
 * one process share no state, so one filling its table leaves the other's slots free.
 */
import { describe, expect, it } from "@effect/vitest"
import type { MarketEvent } from "../../../src/events/MarketEvent.js"
import { Interner, maxInterned } from "../../../src/market/Interned.js"
import { MarketEngine } from "../../../src/market/MarketEngine.js"

const start = 1_700_000_000_000
const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

/** A Solana address of its own for each `n`. */
const walletOf = (n: number): string => {
  let digits = ""
  for (let rest = n; rest > 0; rest = Math.floor(rest / 58)) digits = base58[rest % 58]! + digits
  return `W${digits.padStart(43, "1")}`
}

const labelled = (tag: string, n: number): MarketEvent => ({
  type: "walletLabeled",
  id: `${tag}-label-${n}`,
  timestamp: start + n,
  chain: "solana",
  wallet: walletOf(n),
  label: `${tag}-desk-${n}`,
  active: true
})

describe("Interner", () => {
  it("keeps one copy per text, up to its bound, then passes new texts through", () => {
    const interner = new Interner()
    const first = interner.of(["desk", "a"].join("-"))
    expect(interner.of(["desk", "a"].join("-"))).toBe(first)
    expect(interner.orNull(null)).toBeNull()
    expect(interner.size).toBe(1)
    for (let n = 0; interner.size < maxInterned; n++) interner.of(`text-${n}`)
    expect(interner.of("one too many")).toBe("one too many")
    expect(interner.size).toBe(maxInterned)
  })

  it("is the engine's own: one engine filling its table leaves another's slots free", () => {
    const a = new MarketEngine()
    const b = new MarketEngine()
    expect(a.internedTexts).toBe(0)
    for (let n = 0; n < maxInterned + 100; n++) expect(a.apply(labelled("a", n))).toBeUndefined()
    expect(a.internedTexts).toBe(maxInterned)
    // an engine made before and one made after: neither holds a's texts, both still intern theirs
    expect(b.internedTexts).toBe(0)
    const c = new MarketEngine()
    for (let n = 0; n < 10; n++) {
      expect(b.apply(labelled("b", n))).toBeUndefined()
      expect(c.apply(labelled("c", n))).toBeUndefined()
    }
    expect(b.internedTexts).toBe(10)
    expect(c.internedTexts).toBe(10)
    expect(a.internedTexts).toBe(maxInterned)
    // a's labels past its bound are kept as they came, and read the same
    expect(a.wallet("solana", walletOf(maxInterned + 50))?.labels).toEqual([`a-desk-${maxInterned + 50}`])
  })
})
