import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { TextBytes } from "../../src/market/TextBytes.js"
import { fundingOf, fundingWire } from "../../src/market/Funding.js"
import { Interner } from "../../src/market/Interned.js"

describe("TextBytes", () => {
  it("gives back every text exactly, whatever its characters or length, across growth", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ unit: fc.constantFrom(..."123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"), minLength: 32, maxLength: 88 }),
            fc.string({ unit: "binary", maxLength: 40 }),
            fc.string({ maxLength: 300 }),
            fc.constant(null),
            fc.constant("")
          ),
          { maxLength: 400 }
        ),
        (texts) => {
          const store = new TextBytes()
          const refs = texts.map((t) => store.add(t))
          expect(refs.map((r) => store.read(r))).toEqual(texts)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("a packed funding reads as the event's funding, and its wire object carries every field in order", () => {
    const store = new TextBytes()
    const event = {
      type: "walletFunded" as const,
      id: "f1",
      chain: "solana" as const,
      wallet: "W1",
      funder: "Binance1111111111111111111111111111111111111",
      amount: 2_500_000_000n,
      asset: "So11111111111111111111111111111111111111112",
      assetSymbol: "SOL",
      assetDecimals: 9,
      sourceKind: "cex" as const,
      sourceLabel: "Binance",
      fundedAt: 1_763_740_000_000,
      transactionHash: "5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv",
      timestamp: 1_763_740_000_000
    }
    const funding = fundingOf(event as never, store, new Interner())
    expect(JSON.stringify(fundingWire(funding))).toBe(
      JSON.stringify({
        status: "resolved",
        address: event.funder,
        amount: "2.5",
        asset: event.asset,
        sourceKind: "cex",
        sourceLabel: "Binance",
        symbol: "SOL",
        timestamp: event.fundedAt,
        tx: event.transactionHash
      })
    )
  })
})
