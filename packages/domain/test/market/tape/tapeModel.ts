/**
 * A brute-force model of the trade tape (plain arrays, exact bigints, every figure recomputed
 * from the trade list) and the arbitraries that drive it. Property tests compare the tape with it.
 */
import * as fc from "fast-check"
import * as FixedMath from "../../../src/Fixed.js"
import type { Fixed } from "../../../src/Fixed.js"
import type { CandleMetric, CandleValue, Denomination, Timeframe } from "../../../src/market/Candles.js"
import { bucketStart, timeframeMs } from "../../../src/market/Candles.js"
import { TradeTape } from "../../../src/market/TradeTape.js"

export const minute = 60_000
export const hour = 60 * minute
export const day = 24 * hour
export const windowLengths = { "5m": 5 * minute, "30m": 30 * minute, "1h": hour, "6h": 6 * hour, "24h": day } as const
export const windowKeys = ["5m", "30m", "1h", "6h", "24h"] as const

export interface ModelTrade {
  readonly time: number
  readonly side: "buy" | "sell"
  readonly priceNative: Fixed
  readonly priceUsd: Fixed
  readonly marketCapNative: Fixed
  readonly marketCapUsd: Fixed
  readonly volumeNative: Fixed
  readonly volumeUsd: Fixed
}

/** A Fixed with at most 6 significant digits, from 10^-12 to 10^6 (prices, supplies). */
export const shortDecimal = fc
  .tuple(fc.integer({ min: 1, max: 999_999 }), fc.integer({ min: 6, max: 18 }))
  .map(([mantissa, exponent]) => BigInt(mantissa) * 10n ** BigInt(exponent))

/** A volume from dust (below the 10^-9 unit) to wei-scale amounts past 2^64 Fixed units. */
export const volume = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 12n }),
  fc.bigInt({ min: 0n, max: 10n ** 21n }),
  fc.bigInt({ min: 0n, max: 10n ** 27n })
)

/** Gaps between events: many equal timestamps, seconds, minutes, and jumps across windows. */
export const gap = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 5_000 }) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 20 * minute }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 * hour }) }
)

export interface TradeStep {
  readonly kind: "trade"
  readonly gap: number
  /** > 0: a late trade, this many ms before the latest trade (gap unused). */
  readonly back: number
  readonly side: "buy" | "sell"
  readonly priceNative: Fixed
  readonly priceUsd: Fixed
  readonly supply: Fixed
  readonly volumeNative: Fixed
  readonly volumeUsd: Fixed
}
export interface AdvanceStep {
  readonly kind: "advance"
  readonly gap: number
}
export type Step = TradeStep | AdvanceStep

export const tradeStep: fc.Arbitrary<TradeStep> = fc.record({
  kind: fc.constant("trade" as const),
  gap,
  back: fc.oneof(
    { weight: 6, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 * hour }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 20 * hour }) }
  ),
  side: fc.constantFrom("buy" as const, "sell" as const),
  priceNative: shortDecimal,
  priceUsd: shortDecimal,
  supply: fc.constantFrom(10n ** 9n, 10n ** 12n, 999_999_999n),
  volumeNative: volume,
  volumeUsd: volume
})
export const advanceStep: fc.Arbitrary<AdvanceStep> = fc.record({ kind: fc.constant("advance" as const), gap })

/** Trades only, or trades mixed with clock advances (which make later trades arrive "late"). */
export const tradeSteps = (maxLength: number) => fc.array(tradeStep, { minLength: 1, maxLength, size: "max" })
export const mixedSteps = (maxLength: number) =>
  fc.array(fc.oneof({ weight: 3, arbitrary: tradeStep }, { weight: 1, arbitrary: advanceStep }), {
    minLength: 1,
    maxLength,
    size: "max"
  })

export const start = Date.UTC(2026, 0, 5, 23, 40) // a Monday, just before midnight

/** The model: the trade list plus the clock, the raw trimming point and the hourly one. */

/**
 * The nearest double of `units` / 10^9, rounded once: JavaScript parses a decimal spelling with one
 * correct rounding (`Number(units) / 1e9` rounds twice above 2^53 units).
 */
export const nearestDouble = (units: bigint): number => {
  const magnitude = units < 0n ? -units : units
  const text = `${magnitude / 10n ** 9n}.${(magnitude % 10n ** 9n).toString().padStart(9, "0")}`
  return units < 0n ? -Number(text) : Number(text)
}

export class Model {
  readonly trades: Array<ModelTrade> = []
  now = -Infinity
  rawDroppedThrough = -Infinity
  hourlyDroppedThrough = -Infinity
  private lastTradeTime = start
  private clock = start

  constructor(
    readonly retainMs: number = day,
    readonly hourlyRetainMs: number = 400 * day,
    /** Late trades may reach past raw retention (where only the hourly candles and the windows' references take them). */
    readonly lateBeyondRetention = false
  ) {}

  /** Applies one step to the model and to the tape; returns the step's timestamp. */
  apply(tape: TradeTape, step: Step): number {
    if (step.kind === "advance") {
      this.clock += step.gap
      this.advance(this.clock)
      tape.advanceTo(this.clock)
      return this.clock
    }
    // A late trade (back > 0) is kept inside raw retention, where the tape places it exactly.
    const time = step.back > 0 && this.trades.length > 0
      ? this.lateBeyondRetention
        ? Math.max(this.lastTradeTime - step.back, start - 3 * day)
        : Math.max(this.lastTradeTime - step.back, Math.floor(this.now - this.retainMs) + 1)
      : this.lastTradeTime + step.gap
    let at = this.trades.length
    if (time >= this.lastTradeTime) this.lastTradeTime = time
    else {
      // Inserted after every trade at or before its time (arrival order among equal times).
      at = this.trades.findIndex((t) => t.time > time)
    }
    if (time > this.clock) this.clock = time
    if (time > this.now) this.advance(time)
    this.trades.splice(at, 0, {
      time,
      side: step.side,
      priceNative: step.priceNative,
      priceUsd: step.priceUsd,
      // market cap = price × total supply (a whole number of tokens here)
      marketCapNative: step.priceNative * step.supply,
      marketCapUsd: step.priceUsd * step.supply,
      volumeNative: step.volumeNative,
      volumeUsd: step.volumeUsd
    })
    const trade = this.trades[at]!
    tape.append(
      time,
      trade.side,
      trade.priceNative,
      trade.priceUsd,
      trade.marketCapNative,
      trade.marketCapUsd,
      trade.volumeNative,
      trade.volumeUsd
    )
    return time
  }

  private advance(now: number): void {
    if (!(now > this.now)) return
    this.now = now
    for (const trade of this.trades) if (trade.time <= now - this.retainMs) this.rawDroppedThrough = trade.time
    for (const trade of this.trades) {
      const hourStart = Math.floor(trade.time / hour) * hour
      if (hourStart + hour <= now - this.hourlyRetainMs) {
        this.hourlyDroppedThrough = Math.max(this.hourlyDroppedThrough, hourStart)
      }
    }
  }
}

export const newTape = (model: Model): TradeTape =>
  new TradeTape({ retainMs: model.retainMs, hourlyRetainMs: model.hourlyRetainMs })

/** Volumes as the tape stores them: whole nano-units (10^-9), saturated at 2^64 - 1. */
export const nanoUnits = (value: Fixed): bigint => {
  if (value <= 0n) return 0n
  const units = value / 10n ** 9n
  const max = (1n << 64n) - 1n
  return units > max ? max : units
}

export interface ModelWindow {
  readonly priceChangePct: string
  readonly volume: { readonly native: string; readonly usd: string }
  readonly buyCount: number
  readonly sellCount: number
  readonly buyVolume: { readonly native: string; readonly usd: string }
  readonly sellVolume: { readonly native: string; readonly usd: string }
}

/** A stats window recomputed from the whole trade list: trades in (now − length, now]. */
export const modelWindow = (trades: ReadonlyArray<ModelTrade>, now: number, length: number): ModelWindow => {
  let buyCount = 0
  let sellCount = 0
  let buyNative = 0n
  let buyUsd = 0n
  let sellNative = 0n
  let sellUsd = 0n
  let reference: ModelTrade | undefined
  for (const trade of trades) {
    if (trade.time <= now - length) {
      reference = trade
      continue
    }
    if (trade.side === "buy") {
      buyCount++
      buyNative += nanoUnits(trade.volumeNative)
      buyUsd += nanoUnits(trade.volumeUsd)
    } else {
      sellCount++
      sellNative += nanoUnits(trade.volumeNative)
      sellUsd += nanoUnits(trade.volumeUsd)
    }
  }
  const first = trades[0]
  const latest = trades[trades.length - 1]
  const base = reference ?? first
  const priceChangePct =
    latest === undefined || base === undefined
      ? "0"
      : modelPercent(FixedMath.pct(latest.priceUsd - base.priceUsd, base.priceUsd))
  const money = (native: bigint, usd: bigint) => ({
    native: FixedMath.format(native * 10n ** 9n),
    usd: FixedMath.format(usd * 10n ** 9n)
  })
  return {
    priceChangePct,
    volume: money(buyNative + sellNative, buyUsd + sellUsd),
    buyCount,
    sellCount,
    buyVolume: money(buyNative, buyUsd),
    sellVolume: money(sellNative, sellUsd)
  }
}

const metricValue = (trade: ModelTrade, metric: CandleMetric, denomination: Denomination): Fixed =>
  metric === "price"
    ? denomination === "usd"
      ? trade.priceUsd
      : trade.priceNative
    : denomination === "usd"
    ? trade.marketCapUsd
    : trade.marketCapNative

/** Every non-empty bucket of the given trades, oldest first, values as the nearest doubles (what `JSON.parse` of the decimal string gives). */
export const modelCandles = (
  trades: ReadonlyArray<ModelTrade>,
  timeframe: Timeframe,
  metric: CandleMetric,
  denomination: Denomination
): Array<CandleValue> => {
  const out: Array<CandleValue> = []
  let current: { time: number; open: number; high: number; low: number; close: number; units: bigint } | undefined
  const flush = () => {
    if (current === undefined) return
    out.push({
      time: current.time,
      open: current.open,
      high: current.high,
      low: current.low,
      close: current.close,
      volume: nearestDouble(current.units)
    })
  }
  for (const trade of trades) {
    const time = bucketStart(timeframe, trade.time)
    const value = Number(FixedMath.format(metricValue(trade, metric, denomination)))
    const units = nanoUnits(denomination === "usd" ? trade.volumeUsd : trade.volumeNative)
    if (current === undefined || current.time !== time) {
      flush()
      current = { time, open: value, high: value, low: value, close: value, units }
    } else {
      current.high = Math.max(current.high, value)
      current.low = Math.min(current.low, value)
      current.close = value
      current.units += units
    }
  }
  flush()
  return out
}

/**
 * What the tape can still answer for a timeframe: fine timeframes cover buckets opening after
 * the newest trimmed raw trade, coarse ones buckets opening after the newest dropped hour.
 */
export const coveredCandles = (
  model: Model,
  timeframe: Timeframe,
  metric: CandleMetric,
  denomination: Denomination
): Array<CandleValue> => {
  const dropped = timeframeMs[timeframe] >= hour ? model.hourlyDroppedThrough : model.rawDroppedThrough
  return modelCandles(model.trades, timeframe, metric, denomination).filter((candle) => candle.time > dropped)
}

export const metrics: ReadonlyArray<CandleMetric> = ["price", "marketCap"]
export const denominations: ReadonlyArray<Denomination> = ["usd", "native"]

/** |a - b| within a relative 1e-12 (volumes summed as doubles vs. converted once from an exact sum). */
export const closeTo = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b))

/** The exact percentage printed to the decimals the tape keeps exact: 10 under 100%, one fewer per further digit. */
export const modelPercent = (pct: Fixed): string => {
  const abs = pct < 0n ? -pct : pct
  let places = 10
  for (let limit = 100n * FixedMath.ONE; abs >= limit && places > 0; limit *= 10n) places--
  const unit = 10n ** BigInt(18 - places)
  return FixedMath.format((pct / unit) * unit)
}
