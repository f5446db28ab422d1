import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { tradeIdOf } from "../../../src/market/TradeFeed.js"

/** cyrb53 as first written: the trade id must never change for the same event id. */
const cyrb53 = (text: string, seed: number): number => {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}
const referenceTradeId = (eventId: string): string =>
  `t${cyrb53(eventId, 1).toString(36).padStart(11, "0")}${cyrb53(eventId, 2).toString(36).padStart(11, "0")}`

describe("TradeRecord", () => {
  it("spells the trade id exactly as the reference hash does, for any event id", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: "binary", maxLength: 120 }),
          fc.string({ unit: fc.constantFrom(..."0123456789abcdef:solana"), minLength: 60, maxLength: 110 })
        ),
        (id) => {
          expect(tradeIdOf(id)).toBe(referenceTradeId(id))
        }
      ),
      { numRuns: 2_000 }
    )
    expect(tradeIdOf("")).toBe(referenceTradeId(""))
  })
})
