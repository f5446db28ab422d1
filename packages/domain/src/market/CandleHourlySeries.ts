/**
 * Hourly candle aggregates of one token, kept far longer than the raw trade tape: every
 * timeframe of an hour or more (1h, 4h, 6h, 12h, 1d, 7d) is a fold of these hours, so those
 * candles stay correct after raw trades are trimmed. Filled on every append, not at trim time,
 * so a coarse bucket is the same fold whether its trades are still raw or not.
 */
import {
  AGGREGATE_SLOTS,
  aggregateCandle,
  CLOSE,
  foldAggregate,
  foldTrade,
  foldTradeAmong,
  HIGH,
  LOW,
  OPEN,
  volumeSlot
} from "./CandleAggregate.js"
import type { CandleValue } from "./Candles.js"
import { hourMs } from "./Candles.js"
import { addSplit, splitToNumber } from "./TapeNumbers.js"

/**
 * One hour: its open time, an aggregate (see CandleAggregate.ts), then the times of the trades
 * its open and close are (`FIRST_AT`, `LAST_AT`). 184 bytes.
 */
const FIRST_AT = 1 + AGGREGATE_SLOTS
const LAST_AT = FIRST_AT + 1
const STRIDE = LAST_AT + 1
const minimumCapacity = 2
const noEntries = new Float64Array(0)

/** Slots of a cached open bucket (see `latest`): bucket time, next seq to fold, has-data flag, aggregate. */
export const LATEST_CACHE_SLOTS = 3 + AGGREGATE_SLOTS
const CACHE_AGGREGATE = 3

/** Scratch of scans, so a query allocates only its answer: filled and read within one call, nothing kept between calls. */
const scanVolumeScratch = new Float64Array(2)

export class CandleHourlySeries {
  private entries: Float64Array = noEntries
  /** Sequence numbers count hours ever added; entry i of `entries` is sequence `baseSeq + i`. */
  private baseSeq = 0
  private headSeq = 0
  private endSeq = 0
  /**
   * Open time of the newest dropped hour. A bucket opening at or before it lost hours, so it is
   * left out of answers rather than shown incomplete.
   */
  private droppedThrough = -Infinity
  /** When the oldest hour ends (Infinity: no hours), so most calls of `dropEndedBy` read one field. */
  private headHourEnd = Infinity

  get hourCount(): number {
    return this.endSeq - this.headSeq
  }

  heapBytes(typedArrayOverhead: number): number {
    return this.entries.byteLength + (this.entries === noEntries ? 0 : typedArrayOverhead)
  }

  /** Folds one trade (times non-decreasing) into its hour. */
  add(
    time: number,
    priceNative: number,
    priceUsd: number,
    marketCapNative: number,
    marketCapUsd: number,
    nativeLow: number,
    nativeHigh: number,
    usdLow: number,
    usdHigh: number
  ): void {
    const hourStart = Math.floor(time / hourMs) * hourMs
    if (this.endSeq > this.headSeq) {
      const last = (this.endSeq - 1 - this.baseSeq) * STRIDE
      if (this.entries[last] === hourStart) {
        this.entries[last + LAST_AT] = time
        foldTrade(
          this.entries,
          last + 1,
          false,
          priceNative,
          priceUsd,
          marketCapNative,
          marketCapUsd,
          nativeLow,
          nativeHigh,
          usdLow,
          usdHigh
        )
        return
      }
    }
    this.makeRoom()
    if (this.headHourEnd === Infinity) this.headHourEnd = hourStart + hourMs
    const at = (this.endSeq - this.baseSeq) * STRIDE
    this.entries[at] = hourStart
    this.entries[at + FIRST_AT] = time
    this.entries[at + LAST_AT] = time
    foldTrade(
      this.entries,
      at + 1,
      true,
      priceNative,
      priceUsd,
      marketCapNative,
      marketCapUsd,
      nativeLow,
      nativeHigh,
      usdLow,
      usdHigh
    )
    this.endSeq++
  }

  /**
   * Folds a trade that arrived after later ones (a late trade) into its hour, wherever that hour
   * is: a new hour is inserted in time order; in an existing hour high, low and volume take it,
   * and it becomes the open when it is earlier than the hour's open trade, and the close when it
   * is not earlier than the hour's close trade (a trade of the same millisecond arrived before
   * it: in time order it comes after, as the raw tape places it). Decided from the hour's own
   * times, so the answer is the same whether the hour's raw trades are still held or not (a
   * replay of the log, with an engine clock of its own, folds the same candles). An hour already
   * dropped ignores it. The caller resets any cache built over these hours (`latest`'s).
   */
  addLate(
    time: number,
    priceNative: number,
    priceUsd: number,
    marketCapNative: number,
    marketCapUsd: number,
    nativeLow: number,
    nativeHigh: number,
    usdLow: number,
    usdHigh: number
  ): void {
    const hourStart = Math.floor(time / hourMs) * hourMs
    if (hourStart <= this.droppedThrough) return
    const seq = this.firstSeqAtOrAfter(hourStart)
    if (seq < this.endSeq && this.entries[(seq - this.baseSeq) * STRIDE] === hourStart) {
      const at = (seq - this.baseSeq) * STRIDE
      const entries = this.entries
      const becomesOpen = time < entries[at + FIRST_AT]
      const becomesClose = time >= entries[at + LAST_AT]
      if (becomesOpen) entries[at + FIRST_AT] = time
      if (becomesClose) entries[at + LAST_AT] = time
      foldTradeAmong(entries, at + 1, becomesOpen, becomesClose, priceNative, priceUsd, marketCapNative, marketCapUsd, nativeLow, nativeHigh, usdLow, usdHigh)
      return
    }
    // A new hour before `seq`: open a slot there by moving the later hours up one.
    this.makeRoom()
    const at = (seq - this.baseSeq) * STRIDE
    const end = (this.endSeq - this.baseSeq) * STRIDE
    this.entries.copyWithin(at + STRIDE, at, end)
    this.entries[at] = hourStart
    this.entries[at + FIRST_AT] = time
    this.entries[at + LAST_AT] = time
    foldTrade(this.entries, at + 1, true, priceNative, priceUsd, marketCapNative, marketCapUsd, nativeLow, nativeHigh, usdLow, usdHigh)
    this.endSeq++
    if (seq === this.headSeq) this.headHourEnd = hourStart + hourMs
  }

  /** Drops the hours that ended at or before `cutoff`. */
  dropEndedBy(cutoff: number): void {
    if (cutoff < this.headHourEnd) return
    let head = this.headSeq
    let headHourEnd = Infinity
    while (head < this.endSeq) {
      const hourStart = this.entries[(head - this.baseSeq) * STRIDE]
      if (hourStart + hourMs > cutoff) {
        headHourEnd = hourStart + hourMs
        break
      }
      this.droppedThrough = hourStart
      head++
    }
    this.headHourEnd = headHourEnd
    if (head === this.headSeq) return
    this.headSeq = head
    const live = this.endSeq - head
    if (live === 0) {
      this.entries = noEntries
      this.baseSeq = head
    } else if (this.capacity() > minimumCapacity && live < this.capacity() / 8) {
      this.reallocate(Math.max(minimumCapacity, live * 2))
    }
  }

  /**
   * Candles of buckets `size` long (anchored at `anchor`, a multiple of an hour) for the hours in
   * [lowest, beyond), newest `limit` kept, oldest first.
   */
  candles(
    size: number,
    anchor: number,
    series: number,
    lowest: number,
    beyond: number,
    limit: number
  ): Array<CandleValue> {
    const out: Array<CandleValue> = []
    if (limit <= 0) return out
    const complete = firstBucketAfter(size, anchor, this.droppedThrough)
    const floor = lowest > complete ? lowest : complete
    const entries = this.entries
    const volumeAt = 1 + volumeSlot(series)
    let seq = this.firstSeqAtOrAfter(beyond) - 1
    let bucket = NaN
    let open = 0
    let high = 0
    let low = 0
    let close = 0
    while (seq >= this.headSeq) {
      const at = (seq - this.baseSeq) * STRIDE
      const hourStart = entries[at]
      if (hourStart < floor) break
      if (!(hourStart >= bucket)) {
        if (bucket === bucket) {
          out.push({ time: bucket, open, high, low, close, volume: splitToNumber(scanVolumeScratch[0], scanVolumeScratch[1]) })
          if (out.length >= limit) {
            bucket = NaN
            break
          }
        }
        bucket = Math.floor((hourStart - anchor) / size) * size + anchor
        open = entries[at + 1 + OPEN + series]
        high = entries[at + 1 + HIGH + series]
        low = entries[at + 1 + LOW + series]
        close = entries[at + 1 + CLOSE + series]
        scanVolumeScratch[0] = entries[at + volumeAt]
        scanVolumeScratch[1] = entries[at + volumeAt + 1]
      } else {
        // Walking backwards: each earlier hour's open replaces the bucket's open.
        open = entries[at + 1 + OPEN + series]
        const hourHigh = entries[at + 1 + HIGH + series]
        const hourLow = entries[at + 1 + LOW + series]
        if (hourHigh > high) high = hourHigh
        if (hourLow < low) low = hourLow
        addSplit(scanVolumeScratch, 0, entries[at + volumeAt], entries[at + volumeAt + 1])
      }
      seq--
    }
    if (bucket === bucket) {
      out.push({ time: bucket, open, high, low, close, volume: splitToNumber(scanVolumeScratch[0], scanVolumeScratch[1]) })
    }
    return out.reverse()
  }

  /**
   * The bucket holding the newest hour, or undefined when it lost hours to retention. `cache`
   * (LATEST_CACHE_SLOTS long, one per timeframe) keeps the fold of the bucket's finished hours,
   * so a call per trade costs O(1) amortized instead of refolding up to 168 hours.
   */
  latest(size: number, anchor: number, series: number, cache: Float64Array): CandleValue | undefined {
    if (this.endSeq === this.headSeq) return undefined
    const lastSeq = this.endSeq - 1
    const lastAt = (lastSeq - this.baseSeq) * STRIDE
    const bucket = Math.floor((this.entries[lastAt] - anchor) / size) * size + anchor
    if (bucket <= this.droppedThrough) return undefined
    if (cache[0] !== bucket || cache[1] < this.headSeq) {
      cache[0] = bucket
      cache[1] = this.firstSeqAtOrAfter(bucket)
      cache[2] = 0
    }
    // Hours before the newest are final; the newest still changes, so it is combined per call.
    for (let seq = cache[1]; seq < lastSeq; seq++) {
      foldAggregate(cache, CACHE_AGGREGATE, cache[2] === 0, this.entries, (seq - this.baseSeq) * STRIDE + 1)
      cache[2] = 1
    }
    if (cache[1] < lastSeq) cache[1] = lastSeq
    if (cache[2] === 0) return aggregateCandle(bucket, this.entries, lastAt + 1, series)
    const hour = lastAt + 1
    const folded = CACHE_AGGREGATE
    const hourHigh = this.entries[hour + HIGH + series]
    const hourLow = this.entries[hour + LOW + series]
    const foldedHigh = cache[folded + HIGH + series]
    const foldedLow = cache[folded + LOW + series]
    const volume = volumeSlot(series)
    // Each low half is below 2^52 in magnitude, so their sum is still an exact double.
    return {
      time: bucket,
      open: cache[folded + OPEN + series],
      high: hourHigh > foldedHigh ? hourHigh : foldedHigh,
      low: hourLow < foldedLow ? hourLow : foldedLow,
      close: this.entries[hour + CLOSE + series],
      volume: splitToNumber(
        cache[folded + volume] + this.entries[hour + volume],
        cache[folded + volume + 1] + this.entries[hour + volume + 1]
      )
    }
  }

  private firstSeqAtOrAfter(time: number): number {
    let low = this.headSeq
    let high = this.endSeq
    while (low < high) {
      const mid = Math.floor((low + high) / 2)
      if (this.entries[(mid - this.baseSeq) * STRIDE] < time) low = mid + 1
      else high = mid
    }
    return low
  }

  private capacity(): number {
    return this.entries.length / STRIDE
  }

  private makeRoom(): void {
    const capacity = this.capacity()
    if (this.endSeq - this.baseSeq < capacity) return
    const live = this.endSeq - this.headSeq
    if (capacity > 0 && live <= capacity * 0.75) {
      this.entries.copyWithin(0, (this.headSeq - this.baseSeq) * STRIDE, (this.endSeq - this.baseSeq) * STRIDE)
      this.baseSeq = this.headSeq
    } else {
      this.reallocate(Math.max(minimumCapacity, Math.ceil(capacity * 1.5)))
    }
  }

  private reallocate(capacity: number): void {
    const next = new Float64Array(capacity * STRIDE)
    const from = (this.headSeq - this.baseSeq) * STRIDE
    const to = (this.endSeq - this.baseSeq) * STRIDE
    for (let i = from; i < to; i++) next[i - from] = this.entries[i]
    this.entries = next
    this.baseSeq = this.headSeq
  }
}

/** The first bucket opening after `time` (every bucket opening later holds nothing at or before it). */
export const firstBucketAfter = (size: number, anchor: number, time: number): number =>
  time === -Infinity ? -Infinity : Math.floor((time - anchor) / size) * size + anchor + size
