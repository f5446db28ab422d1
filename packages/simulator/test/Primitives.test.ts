import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { Chain } from "@spot/domain"
import { evmAddress, evmTransactionHash, solanaAddress, solanaSignature } from "../src/Addresses.js"
import { CurveTrade, formatProgress, progressUnits, pumpFunCurve, Reserves } from "../src/BondingCurve.js"
import { Prng } from "../src/Prng.js"
import { Schedule } from "../src/Schedule.js"

const intBetween = (minimum: number, maximum: number) =>
  Schema.Int.check(Schema.isGreaterThanOrEqualTo(minimum), Schema.isLessThanOrEqualTo(maximum))
const anySeed = intBetween(-(2 ** 40), 2 ** 40)

const lamports = (sol: number): bigint => BigInt(Math.round(sol * 1e9))

describe("Prng", () => {
  it.prop("the same seed gives the same sequence", [anySeed], ([seed]) => {
    const a = new Prng(seed)
    const b = new Prng(seed)
    for (let i = 0; i < 50; i++) expect(a.nextUint32()).toBe(b.nextUint32())
  })

  it.prop("int(n) stays in [0, n)", [anySeed, intBetween(1, 1_000_000)], ([seed, n]) => {
    const prng = new Prng(seed)
    for (let i = 0; i < 100; i++) {
      const v = prng.int(n)
      expect(Number.isInteger(v) && v >= 0 && v < n).toBe(true)
    }
  })

  it("is roughly uniform and differs across seeds", () => {
    const prng = new Prng(7)
    const buckets = new Array<number>(10).fill(0)
    for (let i = 0; i < 100_000; i++) buckets[prng.int(10)]!++
    for (const count of buckets) expect(Math.abs(count - 10_000)).toBeLessThan(500)
    expect(new Prng(1).nextUint32()).not.toBe(new Prng(2).nextUint32())
  })
})

describe("Addresses", () => {
  it("produces chain-shaped addresses and hashes", () => {
    const prng = new Prng(3)
    for (let i = 0; i < 500; i++) {
      expect(Chain.isAddressOn("solana", solanaAddress(prng))).toBe(true)
      expect(solanaAddress(prng, "pump").endsWith("pump")).toBe(true)
      expect(Chain.isAddressOn("base", evmAddress(prng))).toBe(true)
      expect(evmAddress(prng, "4444")).toMatch(/^0x[0-9a-f]{36}4444$/)
      expect(solanaSignature(prng)).toMatch(/^[1-9A-HJ-NP-Za-km-z]{88}$/)
      expect(evmTransactionHash(prng)).toMatch(/^0x[0-9a-f]{64}$/)
    }
  })

  it("does not repeat transaction hashes", () => {
    const prng = new Prng(4)
    const seen = new Set<string>()
    for (let i = 0; i < 50_000; i++) seen.add(solanaSignature(prng)).add(evmTransactionHash(prng))
    expect(seen.size).toBe(100_000)
  })
})

describe("BondingCurve", () => {
  it("completes the pump.fun curve at about 85 SOL", () => {
    const reserves = Reserves.curve(pumpFunCurve)
    const trade = new CurveTrade()
    trade.curveBuy(reserves, lamports(1_000))
    expect(trade.tokens).toBe(pumpFunCurve.curveTokens)
    expect(reserves.realTokens).toBe(0n)
    expect(Number(trade.quote) / 1e9).toBeGreaterThan(84)
    expect(Number(trade.quote) / 1e9).toBeLessThan(86)
    expect(formatProgress(progressUnits(reserves.realTokens, pumpFunCurve.curveTokens))).toBe("100")
  })

  it.prop(
    "progress follows (1 − realTokenReserves / 793.1M) × 100 and a round trip never profits",
    [Schema.Array(intBetween(1, 5_000)).check(Schema.isMinLength(1), Schema.isMaxLength(20))],
    ([buysCentiSol]) => {
      const reserves = Reserves.curve(pumpFunCurve)
      const trade = new CurveTrade()
      let paid = 0n
      let bought = 0n
      for (const centi of buysCentiSol) {
        trade.curveBuy(reserves, lamports(centi / 100))
        paid += trade.quote
        bought += trade.tokens
      }
      const exact = (1 - Number(reserves.realTokens) / 793_100_000e6) * 100
      const shown = Number(formatProgress(progressUnits(reserves.realTokens, pumpFunCurve.curveTokens)))
      expect(Math.abs(shown - exact)).toBeLessThan(0.0002)
      expect(reserves.realTokens + bought).toBe(pumpFunCurve.curveTokens)
      trade.curveSell(reserves, bought)
      expect(trade.quote <= paid).toBe(true)
      expect(reserves.realTokens).toBe(pumpFunCurve.curveTokens)
    }
  )

  it("formats progress without exponent or trailing zeros", () => {
    expect(formatProgress(0)).toBe("0")
    expect(formatProgress(5)).toBe("0.0005")
    expect(formatProgress(123_400)).toBe("12.34")
    expect(formatProgress(400_000)).toBe("40")
  })
})

describe("Schedule", () => {
  it.prop("pops in (time, insertion) order", [Schema.Array(intBetween(0, 50)).check(Schema.isMaxLength(200))], ([times]) => {
    const schedule = new Schedule<{ time: number; seq: number; label: number }>()
    times.forEach((time, label) => schedule.add({ time: 0, seq: 0, label }, time))
    const expected = times.map((time, label) => ({ time, label })).sort((a, b) => a.time - b.time || a.label - b.label)
    const popped: Array<{ time: number; label: number }> = []
    for (let item = schedule.pop(); item !== undefined; item = schedule.pop()) popped.push({ time: item.time, label: item.label })
    expect(popped).toEqual(expected)
  })
})
