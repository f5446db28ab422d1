import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as FixedMath from "../../../src/Fixed.js"
import type { CandleValue, Timeframe } from "../../../src/market/Candles.js"
import { bucketStart, timeframeMs, timeframes } from "../../../src/market/Candles.js"
import { TradeTape } from "../../../src/market/TradeTape.js"
import {
  closeTo,
  coveredCandles,
  day,
  denominations,
  hour,
  metrics,
  mixedSteps,
  Model,
  newTape,
  start,
  type Step,
  tradeStep
} from "./tapeModel.js"

const timeframe = fc.constantFrom(...timeframes)
const metric = fc.constantFrom(...metrics)
const denomination = fc.constantFrom(...denominations)

const run = (steps: ReadonlyArray<Step>, retainMs = day, hourlyRetainMs = 400 * day) => {
  const model = new Model(retainMs, hourlyRetainMs)
  const tape = newTape(model)
  for (const step of steps) model.apply(tape, step)
  return { model, tape }
}

/** Trades spread over about three days: the raw tape gets trimmed, the hourly series does not. */
const longSteps = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: tradeStep },
    { weight: 1, arbitrary: tradeStep.map((step) => ({ ...step, gap: step.gap + 2 * hour })) }
  ),
  { minLength: 1, maxLength: 150, size: "max" }
)

const all = (tape: TradeTape, tf: Timeframe, m: "price" | "marketCap", d: "usd" | "native") =>
  tape.candles({ timeframe: tf, metric: m, denomination: d, from: -Infinity, countBack: 5_000 })

/** The fold of consecutive fine candles into one coarse candle. */
const fold = (time: number, fine: ReadonlyArray<CandleValue>): CandleValue => ({
  time,
  open: fine[0]!.open,
  high: Math.max(...fine.map((c) => c.high)),
  low: Math.min(...fine.map((c) => c.low)),
  close: fine[fine.length - 1]!.close,
  volume: fine.reduce((sum, c) => sum + c.volume, 0)
})

const expectFoldEqual = (coarse: CandleValue, fine: ReadonlyArray<CandleValue>) => {
  const folded = fold(coarse.time, fine)
  expect({ ...coarse, volume: 0 }).toEqual({ ...folded, volume: 0 })
  expect(closeTo(coarse.volume, folded.volume), `${coarse.volume} vs ${folded.volume}`).toBe(true)
}

describe("bucketStart", () => {
  it("aligns to UTC floor(t / size) * size, weeks on Monday 00:00 UTC", () => {
    const t = Date.UTC(2026, 0, 8, 13, 47, 12, 345) // Thursday
    expect(bucketStart("1s", t)).toBe(Date.UTC(2026, 0, 8, 13, 47, 12))
    expect(bucketStart("15s", t)).toBe(Date.UTC(2026, 0, 8, 13, 47, 0))
    expect(bucketStart("3m", t)).toBe(Date.UTC(2026, 0, 8, 13, 45))
    expect(bucketStart("4h", t)).toBe(Date.UTC(2026, 0, 8, 12))
    expect(bucketStart("1d", t)).toBe(Date.UTC(2026, 0, 8))
    expect(bucketStart("7d", t)).toBe(Date.UTC(2026, 0, 5)) // Monday
    expect(new Date(bucketStart("7d", t)).getUTCDay()).toBe(1)
    expect(bucketStart("7d", Date.UTC(2026, 0, 5))).toBe(Date.UTC(2026, 0, 5))
    expect(bucketStart("7d", Date.UTC(2026, 0, 5) - 1)).toBe(Date.UTC(2025, 11, 29))
  })

  it("every bucket holds its time and is one timeframe long", () => {
    fc.assert(
      fc.property(timeframe, fc.integer({ min: 0, max: 4e12 }), (tf, t) => {
    const open = bucketStart(tf, t)
    expect(open <= t && t < open + timeframeMs[tf]).toBe(true)
    expect(bucketStart(tf, open)).toBe(open)
  })
    )
  })
})

describe("TradeTape candles", () => {
  it("candles equal the buckets recomputed from the trades, for every covered timeframe and series", () => {
    fc.assert(
      fc.property(longSteps, fc.boolean(), (steps, shortHourly) => {
      // A short hourly retention exercises dropped hours too.
      const { model, tape } = run(steps, day, shortHourly ? 2 * day : 400 * day)
      for (const tf of timeframes) {
        for (const m of metrics) {
          for (const d of denominations) {
            expect(all(tape, tf, m, d), `${tf} ${m} ${d}`).toEqual(coveredCandles(model, tf, m, d))
          }
        }
      }
    }), { numRuns: 40 }
    )
  })

  it("low ≤ min(open, close) and max(open, close) ≤ high in every candle", () => {
    fc.assert(
      fc.property(mixedSteps(100), timeframe, metric, denomination, (steps, tf, m, d) => {
      const { tape } = run(steps)
      for (const candle of all(tape, tf, m, d)) {
        expect(candle.low <= Math.min(candle.open, candle.close)).toBe(true)
        expect(Math.max(candle.open, candle.close) <= candle.high).toBe(true)
      }
    })
    )
  })

  it("a coarse bucket is the fold of its fine buckets, across the raw → hourly retention boundary", () => {
    fc.assert(
      fc.property(longSteps, metric, denomination, (steps, m, d) => {
      const { model, tape } = run(steps)
      const pairs: ReadonlyArray<readonly [Timeframe, Timeframe]> = [
        ["5s", "1s"],
        ["1m", "5s"],
        ["30m", "1m"],
        ["1h", "1m"],
        ["1h", "30m"],
        ["4h", "1h"],
        ["1d", "1h"],
        ["1d", "4h"],
        ["7d", "1d"]
      ]
      let compared = 0
      for (const [coarseTf, fineTf] of pairs) {
        const fine = all(tape, fineTf, m, d)
        for (const coarse of all(tape, coarseTf, m, d)) {
          // Fine timeframes below an hour reach back only to the raw tape's coverage.
          if (timeframeMs[fineTf] < hour && coarse.time <= model.rawDroppedThrough) continue
          const end = coarse.time + timeframeMs[coarseTf]
          expectFoldEqual(coarse, fine.filter((c) => c.time >= coarse.time && c.time < end))
          compared++
        }
      }
      expect(compared).toBeGreaterThan(0)
    })
    )
  })

  it("candle volumes add up to the trade volumes in the covered range", () => {
    fc.assert(
      fc.property(longSteps, timeframe, denomination, (steps, tf, d) => {
      const { model, tape } = run(steps)
      const candles = all(tape, tf, "price", d)
      const dropped = timeframeMs[tf] >= hour ? model.hourlyDroppedThrough : model.rawDroppedThrough
      let units = 0n
      for (const trade of model.trades) {
        if (bucketStart(tf, trade.time) <= dropped) continue
        const value = d === "usd" ? trade.volumeUsd : trade.volumeNative
        units += value <= 0n ? 0n : value / 10n ** 9n
      }
      const total = candles.reduce((sum, c) => sum + c.volume, 0)
      expect(closeTo(total, Number(units) / 1e9), `${total} vs ${Number(units) / 1e9}`).toBe(true)
    })
    )
  })

  it("latestCandle equals the last candle after every trade", () => {
    fc.assert(
      fc.property(mixedSteps(150), fc.array(fc.tuple(timeframe, metric, denomination), { minLength: 1, maxLength: 4 }), (steps, subscriptions) => {
      const model = new Model()
      const tape = newTape(model)
      for (const step of steps) {
        model.apply(tape, step)
        for (const [tf, m, d] of subscriptions) {
          const latest = tape.latestCandle(tf, m, d)
          expect(latest).toEqual(tape.candles({ timeframe: tf, metric: m, denomination: d }).at(-1))
        }
      }
    })
    )
  })
})

describe("TradeTape candle queries", () => {
  /** Many buckets: trades every few seconds for a couple of hours. */
  const denseSteps = fc.array(tradeStep.map((step) => ({ ...step, gap: step.gap % 7_000 })), {
    minLength: 1,
    maxLength: 300,
    size: "max"
  })

  it("`to` is exclusive and paging back with to = oldest time covers everything once", () => {
    fc.assert(
      fc.property(denseSteps, fc.constantFrom<Timeframe>("1s", "5s", "15s", "1m"), fc.integer({ min: 1, max: 40 }), (steps, tf, pageSize) => {
      const { model, tape } = run(steps)
      const expected = coveredCandles(model, tf, "price", "usd")
      const pages: Array<CandleValue> = []
      let to: number | undefined
      for (let guard = 0; guard < 1_000; guard++) {
        const page = tape.candles({ timeframe: tf, metric: "price", denomination: "usd", countBack: pageSize, to })
        for (const candle of page) if (to !== undefined) expect(candle.time).toBeLessThan(to)
        expect(page.length).toBeLessThanOrEqual(pageSize)
        if (page.length === 0) break
        pages.unshift(...page)
        to = page[0]!.time
      }
      expect(pages).toEqual(expected)
    })
    )
  })

  it("countBack, from and to select the newest buckets in [from, to)", () => {
    fc.assert(
      fc.property(denseSteps,
      fc.constantFrom<Timeframe>("1s", "5s", "1m", "1h"),
      fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
      fc.option(fc.integer({ min: -100_000, max: 3 * hour }), { nil: undefined }),
      fc.option(fc.integer({ min: -100_000, max: 3 * hour }), { nil: undefined }), (steps, tf, countBack, fromOffset, toOffset) => {
      const { model, tape } = run(steps)
      const from = fromOffset === undefined ? undefined : start + fromOffset
      const to = toOffset === undefined ? undefined : start + toOffset
      const inRange = coveredCandles(model, tf, "price", "usd").filter(
        (c) => (from === undefined || c.time >= from) && (to === undefined || c.time < to)
      )
      const limit = countBack ?? (from === undefined ? 500 : 5_000)
      const expected = limit === 0 ? [] : inRange.slice(-limit)
      expect(tape.candles({ timeframe: tf, metric: "price", denomination: "usd", from, to, countBack })).toEqual(expected)
    })
    )
  })

  it("without countBack or from returns the latest 500; never more than 5,000", () => {
    const tape = new TradeTape()
    const one = FixedMath.ONE
    for (let i = 0; i < 6_000; i++) tape.append(start + i * 1_000, "buy", one, one, one, one, one, one)
    const query = { timeframe: "1s", metric: "price", denomination: "usd" } as const
    const latest = tape.candles(query)
    expect(latest).toHaveLength(500)
    expect(latest[499]!.time).toBe(start + 5_999_000)
    expect(tape.candles({ ...query, to: start + 5_999_000 })[499]!.time).toBe(start + 5_998_000)
    const wide = tape.candles({ ...query, from: start })
    expect(wide).toHaveLength(5_000)
    expect(wide[0]!.time).toBe(start + 1_000_000) // the newest 5,000 kept
    expect(tape.candles({ ...query, countBack: 9_999 })).toHaveLength(5_000)
    expect(tape.candles({ ...query, countBack: 0 })).toEqual([])
  })

  it("empty buckets are omitted and marketCap uses the per-trade market cap", () => {
    const tape = new TradeTape()
    const f = FixedMath.unsafeParse
    tape.append(start, "buy", f("0.001"), f("0.2"), f("1000"), f("200000"), f("1"), f("200"))
    tape.append(start + 10_000, "sell", f("0.002"), f("0.4"), f("1500"), f("300000"), f("2"), f("400"))
    tape.append(start + 180_000, "buy", f("0.003"), f("0.6"), f("3000"), f("600000"), f("0.5"), f("100"))
    expect(tape.candles({ timeframe: "1m", metric: "marketCap", denomination: "usd" })).toEqual([
      { time: bucketStart("1m", start), open: 200000, high: 300000, low: 200000, close: 300000, volume: 600 },
      { time: bucketStart("1m", start + 180_000), open: 600000, high: 600000, low: 600000, close: 600000, volume: 100 }
    ])
    expect(tape.candles({ timeframe: "1m", metric: "price", denomination: "native" })[0]).toEqual({
      time: bucketStart("1m", start),
      open: 0.001,
      high: 0.002,
      low: 0.001,
      close: 0.002,
      volume: 3
    })
  })

  it("coarse timeframes keep trades the raw tape has dropped; fine ones cover only the raw window", () => {
    const tape = new TradeTape()
    const one = FixedMath.ONE
    tape.append(start, "buy", one, one, one, one, one, one)
    tape.append(start + 3 * day, "buy", 2n * one, 2n * one, one, one, one, one)
    expect(tape.candles({ timeframe: "1m", metric: "price", denomination: "usd" })).toHaveLength(1)
    const hourly = tape.candles({ timeframe: "1h", metric: "price", denomination: "usd" })
    expect(hourly.map((c) => c.close)).toEqual([1, 2])
  })
})

describe("TradeTape trades older than retention", () => {
  it("a trade in order but already beyond raw retention (the clock moved past it first) is in no fine candle: as if the clock moved after it", () => {
    const one = FixedMath.ONE
    const live = new TradeTape()
    const replay = new TradeTape()
    live.append(start, "buy", one, one, one, one, one, one)
    live.advanceTo(start + 3 * day) // the raw tape trimmed; the next trade is later than the last, yet two days old
    live.append(start + day, "sell", 2n * one, 2n * one, one, one, one, one)
    live.advanceTo(start + 3 * day) // a clock tick at the same time moves nothing
    replay.append(start, "buy", one, one, one, one, one, one)
    replay.append(start + day, "sell", 2n * one, 2n * one, one, one, one, one)
    replay.advanceTo(start + 3 * day)
    expect(live.candles({ timeframe: "1m", metric: "price", denomination: "usd", from: -Infinity })).toEqual([])
    for (const tf of timeframes) {
      for (const m of metrics) for (const d of denominations) expect(all(live, tf, m, d), `${tf} ${m} ${d}`).toEqual(all(replay, tf, m, d))
    }
    expect(live.stats()).toEqual(replay.stats())
  })
})

describe("TradeTape late trades in hourly candles", () => {
  const minute = 60_000
  const one = FixedMath.ONE
  const usd = (price: number) => FixedMath.unsafeParse(String(price))
  const trade = (tape: TradeTape, time: number, price: number) => tape.append(time, "buy", one, usd(price), one, usd(price), one, usd(1))
  const hourly = (tape: TradeTape) =>
    timeframes.filter((tf) => timeframeMs[tf] >= hour).map((tf) =>
      metrics.flatMap((m) => denominations.map((d) => all(tape, tf, m, d)))
    )

  it("a late trade earlier than its hour's open trade opens it, one not earlier than its close trade closes it, raw trades held or not", () => {
    const h0 = Math.floor(start / hour) * hour + hour
    for (const clockMoved of [false, true]) {
      const tape = new TradeTape()
      trade(tape, h0 + 30 * minute, 2)
      trade(tape, h0 + 50 * minute, 3)
      // With the clock two days on, the hour's raw trades are gone; without, they are held.
      if (clockMoved) tape.advanceTo(h0 + 2 * day)
      trade(tape, h0 + 10 * minute, 1) // earliest: the open
      trade(tape, h0 + 50 * minute, 4) // same millisecond as the close, arrived later: the close
      trade(tape, h0 + 40 * minute, 9) // inside: only the high
      const [candle] = tape.candles({ timeframe: "1h", metric: "price", denomination: "usd", from: -Infinity })
      expect([candle!.time, candle!.open, candle!.high, candle!.low, candle!.close], `clock moved: ${clockMoved}`).toEqual([h0, 1, 9, 1, 4])
    }
  })

  it("hourly and coarser candles do not depend on when the clock moved (a live fold and a replay of the same trades agree)", () => {
    const arrival = fc.array(
      fc.record({ at: fc.integer({ min: 0, max: 5 * day }), price: fc.integer({ min: 1, max: 1_000 }), advanceBy: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 * day })) }),
      { minLength: 1, maxLength: 60 }
    )
    fc.assert(
      fc.property(arrival, (trades) => {
        // Live: the wall clock moves between arrivals (raw trades are trimmed on the way); replay:
        // the same trades in the same order with no clock but their own, moved to the end at last.
        const live = new TradeTape()
        const replay = new TradeTape()
        let clock = start
        for (const t of trades) {
          trade(live, start + t.at, t.price)
          trade(replay, start + t.at, t.price)
          clock = Math.max(clock, start + t.at) + t.advanceBy
          live.advanceTo(clock)
        }
        replay.advanceTo(clock)
        expect(hourly(live)).toEqual(hourly(replay))
      }),
      { numRuns: 150 }
    )
  })
})
