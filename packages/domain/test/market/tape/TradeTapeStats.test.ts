import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as FixedMath from "../../../src/Fixed.js"
import { TradeTape } from "../../../src/market/TradeTape.js"
import {
  advanceStep,
  day,
  hour,
  minute,
  mixedSteps,
  Model,
  modelPercent,
  modelWindow,
  nanoUnits,
  newTape,
  start,
  windowKeys,
  windowLengths
} from "./tapeModel.js"

const usd = (text: string) => FixedMath.unsafeParse(text)
const one = FixedMath.ONE

/** A trade whose only interesting input is its USD price (and optionally its USD volume). */
const trade = (tape: TradeTape, time: number, priceUsd: string, side: "buy" | "sell" = "buy", volumeUsd = "1") =>
  tape.append(time, side, one, usd(priceUsd), one, usd(priceUsd), one, usd(volumeUsd))

describe("TradeTape stats windows", () => {
  it("window figures equal a recomputation from the trade list at every now, late trades included", () => {
    fc.assert(
      fc.property(mixedSteps(120), fc.array(fc.integer({ min: 0, max: 2 * day }), { maxLength: 4 }), (steps, extraAdvances) => {
      const model = new Model()
      const tape = newTape(model)
      for (const step of steps) {
        model.apply(tape, step)
        const stats = tape.stats()
        for (const key of windowKeys) {
          expect(stats[key], key).toEqual(modelWindow(model.trades, model.now, windowLengths[key]))
        }
      }
      let now = model.now
      for (const extra of extraAdvances) {
        now += extra
        tape.advanceTo(now)
        const stats = tape.stats()
        for (const key of windowKeys) expect(stats[key], key).toEqual(modelWindow(model.trades, now, windowLengths[key]))
      }
    })
    )
  })

  it("late trades past raw retention, in any arrival order, set each window's reference to the last trade at or before its start", () => {
    // Backfills: trades up to three days older than the latest, oldest first or not.
    const backfill = fc.record({
      kind: fc.constant("trade" as const),
      gap: fc.integer({ min: 1, max: 2 * hour }),
      back: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.integer({ min: day, max: 3 * day }) }),
      side: fc.constantFrom("buy" as const, "sell" as const),
      priceNative: fc.constant(one),
      priceUsd: fc.integer({ min: 1, max: 999 }).map((n) => BigInt(n) * (one / 100n)),
      supply: fc.constant(10n ** 9n),
      volumeNative: fc.constant(one),
      volumeUsd: fc.constant(one)
    })
    fc.assert(
      fc.property(fc.array(fc.oneof({ weight: 4, arbitrary: backfill }, { weight: 1, arbitrary: advanceStep }), { minLength: 2, maxLength: 40 }), (steps) => {
        const model = new Model(day, 400 * day, true)
        const tape = newTape(model)
        for (const step of steps) {
          model.apply(tape, step)
          const stats = tape.stats()
          for (const key of windowKeys) expect(stats[key], key).toEqual(modelWindow(model.trades, model.now, windowLengths[key]))
        }
      }),
      { numRuns: 300 }
    )
  })

  it("longer windows never hold fewer trades or less volume (24h ≥ 6h ≥ 1h ≥ 30m ≥ 5m)", () => {
    fc.assert(
      fc.property(mixedSteps(60), (steps) => {
      const model = new Model()
      const tape = newTape(model)
      for (const step of steps) {
        model.apply(tape, step)
        const stats = tape.stats()
        for (let i = 1; i < windowKeys.length; i++) {
          const shorter = stats[windowKeys[i - 1]!]
          const longer = stats[windowKeys[i]!]
          expect(longer.buyCount).toBeGreaterThanOrEqual(shorter.buyCount)
          expect(longer.sellCount).toBeGreaterThanOrEqual(shorter.sellCount)
          expect(usd(longer.volume.native) >= usd(shorter.volume.native)).toBe(true)
          expect(usd(longer.volume.usd) >= usd(shorter.volume.usd)).toBe(true)
          expect(usd(longer.buyVolume.usd) >= usd(shorter.buyVolume.usd)).toBe(true)
          expect(usd(longer.sellVolume.native) >= usd(shorter.sellVolume.native)).toBe(true)
        }
      }
    })
    )
  })

  it("volume24h and count24h agree with the 24h window", () => {
    fc.assert(
      fc.property(mixedSteps(60), (steps) => {
      const model = new Model()
      const tape = newTape(model)
      for (const step of steps) model.apply(tape, step)
      const window = tape.stats()["24h"]
      const volume = tape.volume24h()
      expect(FixedMath.format(volume.native)).toBe(window.volume.native)
      expect(FixedMath.format(volume.usd)).toBe(window.volume.usd)
      expect(tape.count24h()).toEqual({ buys: window.buyCount, sells: window.sellCount })
    })
    )
  })

  it("after advancing past 24h with no trades every window is empty and unchanged in price", () => {
    fc.assert(
      fc.property(mixedSteps(60), fc.integer({ min: day, max: 3 * day }), (steps, idle) => {
      const model = new Model()
      const tape = newTape(model)
      for (const step of steps) model.apply(tape, step)
      tape.advanceTo(model.now + idle)
      const stats = tape.stats()
      for (const key of windowKeys) {
        expect(stats[key]).toEqual({
          priceChangePct: "0",
          volume: { native: "0", usd: "0" },
          buyCount: 0,
          sellCount: 0,
          buyVolume: { native: "0", usd: "0" },
          sellVolume: { native: "0", usd: "0" }
        })
      }
      expect(tape.count24h()).toEqual({ buys: 0, sells: 0 })
      expect(tape.volume24h()).toEqual({ native: 0n, usd: 0n })
      // Only the first call that empties windows reports a change.
      expect(tape.advanceTo(model.now + idle + 1)).toBe(false)
    })
    )
  })

  it("advanceTo reports a change exactly when a trade leaves a window", () => {
    const tape = new TradeTape()
    trade(tape, start, "1")
    expect(tape.advanceTo(start + 5 * minute - 1)).toBe(false)
    expect(tape.advanceTo(start + 5 * minute)).toBe(true) // (now − 5m, now] excludes the trade
    expect(tape.advanceTo(start + 5 * minute)).toBe(false)
    expect(tape.advanceTo(start + 10 * minute)).toBe(false)
    expect(tape.advanceTo(start + 30 * minute)).toBe(true)
  })

  it("volumes are exact sums of nano-units (10^-9), including wei-scale amounts past 64 bits", () => {
    const tape = new TradeTape()
    const wei = 123_456_789_012_345_678_901_234_567n // 1.2e8 native in Fixed, > 2^64
    tape.append(start, "buy", one, one, one, one, wei, usd("1.0000000019"))
    tape.append(start, "sell", one, one, one, one, wei + 1n, usd("0.0000000009"))
    const window = tape.stats()["5m"]
    const units = nanoUnits(wei) * 2n
    expect(window.volume.native).toBe(FixedMath.format(units * 10n ** 9n))
    expect(window.buyVolume.usd).toBe("1.000000001")
    expect(window.sellVolume.usd).toBe("0") // dust below the unit
    expect(tape.volume24h().native).toBe(units * 10n ** 9n)
  })
})

describe("TradeTape priceChangePct reference rule", () => {
  it("is 0 with no trade and with a single trade", () => {
    const tape = new TradeTape()
    expect(tape.stats()["5m"].priceChangePct).toBe("0")
    trade(tape, start, "0.5")
    for (const key of windowKeys) expect(tape.stats()[key].priceChangePct).toBe("0")
  })

  it("uses the last trade at or before the window start, else the token's first trade", () => {
    const tape = new TradeTape()
    trade(tape, start, "2")
    trade(tape, start + 1 * minute, "4")
    trade(tape, start + 2 * minute, "3")
    tape.advanceTo(start + 6 * minute + 30_000)
    const stats = tape.stats()
    // 5m window starts at start+1m30s: reference is the trade at start+1m (price 4).
    expect(stats["5m"].priceChangePct).toBe("-25")
    expect(stats["5m"].buyCount).toBe(1)
    // Younger than 30m: reference is the first trade (price 2).
    expect(stats["30m"].priceChangePct).toBe("50")
    expect(stats["24h"].priceChangePct).toBe("50")
  })

  it("counts a trade exactly at the window start as the reference, not as inside the window", () => {
    const tape = new TradeTape()
    trade(tape, start, "1")
    trade(tape, start + 5 * minute, "1.1")
    const stats = tape.stats()
    expect(stats["5m"].buyCount).toBe(1)
    expect(stats["5m"].priceChangePct).toBe("10")
    expect(stats["30m"].buyCount).toBe(2)
    expect(stats["30m"].priceChangePct).toBe("10")
  })

  it("with equal timestamps the latest of them is both the newest price and a later reference", () => {
    const tape = new TradeTape()
    trade(tape, start, "1")
    trade(tape, start, "3")
    trade(tape, start + 10 * minute, "1")
    const stats = tape.stats()
    // The 5m reference is the last trade at or before start+5m: the second one at `start` (3).
    expect(stats["5m"].priceChangePct).toBe("-66.6666666666")
    expect(stats["1h"].priceChangePct).toBe("0") // first trade 1, latest 1
  })

  it("is 0 when no trade happened in the window (latest trade is the reference)", () => {
    const tape = new TradeTape()
    trade(tape, start, "1")
    trade(tape, start + 1 * minute, "5")
    tape.advanceTo(start + 7 * minute)
    expect(tape.stats()["5m"].priceChangePct).toBe("0")
    expect(tape.stats()["5m"].buyCount).toBe(0)
    expect(tape.stats()["1h"].priceChangePct).toBe("400")
  })

  it("reference survives the raw tape being emptied and refilled", () => {
    const tape = new TradeTape()
    trade(tape, start, "8")
    tape.advanceTo(start + 2 * day)
    trade(tape, start + 2 * day + hour, "10")
    const stats = tape.stats()
    for (const key of windowKeys) expect(stats[key].priceChangePct, key).toBe("25")
  })

  it("keeps 15-digit prices exact: tiny and large USD prices", () => {
    const tape = new TradeTape()
    trade(tape, start, "0.000000001234567")
    trade(tape, start + 10 * minute, "0.000000001234568")
    trade(tape, start + 20 * minute, "6.935")
    trade(tape, start + 30 * minute, "12345.6789")
    const stats = tape.stats()
    const expected = (latest: string, reference: string) =>
      modelPercent(FixedMath.pct(usd(latest) - usd(reference), usd(reference)))
    expect(stats["5m"].priceChangePct).toBe(expected("12345.6789", "6.935"))
    expect(stats["5m"].priceChangePct).toBe("177919.883201") // 6 decimals at a change of 1,779 hundred percent
    expect(stats["1h"].priceChangePct).toBe(expected("12345.6789", "0.000000001234567"))
  })

  it("prints a change only to the decimals its double-held prices keep exact", () => {
    // Prices of 18 significant digits: held as doubles, read back to 15; the change is printed to
    // 10 decimals below 100% (9 below 1,000%), so every printed digit is the exact change's.
    const tape = new TradeTape()
    trade(tape, start, "0.000123456789012345678")
    trade(tape, start + 10 * minute, "0.001108711345678901234")
    const exact = FixedMath.pct(usd("0.001108711345678901234") - usd("0.000123456789012345678"), usd("0.000123456789012345678"))
    const printed = tape.stats()["5m"].priceChangePct
    expect(printed.split(".")[1]!.length).toBeLessThanOrEqual(9)
    expect(printed).toBe(modelPercent(exact))
  })
})

describe("TradeTape memory", () => {
  it("an idle token costs well under 1 KB, and a token idle for longer than retention returns near it", () => {
    const tape = new TradeTape({ hourlyRetainMs: 2 * day })
    expect(tape.heapBytes()).toBeLessThan(600)
    for (let i = 0; i < 10_000; i++) trade(tape, start + i * 1_000, "1", i % 2 === 0 ? "buy" : "sell")
    const busy = tape.heapBytes()
    expect(busy / 10_000).toBeLessThan(2 * 57 + 10)
    tape.latestCandle("1m", "price", "usd")
    tape.advanceTo(start + 4 * day)
    expect(tape.heapBytes()).toBeLessThan(600)
    expect(tape.lastTradeAt()).toBe(start + 9_999_000)
  })

  it("stats() is computed once per change", () => {
    const tape = new TradeTape()
    trade(tape, start, "1")
    const first = tape.stats()
    expect(tape.stats()).toBe(first)
    trade(tape, start + 1, "2")
    expect(tape.stats()).not.toBe(first)
    expect(tape.stats()["5m"].buyCount).toBe(2)
  })
})

describe("TradeTape late trades", () => {
  it("a trade older than now is counted only in the windows it falls in", () => {
    const tape = new TradeTape()
    trade(tape, start, "1")
    tape.advanceTo(start + 20 * minute)
    trade(tape, start + 10 * minute, "2") // engine clock ran ahead of the chain
    const stats = tape.stats()
    expect(stats["5m"].buyCount).toBe(0)
    expect(stats["5m"].priceChangePct).toBe("0") // latest trade is at or before the window start
    expect(stats["30m"].buyCount).toBe(2)
    expect(stats["30m"].priceChangePct).toBe("100")
  })

  it("a trade older than the previous one takes its own time: its own candle, its own windows, not the latest price", () => {
    // Buys at q1 and q2 (about 3 hours apart), then a late buy at q3 between them.
    const q1 = start
    const q2 = start + 2 * hour + 58 * minute
    const q3 = start + hour
    const tape = new TradeTape()
    trade(tape, q1, "0.0001", "buy", "100")
    trade(tape, q2, "0.0002", "buy", "200")
    trade(tape, q3, "0.0005", "buy", "500")
    expect(tape.lastTradeAt()).toBe(q2)
    const hourly = tape.candles({ timeframe: "1h", metric: "price", denomination: "usd" })
    const bucketOf = (t: number) => Math.floor(t / hour) * hour
    expect(hourly.map((c) => [c.time, c.open, c.high, c.low, c.close, c.volume])).toEqual([
      [bucketOf(q1), 0.0001, 0.0001, 0.0001, 0.0001, 100],
      [bucketOf(q3), 0.0005, 0.0005, 0.0005, 0.0005, 500],
      [bucketOf(q2), 0.0002, 0.0002, 0.0002, 0.0002, 200]
    ])
    const minutes = tape.candles({ timeframe: "1m", metric: "price", denomination: "usd" })
    expect(minutes.map((c) => c.time)).toEqual([q1, q3, q2].map((t) => Math.floor(t / minute) * minute))
    const stats = tape.stats()
    // Now is q2: the 1h window holds q2 only; its reference is the late trade (the last at or before q2 − 1h).
    expect(stats["1h"].buyCount).toBe(1)
    expect(stats["1h"].priceChangePct).toBe("-60")
    expect(stats["6h"].buyCount).toBe(3)
    expect(stats["6h"].priceChangePct).toBe("100") // from the first trade (0.0001) to the latest (0.0002)
  })

  it("a late trade older than raw retention reaches only the hourly candles (inside its hour: high, low and volume)", () => {
    const h0 = Math.floor(start / hour) * hour + hour
    const tape = new TradeTape()
    trade(tape, h0 + 5 * minute, "1", "buy", "10")
    trade(tape, h0 + 40 * minute, "3", "buy", "10")
    trade(tape, h0 + 25 * hour, "2")
    trade(tape, h0 + 10 * minute, "9", "sell", "5") // inside the first hour, long gone from the raw tape
    const first = tape.candles({ timeframe: "1h", metric: "price", denomination: "usd" })[0]!
    expect([first.time, first.open, first.high, first.low, first.close, first.volume]).toEqual([h0, 1, 9, 1, 3, 25])
    expect(tape.stats()["24h"].sellCount).toBe(0)
    expect(tape.candles({ timeframe: "1m", metric: "price", denomination: "usd" }).map((c) => c.time)).toEqual([h0 + 25 * hour])
  })
})
