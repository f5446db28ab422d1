/**
 * The trade tape of one token: the raw trades of the last `retainMs` in growable typed arrays,
 * the trailing stats windows (5m … 24h) as running exact sums, hourly aggregates kept much longer,
 * and the candles read from them. The engine keeps one tape per token and appends every trade,
 * so `append` is O(1) amortized and allocates nothing but occasional typed-array growth.
 * Rules and their reasons: docs/candles-and-windows.md.
 */
import type { Fixed } from "../Fixed.js"
import * as FixedMath from "../Fixed.js"
import { aggregateCandle, foldTrade } from "./CandleAggregate.js"
import { CandleHourlySeries, firstBucketAfter, LATEST_CACHE_SLOTS } from "./CandleHourlySeries.js"
import type { CandleMetric, CandleQuery, CandleValue, Denomination, Timeframe } from "./Candles.js"
import {
  bucketAnchor,
  candleLimit,
  isHourAligned,
  queryTimeRange,
  seriesIndex,
  timeframeMs,
  timeframes
} from "./Candles.js"
import {
  addSplit,
  fixedFromDouble,
  fixedToDouble,
  formatVolumeUnits,
  splitToFixed,
  splitToNumber,
  splitToUnits,
  subtractSplit,
  writeVolumeUnits
} from "./TapeNumbers.js"

export type { CandleMetric, CandleQuery, CandleValue, Denomination, Timeframe } from "./Candles.js"
export { bucketStart, timeframeMs, timeframes } from "./Candles.js"

export interface StatsWindowValue {
  priceChangePct: string
  volume: { native: string; usd: string }
  buyCount: number
  sellCount: number
  buyVolume: { native: string; usd: string }
  sellVolume: { native: string; usd: string }
}

export type StatsWindowKey = "5m" | "30m" | "1h" | "6h" | "24h"
export type StatsValue = Record<StatsWindowKey, StatsWindowValue>

export const statsWindowKeys: ReadonlyArray<StatsWindowKey> = ["5m", "30m", "1h", "6h", "24h"]
const minute = 60_000
const windowLengths = [5 * minute, 30 * minute, 60 * minute, 360 * minute, 1_440 * minute]
const windowCount = windowLengths.length
const longestWindow = windowLengths[windowCount - 1]!

export const defaultRetainMs = longestWindow
export const defaultHourlyRetainMs = 400 * 24 * 60 * minute

// Raw trade layout. `values`: time, price native, price USD, market cap native, market cap USD
// (series s at 1 + s). `volumes`: native low/high words, USD low/high words of nano-units.
// `sides`: 1 for a sell. 57 bytes a trade.
const VALUE_STRIDE = 5
const VOLUME_STRIDE = 4
const minimumCapacity = 8
/** Bytes per raw trade: its values, volume words and side. */
const RAW_BYTES = VALUE_STRIDE * 8 + VOLUME_STRIDE * 4 + 1
const noValues = new Float64Array(0)
const noVolumes = new Uint32Array(0)
const noSides = new Uint8Array(0)

// Window state, per window: the oldest trade still inside (a sequence number), counts, split
// volume sums, the USD price of the newest trade that left it (NaN: none left yet) and that
// trade's time, and when the oldest trade leaves (Infinity: empty), so a check touches no raw trade.
const W_TAIL = 0
const W_BUYS = 1
const W_SELLS = 2
const W_BUY_NATIVE = 3
const W_BUY_USD = 5
const W_SELL_NATIVE = 7
const W_SELL_USD = 9
const W_REFERENCE = 11
const W_EXPIRES_AT = 12
const W_REFERENCE_AT = 13
const WINDOW_STRIDE = 14

// heapBytes: rough V8 costs of the tape object with its fields and of one typed array with its buffer.
const TAPE_OBJECT_BYTES = 320
const TYPED_ARRAY_BYTES = 190

const timeframeIndex = Object.fromEntries(timeframes.map((timeframe, index) => [timeframe, index])) as Record<
  Timeframe,
  number
>

/** Scratch of raw scans: filled and read within one call, nothing kept between calls (so shared by every tape). */
const scanVolumeScratch = new Float64Array(2)
/**
 * Scratch of `append`, shared by every tape (filled and read within one call, nothing kept
 * between calls): the trade being appended as the tape stores it, the row its time and four
 * series as doubles (a raw row's layout), the words its native and USD volumes.
 */
const incomingRowScratch = new Float64Array(VALUE_STRIDE)
const incomingWordsScratch = new Uint32Array(VOLUME_STRIDE)

export class TradeTape {
  private readonly retainMs: number
  private readonly hourlyRetainMs: number
  private now = -Infinity

  private values: Float64Array = noValues
  private volumes: Uint32Array = noVolumes
  private sides: Uint8Array = noSides
  /** Sequence numbers count trades ever appended; slot i of the arrays is sequence `baseSeq + i`. */
  private baseSeq = 0
  private headSeq = 0
  private endSeq = 0
  /** Time of the newest trimmed trade: fine buckets opening at or before it are incomplete. */
  private rawDroppedThrough = -Infinity
  /** When the oldest raw trade falls out of retention (Infinity: no raw trade). */
  private rawTrimAt = Infinity

  /** Allocated on the first trade; released while every window is empty. */
  private windows: Float64Array | undefined = undefined
  private hourly: CandleHourlySeries | undefined = undefined
  /** Per timeframe, the open bucket's fold, filled by reads (a cache: not in snapshots). */
  private latestCaches: Array<Float64Array | undefined> | undefined = undefined

  private firstPriceUsd = NaN
  private lastPriceUsd = NaN
  private lastTime = NaN
  private lastExpiryAt = -Infinity
  /** `lastPriceUsd` back as the exact Fixed (see fixedFromDouble), converted once per price. */
  private latestPriceFixedOf = NaN
  private latestPriceFixed: Fixed = 0n
  private statsCache: StatsValue | undefined = undefined

  constructor(options?: { readonly retainMs?: number | undefined; readonly hourlyRetainMs?: number | undefined }) {
    // The 24h window subtracts trades as they leave it, so raw trades live at least that long.
    this.retainMs = Math.max(options?.retainMs ?? defaultRetainMs, longestWindow)
    this.hourlyRetainMs = Math.max(options?.hourlyRetainMs ?? defaultHourlyRetainMs, this.retainMs)
  }

  append(
    timestamp: number,
    side: "buy" | "sell",
    priceNative: Fixed,
    priceUsd: Fixed,
    marketCapNative: Fixed,
    marketCapUsd: Fixed,
    volumeNative: Fixed,
    volumeUsd: Fixed
  ): void {
    const time = timestamp
    incomingRowScratch[0] = time
    incomingRowScratch[1] = fixedToDouble(priceNative)
    incomingRowScratch[2] = fixedToDouble(priceUsd)
    incomingRowScratch[3] = fixedToDouble(marketCapNative)
    incomingRowScratch[4] = fixedToDouble(marketCapUsd)
    writeVolumeUnits(incomingWordsScratch, 0, volumeNative)
    writeVolumeUnits(incomingWordsScratch, 2, volumeUsd)
    const isSell = side === "sell"
    if (time < this.lastTime) {
      this.appendLate(isSell)
      return
    }
    if (time > this.now) this.advanceTo(time)
    this.makeRawRoom()
    this.writeIncoming(this.endSeq - this.baseSeq, isSell)
    const seq = this.endSeq
    this.endSeq = seq + 1
    if (this.rawTrimAt === Infinity) this.rawTrimAt = time + this.retainMs

    const native = incomingRowScratch[1]!
    const usd = incomingRowScratch[2]!
    const capNative = incomingRowScratch[3]!
    const capUsd = incomingRowScratch[4]!
    const nativeLow = incomingWordsScratch[0]!
    const nativeHigh = incomingWordsScratch[1]!
    const usdLow = incomingWordsScratch[2]!
    const usdHigh = incomingWordsScratch[3]!
    if (this.hourly === undefined) this.hourly = new CandleHourlySeries()
    this.hourly.add(time, native, usd, capNative, capUsd, nativeLow, nativeHigh, usdLow, usdHigh)

    let windows = this.windows
    if (windows === undefined) {
      // Every window is empty, so each one's reference is the newest trade so far (or none).
      windows = new Float64Array(windowCount * WINDOW_STRIDE)
      for (let w = 0; w < windowCount; w++) {
        windows[w * WINDOW_STRIDE + W_TAIL] = seq
        windows[w * WINDOW_STRIDE + W_REFERENCE] = this.lastPriceUsd
        windows[w * WINDOW_STRIDE + W_REFERENCE_AT] = this.lastTime
        windows[w * WINDOW_STRIDE + W_EXPIRES_AT] = Infinity
      }
      this.windows = windows
    }
    const countAt = isSell ? W_SELLS : W_BUYS
    const nativeAt = isSell ? W_SELL_NATIVE : W_BUY_NATIVE
    const usdAt = isSell ? W_SELL_USD : W_BUY_USD
    for (let w = 0; w < windowCount; w++) {
      const base = w * WINDOW_STRIDE
      if (windows[base + W_EXPIRES_AT] === Infinity) windows[base + W_EXPIRES_AT] = time + windowLengths[w]!
      windows[base + countAt]++
      addSplit(windows, base + nativeAt, nativeLow, nativeHigh)
      addSplit(windows, base + usdAt, usdLow, usdHigh)
    }
    if (Number.isNaN(this.firstPriceUsd)) this.firstPriceUsd = usd
    this.lastPriceUsd = usd
    this.lastTime = time
    this.statsCache = undefined
    // A trade older than now (now moved by advanceTo) may already be outside the short windows,
    // and beyond retention: trimmed at once, as the advanceTo that moved now past it would have.
    if (time < this.now) {
      this.expireWindows()
      if (this.now >= this.rawTrimAt) this.trimRaw(this.now - this.retainMs)
      this.hourly.dropEndedBy(this.now - this.hourlyRetainMs)
    }
  }

  /**
   * A trade older than the token's latest (a late arrival from an indexer), placed at its own
   * time: the raw trades stay in time order (the later ones move up a slot, so this costs what
   * follows it), each window counts it only if its time falls inside, and its hour's candle takes
   * it in order. The latest price stays the latest trade's. A trade older than raw retention
   * reaches only the hourly candles (placed by the times of its hour's open and close trades,
   * CandleHourlySeries.addLate) and the windows' references it would be.
   */
  private appendLate(isSell: boolean): void {
    const time = incomingRowScratch[0]!
    const native = incomingRowScratch[1]!
    const usd = incomingRowScratch[2]!
    const capNative = incomingRowScratch[3]!
    const capUsd = incomingRowScratch[4]!
    const nativeLow = incomingWordsScratch[0]!
    const nativeHigh = incomingWordsScratch[1]!
    const usdLow = incomingWordsScratch[2]!
    const usdHigh = incomingWordsScratch[3]!
    this.statsCache = undefined
    // Open-bucket caches hold raw sequence numbers and folds of hours that may now move.
    this.latestCaches = undefined
    if (this.hourly === undefined) this.hourly = new CandleHourlySeries()
    const windows = this.windows
    if (time <= this.now - this.retainMs) {
      // In no window (each is at most the retention long), and fine buckets this old are already
      // incomplete: only the hourly candles, and the reference of each window (the last trade at
      // or before its start) when it is newer than the reference held (or none is).
      if (time > this.rawDroppedThrough) this.rawDroppedThrough = time
      this.hourly.addLate(time, native, usd, capNative, capUsd, nativeLow, nativeHigh, usdLow, usdHigh)
      if (windows !== undefined) {
        for (let w = 0; w < windowCount; w++) {
          const base = w * WINDOW_STRIDE
          if (Number.isNaN(windows[base + W_REFERENCE]) || time >= windows[base + W_REFERENCE_AT]!) {
            windows[base + W_REFERENCE] = usd
            windows[base + W_REFERENCE_AT] = time
          }
        }
      }
      return
    }
    // Raw trades newer than raw retention are all held, and the latest is later than this one.
    this.makeRawRoom()
    const seq = this.firstRawSeqAfter(time)
    const slot = seq - this.baseSeq
    const used = this.endSeq - this.baseSeq
    this.values.copyWithin((slot + 1) * VALUE_STRIDE, slot * VALUE_STRIDE, used * VALUE_STRIDE)
    this.volumes.copyWithin((slot + 1) * VOLUME_STRIDE, slot * VOLUME_STRIDE, used * VOLUME_STRIDE)
    this.sides.copyWithin(slot + 1, slot, used)
    this.writeIncoming(slot, isSell)
    this.endSeq++
    if (seq === this.headSeq) {
      this.rawTrimAt = time + this.retainMs
      // Older than every trade held, and none was ever trimmed: the token's first trade.
      if (this.rawDroppedThrough === -Infinity) this.firstPriceUsd = usd
    }

    this.hourly.addLate(time, native, usd, capNative, capUsd, nativeLow, nativeHigh, usdLow, usdHigh)

    if (windows === undefined) return // every window empty: this older trade is in none of them
    const countAt = isSell ? W_SELLS : W_BUYS
    const nativeAt = isSell ? W_SELL_NATIVE : W_BUY_NATIVE
    const usdAt = isSell ? W_SELL_USD : W_BUY_USD
    for (let w = 0; w < windowCount; w++) {
      const base = w * WINDOW_STRIDE
      const tail = windows[base + W_TAIL]
      const length = windowLengths[w]!
      if (seq < tail || (seq === tail && time <= this.now - length)) {
        // Outside: before the oldest trade inside. Right before it, it is the newest trade that
        // left the window, so the window's reference price.
        if (seq === tail) {
          windows[base + W_REFERENCE] = usd
          windows[base + W_REFERENCE_AT] = time
        }
        windows[base + W_TAIL] = tail + 1
        continue
      }
      // Inside; right before the oldest trade inside, it is the new oldest.
      if (seq === tail) windows[base + W_EXPIRES_AT] = time + length
      windows[base + countAt]++
      addSplit(windows, base + nativeAt, nativeLow, nativeHigh)
      addSplit(windows, base + usdAt, usdLow, usdHigh)
    }
  }

  /**
   * The latest moment, not after now, at which a trade at `time` left one of the windows (its time
   * plus the longest window it is already past), or -Infinity while it is in all of them. A trade
   * told after the clock passed it (a backfill, a warm-up told at the present) arrives already out
   * of the windows it left by then: that leaving is a change of the token at that moment, which a
   * restart replaying the log without clock ticks records when its clock gets there.
   */
  leftWindowsBy(time: number): number {
    const now = this.now
    // the common case, a trade told as it happens: still in the shortest window
    if (time + windowLengths[0]! > now) return -Infinity
    for (let w = windowCount - 1; w >= 0; w--) {
      const leftAt = time + windowLengths[w]!
      if (leftAt <= now) return leftAt
    }
    return -Infinity
  }

  /** When the trades the last expiring `advanceTo` moved out of a window left it (the latest of them). */
  get expiredAt(): number {
    return this.lastExpiryAt
  }

  /**
   * Moves the window ends to `now` (>= last call), expiring trades; true when any stats figure
   * changed, and then `expiredAt` is when: the moment the last of them left its window.
   */
  advanceTo(now: number): boolean {
    if (!(now > this.now)) return false
    this.now = now
    const changed = this.windows !== undefined && this.expireWindows()
    if (changed) this.statsCache = undefined
    if (now >= this.rawTrimAt) this.trimRaw(now - this.retainMs)
    if (this.hourly !== undefined) this.hourly.dropEndedBy(now - this.hourlyRetainMs)
    const windows = this.windows
    if (windows !== undefined && windows[(windowCount - 1) * WINDOW_STRIDE + W_EXPIRES_AT] === Infinity) {
      this.windows = undefined
    }
    return changed
  }

  /**
   * Windows (now − w, now], now = the latest advanceTo or append time. The answer is shared
   * until the figures change (the engine may read it several times per change): do not mutate.
   */
  stats(): StatsValue {
    if (this.statsCache !== undefined) return this.statsCache
    const stats: StatsValue = {
      "5m": this.windowValue(0),
      "30m": this.windowValue(1),
      "1h": this.windowValue(2),
      "6h": this.windowValue(3),
      "24h": this.windowValue(4)
    }
    this.statsCache = stats
    return stats
  }

  volume24h(): { native: Fixed; usd: Fixed } {
    const windows = this.windows
    if (windows === undefined) return { native: 0n, usd: 0n }
    const base = (windowCount - 1) * WINDOW_STRIDE
    return {
      native: splitSum(windows, base + W_BUY_NATIVE) + splitSum(windows, base + W_SELL_NATIVE),
      usd: splitSum(windows, base + W_BUY_USD) + splitSum(windows, base + W_SELL_USD)
    }
  }

  count24h(): { buys: number; sells: number } {
    const windows = this.windows
    if (windows === undefined) return { buys: 0, sells: 0 }
    const base = (windowCount - 1) * WINDOW_STRIDE
    return { buys: windows[base + W_BUYS], sells: windows[base + W_SELLS] }
  }

  lastTradeAt(): number | undefined {
    return Number.isNaN(this.lastTime) ? undefined : this.lastTime
  }

  /** Candles oldest first under the spec's rules (docs/candles-and-windows.md). */
  candles(query: CandleQuery): Array<CandleValue> {
    const timeframe = query.timeframe
    const size = timeframeMs[timeframe]
    const anchor = bucketAnchor(timeframe)
    const series = seriesIndex(query.metric, query.denomination)
    const limit = candleLimit(query)
    if (limit === 0) return []
    const range = queryTimeRange(size, anchor, query)
    if (isHourAligned(timeframe)) {
      return this.hourly === undefined ? [] : this.hourly.candles(size, anchor, series, range.lowest, range.beyond, limit)
    }
    return this.rawCandles(size, anchor, series, range.lowest, range.beyond, limit)
  }

  /** The bucket of the latest trade: what `spot.candles` pushes after it; equals the last of `candles`. */
  latestCandle(timeframe: Timeframe, metric: CandleMetric, denomination: Denomination): CandleValue | undefined {
    const size = timeframeMs[timeframe]
    const anchor = bucketAnchor(timeframe)
    const series = seriesIndex(metric, denomination)
    if (isHourAligned(timeframe)) {
      return this.hourly === undefined ? undefined : this.hourly.latest(size, anchor, series, this.latestCache(timeframe))
    }
    if (this.endSeq === this.headSeq) return undefined
    const lastTime = this.values[(this.endSeq - 1 - this.baseSeq) * VALUE_STRIDE]
    const bucket = Math.floor((lastTime - anchor) / size) * size + anchor
    if (bucket <= this.rawDroppedThrough) return undefined
    const cache = this.latestCache(timeframe)
    if (cache[0] !== bucket || cache[1] < this.headSeq) {
      cache[0] = bucket
      cache[1] = this.firstRawSeqAtOrAfter(bucket)
      cache[2] = 0
    }
    const values = this.values
    const words = this.volumes
    for (let seq = cache[1]; seq < this.endSeq; seq++) {
      const slot = seq - this.baseSeq
      const at = slot * VALUE_STRIDE
      const wordAt = slot * VOLUME_STRIDE
      foldTrade(
        cache,
        3,
        cache[2] === 0,
        values[at + 1],
        values[at + 2],
        values[at + 3],
        values[at + 4],
        words[wordAt],
        words[wordAt + 1],
        words[wordAt + 2],
        words[wordAt + 3]
      )
      cache[2] = 1
    }
    cache[1] = this.endSeq
    return aggregateCandle(bucket, cache, 3, series)
  }

  /** Approximate retained heap bytes (for the memory benchmark). */
  heapBytes(): number {
    let bytes = TAPE_OBJECT_BYTES
    if (this.values !== noValues) {
      bytes += 3 * TYPED_ARRAY_BYTES + this.values.byteLength + this.volumes.byteLength + this.sides.byteLength
    }
    if (this.windows !== undefined) bytes += TYPED_ARRAY_BYTES + this.windows.byteLength
    if (this.hourly !== undefined) bytes += 64 + this.hourly.heapBytes(TYPED_ARRAY_BYTES)
    if (this.latestCaches !== undefined) {
      bytes += 16 + 8 * this.latestCaches.length
      for (const cache of this.latestCaches) if (cache !== undefined) bytes += TYPED_ARRAY_BYTES + cache.byteLength
    }
    return bytes
  }

  private windowValue(window: number): StatsWindowValue {
    const windows = this.windows
    if (windows === undefined) {
      return {
        priceChangePct: "0",
        volume: { native: "0", usd: "0" },
        buyCount: 0,
        sellCount: 0,
        buyVolume: { native: "0", usd: "0" },
        sellVolume: { native: "0", usd: "0" }
      }
    }
    const base = window * WINDOW_STRIDE
    let reference = windows[base + W_REFERENCE]
    if (Number.isNaN(reference)) reference = this.firstPriceUsd
    const latest = this.lastPriceUsd
    let priceChangePct = "0"
    if (!Number.isNaN(latest) && reference !== latest) {
      if (this.latestPriceFixedOf !== latest) {
        this.latestPriceFixed = fixedFromDouble(latest)
        this.latestPriceFixedOf = latest
      }
      const referenceFixed = fixedFromDouble(reference)
      priceChangePct = percentChangeText(FixedMath.pct(this.latestPriceFixed - referenceFixed, referenceFixed))
    }
    const buyNative = splitUnits(windows, base + W_BUY_NATIVE)
    const buyUsd = splitUnits(windows, base + W_BUY_USD)
    const sellNative = splitUnits(windows, base + W_SELL_NATIVE)
    const sellUsd = splitUnits(windows, base + W_SELL_USD)
    return {
      priceChangePct,
      volume: { native: formatVolumeUnits(buyNative + sellNative), usd: formatVolumeUnits(buyUsd + sellUsd) },
      buyCount: windows[base + W_BUYS],
      sellCount: windows[base + W_SELLS],
      buyVolume: { native: formatVolumeUnits(buyNative), usd: formatVolumeUnits(buyUsd) },
      sellVolume: { native: formatVolumeUnits(sellNative), usd: formatVolumeUnits(sellUsd) }
    }
  }

  /** Subtracts trades that left each window; true when any did (`expiredAt`: the last one's moment). */
  private expireWindows(): boolean {
    const windows = this.windows
    if (windows === undefined) return false
    const values = this.values
    const words = this.volumes
    const sides = this.sides
    let changed = false
    let leftAt = -Infinity
    const now = this.now
    for (let w = 0; w < windowCount; w++) {
      const base = w * WINDOW_STRIDE
      if (now < windows[base + W_EXPIRES_AT]) continue
      const length = windowLengths[w]!
      let tail = windows[base + W_TAIL]
      let expiresAt = Infinity
      while (tail < this.endSeq) {
        const slot = tail - this.baseSeq
        const at = slot * VALUE_STRIDE
        if (values[at] + length > now) {
          expiresAt = values[at] + length
          break
        }
        const wordAt = slot * VOLUME_STRIDE
        if (sides[slot] === 1) {
          windows[base + W_SELLS]--
          subtractSplit(windows, base + W_SELL_NATIVE, words[wordAt], words[wordAt + 1])
          subtractSplit(windows, base + W_SELL_USD, words[wordAt + 2], words[wordAt + 3])
        } else {
          windows[base + W_BUYS]--
          subtractSplit(windows, base + W_BUY_NATIVE, words[wordAt], words[wordAt + 1])
          subtractSplit(windows, base + W_BUY_USD, words[wordAt + 2], words[wordAt + 3])
        }
        windows[base + W_REFERENCE] = values[at + 2]
        windows[base + W_REFERENCE_AT] = values[at]
        if (values[at] + length > leftAt) leftAt = values[at] + length
        tail++
        changed = true
      }
      windows[base + W_TAIL] = tail
      windows[base + W_EXPIRES_AT] = expiresAt
    }
    if (changed) this.lastExpiryAt = leftAt
    return changed
  }

  private trimRaw(cutoff: number): void {
    let head = this.headSeq
    const values = this.values
    let trimAt = Infinity
    while (head < this.endSeq) {
      const time = values[(head - this.baseSeq) * VALUE_STRIDE]
      if (time > cutoff) {
        trimAt = time + this.retainMs
        break
      }
      this.rawDroppedThrough = time
      head++
    }
    this.rawTrimAt = trimAt
    if (head === this.headSeq) return
    this.headSeq = head
    const live = this.endSeq - head
    if (live === 0) {
      // An idle token keeps no raw arrays (and no open-bucket caches).
      this.values = noValues
      this.volumes = noVolumes
      this.sides = noSides
      this.baseSeq = head
      this.latestCaches = undefined
    } else {
      const capacity = this.sides.length
      if (capacity > minimumCapacity && live < capacity / 8) this.reallocateRaw(Math.max(minimumCapacity, live * 2))
    }
  }

  private makeRawRoom(): void {
    const capacity = this.sides.length
    const used = this.endSeq - this.baseSeq
    if (used < capacity) return
    const live = this.endSeq - this.headSeq
    if (capacity > 0 && live <= capacity * 0.75) {
      // A quarter or more of the slots hold trimmed trades: slide the live ones down instead of
      // growing. At least a quarter of the capacity is then free, so each append copies at most
      // three trades amortized, and a steady 24h tape needs at most 4/3 of its live size.
      const from = this.headSeq - this.baseSeq
      this.values.copyWithin(0, from * VALUE_STRIDE, used * VALUE_STRIDE)
      this.volumes.copyWithin(0, from * VOLUME_STRIDE, used * VOLUME_STRIDE)
      this.sides.copyWithin(0, from, used)
      this.baseSeq = this.headSeq
    } else {
      this.reallocateRaw(Math.max(minimumCapacity, Math.ceil(capacity * 1.5)))
    }
  }

  private reallocateRaw(capacity: number): void {
    const from = this.headSeq - this.baseSeq
    const to = this.endSeq - this.baseSeq
    // One backing store for the three columns: each typed-array allocation of its own costs more
    // than its bytes (a store, its bookkeeping and its sweep), and every token's tape grows.
    const buffer = new ArrayBuffer(capacity * RAW_BYTES)
    const values = new Float64Array(buffer, 0, capacity * VALUE_STRIDE)
    const volumes = new Uint32Array(buffer, capacity * VALUE_STRIDE * 8, capacity * VOLUME_STRIDE)
    const sides = new Uint8Array(buffer, capacity * (VALUE_STRIDE * 8 + VOLUME_STRIDE * 4), capacity)
    values.set(this.values.subarray(from * VALUE_STRIDE, to * VALUE_STRIDE))
    volumes.set(this.volumes.subarray(from * VOLUME_STRIDE, to * VOLUME_STRIDE))
    sides.set(this.sides.subarray(from, to))
    this.values = values
    this.volumes = volumes
    this.sides = sides
    this.baseSeq = this.headSeq
  }

  /** Writes the incoming trade (`incomingRowScratch`, `incomingWordsScratch`) into raw slot `slot`. */
  private writeIncoming(slot: number, isSell: boolean): void {
    // Element by element: `set` costs more than these few stores (every trade comes here).
    const values = this.values
    const at = slot * VALUE_STRIDE
    for (let k = 0; k < VALUE_STRIDE; k++) values[at + k] = incomingRowScratch[k]!
    const words = this.volumes
    const wordAt = slot * VOLUME_STRIDE
    for (let k = 0; k < VOLUME_STRIDE; k++) words[wordAt + k] = incomingWordsScratch[k]!
    this.sides[slot] = isSell ? 1 : 0
  }

  /** The first raw trade later than `time` (trades at `time` stay before a late one: arrival order). */
  private firstRawSeqAfter(time: number): number {
    let low = this.headSeq
    let high = this.endSeq
    while (low < high) {
      const mid = Math.floor((low + high) / 2)
      if (this.values[(mid - this.baseSeq) * VALUE_STRIDE] <= time) low = mid + 1
      else high = mid
    }
    return low
  }

  private firstRawSeqAtOrAfter(time: number): number {
    let low = this.headSeq
    let high = this.endSeq
    while (low < high) {
      const mid = Math.floor((low + high) / 2)
      if (this.values[(mid - this.baseSeq) * VALUE_STRIDE] < time) low = mid + 1
      else high = mid
    }
    return low
  }

  private rawCandles(
    size: number,
    anchor: number,
    series: number,
    lowest: number,
    beyond: number,
    limit: number
  ): Array<CandleValue> {
    const out: Array<CandleValue> = []
    const complete = firstBucketAfter(size, anchor, this.rawDroppedThrough)
    const floor = lowest > complete ? lowest : complete
    const values = this.values
    const words = this.volumes
    const valueAt = 1 + series
    const wordOffset = series % 2 === 0 ? 0 : 2 // native or USD words, as in seriesIndex
    let seq = this.firstRawSeqAtOrAfter(beyond) - 1
    let bucket = NaN
    let open = 0
    let high = 0
    let low = 0
    let close = 0
    while (seq >= this.headSeq) {
      const slot = seq - this.baseSeq
      const time = values[slot * VALUE_STRIDE]
      if (time < floor) break
      const value = values[slot * VALUE_STRIDE + valueAt]
      const wordAt = slot * VOLUME_STRIDE + wordOffset
      if (!(time >= bucket)) {
        if (bucket === bucket) {
          out.push({ time: bucket, open, high, low, close, volume: splitToNumber(scanVolumeScratch[0], scanVolumeScratch[1]) })
          if (out.length >= limit) {
            bucket = NaN
            break
          }
        }
        bucket = Math.floor((time - anchor) / size) * size + anchor
        open = high = low = close = value
        scanVolumeScratch[0] = words[wordAt]
        scanVolumeScratch[1] = words[wordAt + 1]
      } else {
        // Walking backwards: each earlier trade's value replaces the bucket's open.
        open = value
        if (value > high) high = value
        if (value < low) low = value
        addSplit(scanVolumeScratch, 0, words[wordAt], words[wordAt + 1])
      }
      seq--
    }
    if (bucket === bucket) {
      out.push({ time: bucket, open, high, low, close, volume: splitToNumber(scanVolumeScratch[0], scanVolumeScratch[1]) })
    }
    return out.reverse()
  }

  private latestCache(timeframe: Timeframe): Float64Array {
    if (this.latestCaches === undefined) this.latestCaches = []
    const index = timeframeIndex[timeframe]
    let cache = this.latestCaches[index]
    if (cache === undefined) {
      cache = new Float64Array(LATEST_CACHE_SLOTS)
      cache[0] = NaN
      this.latestCaches[index] = cache
    }
    return cache
  }
}

/**
 * A price change in percent, printed only to the digits its inputs support. The tape keeps prices
 * as doubles (read back to 15 significant digits), so a change is exact to about 10^-12 × (1 +
 * |pct| / 100): it is printed with 10 decimals while |pct| is under 100, one fewer for each further
 * integer digit of |pct| / 100 (9 under 1,000%, 8 under 10,000%, ...), truncated toward zero. All
 * 18 decimals would show noise from about the 13th significant digit on, against exact figures.
 */
export const percentChangeText = (pct: Fixed): string => {
  const hundreds = (pct < 0n ? -pct : pct) / (100n * FixedMath.ONE)
  const places = Math.max(0, 10 - (hundreds === 0n ? 0 : hundreds.toString().length))
  return FixedMath.formatPlaces(pct, places)
}

const splitSum = (sums: Float64Array, at: number): Fixed => splitToFixed(sums[at], sums[at + 1])
const splitUnits = (sums: Float64Array, at: number): bigint => splitToUnits(sums[at], sums[at + 1])
