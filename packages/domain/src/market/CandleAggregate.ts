/**
 * A candle aggregate for all four series at once (price and market cap, each in native and USD)
 * laid out as 20 doubles inside a Float64Array, so hourly buckets and cached open buckets are
 * folded without allocating. Series order: see `seriesIndex` in Candles.ts.
 *
 *   base + 0..3   open     base + 8..11   low      base + 16,17  volume native (split nano-units)
 *   base + 4..7   high     base + 12..15  close    base + 18,19  volume USD (split nano-units)
 */
import type { CandleValue } from "./Candles.js"
import { addSplit, splitToNumber } from "./TapeNumbers.js"

export const OPEN = 0
export const HIGH = 4
export const LOW = 8
export const CLOSE = 12
export const VOLUME_NATIVE = 16
export const VOLUME_USD = 18
export const AGGREGATE_SLOTS = 20

/** Offset of a denomination's split volume inside an aggregate. */
export const volumeSlot = (series: number): number => (series % 2 === 0 ? VOLUME_NATIVE : VOLUME_USD)

/**
 * Folds one trade into the aggregate at `base` (`first` when the aggregate holds nothing yet).
 * Trades must come oldest first: the last one folded is the close.
 */
export const foldTrade = (
  target: Float64Array,
  base: number,
  first: boolean,
  priceNative: number,
  priceUsd: number,
  marketCapNative: number,
  marketCapUsd: number,
  nativeLow: number,
  nativeHigh: number,
  usdLow: number,
  usdHigh: number
): void => {
  if (first) {
    target[base] = target[base + 4] = target[base + 8] = target[base + 12] = priceNative
    target[base + 1] = target[base + 5] = target[base + 9] = target[base + 13] = priceUsd
    target[base + 2] = target[base + 6] = target[base + 10] = target[base + 14] = marketCapNative
    target[base + 3] = target[base + 7] = target[base + 11] = target[base + 15] = marketCapUsd
    target[base + 16] = nativeLow
    target[base + 17] = nativeHigh
    target[base + 18] = usdLow
    target[base + 19] = usdHigh
    return
  }
  foldTradeAmong(target, base, false, true, priceNative, priceUsd, marketCapNative, marketCapUsd, nativeLow, nativeHigh, usdLow, usdHigh)
}

/**
 * Folds one trade into the non-empty aggregate at `base`, wherever it falls in time (a late trade
 * may fall among those already folded): high, low and volume take it; it becomes the open when no
 * trade already folded is earlier (`earliest`), and the close when none is later (`latest`).
 */
export const foldTradeAmong = (
  target: Float64Array,
  base: number,
  earliest: boolean,
  latest: boolean,
  priceNative: number,
  priceUsd: number,
  marketCapNative: number,
  marketCapUsd: number,
  nativeLow: number,
  nativeHigh: number,
  usdLow: number,
  usdHigh: number
): void => {
  foldValue(target, base, priceNative, earliest, latest)
  foldValue(target, base + 1, priceUsd, earliest, latest)
  foldValue(target, base + 2, marketCapNative, earliest, latest)
  foldValue(target, base + 3, marketCapUsd, earliest, latest)
  addSplit(target, base + 16, nativeLow, nativeHigh)
  addSplit(target, base + 18, usdLow, usdHigh)
}

const foldValue = (target: Float64Array, at: number, value: number, isOpen: boolean, isClose: boolean): void => {
  if (value > target[at + HIGH]) target[at + HIGH] = value
  if (value < target[at + LOW]) target[at + LOW] = value
  if (isOpen) target[at + OPEN] = value
  if (isClose) target[at + CLOSE] = value
}

/** Folds a later aggregate (`source` at `sourceBase`) into the one at `base`. */
export const foldAggregate = (
  target: Float64Array,
  base: number,
  first: boolean,
  source: Float64Array,
  sourceBase: number
): void => {
  if (first) {
    for (let slot = 0; slot < AGGREGATE_SLOTS; slot++) target[base + slot] = source[sourceBase + slot]
    return
  }
  for (let series = 0; series < 4; series++) {
    const high = source[sourceBase + HIGH + series]
    const low = source[sourceBase + LOW + series]
    if (high > target[base + HIGH + series]) target[base + HIGH + series] = high
    if (low < target[base + LOW + series]) target[base + LOW + series] = low
    target[base + CLOSE + series] = source[sourceBase + CLOSE + series]
  }
  addSplit(target, base + VOLUME_NATIVE, source[sourceBase + VOLUME_NATIVE], source[sourceBase + VOLUME_NATIVE + 1])
  addSplit(target, base + VOLUME_USD, source[sourceBase + VOLUME_USD], source[sourceBase + VOLUME_USD + 1])
}

/** One series of an aggregate as a candle. */
export const aggregateCandle = (time: number, source: Float64Array, base: number, series: number): CandleValue => {
  const volume = base + volumeSlot(series)
  return {
    time,
    open: source[base + OPEN + series],
    high: source[base + HIGH + series],
    low: source[base + LOW + series],
    close: source[base + CLOSE + series],
    volume: splitToNumber(source[volume], source[volume + 1])
  }
}
