/**
 * Candle vocabulary shared by the trade tape, the REST `ohlcv` read and the `spot.candles`
 * stream: timeframes, bucket alignment and the query rules of the spec. Rules and their
 * reasons: docs/candles-and-windows.md.
 */

export type Timeframe =
  | "1s"
  | "5s"
  | "15s"
  | "30s"
  | "1m"
  | "3m"
  | "5m"
  | "15m"
  | "30m"
  | "1h"
  | "4h"
  | "6h"
  | "12h"
  | "1d"
  | "7d"

export const timeframes: ReadonlyArray<Timeframe> = [
  "1s",
  "5s",
  "15s",
  "30s",
  "1m",
  "3m",
  "5m",
  "15m",
  "30m",
  "1h",
  "4h",
  "6h",
  "12h",
  "1d",
  "7d"
]

const second = 1_000
const minute = 60 * second
const hour = 60 * minute
const day = 24 * hour

export const timeframeMs: Readonly<Record<Timeframe, number>> = {
  "1s": second,
  "5s": 5 * second,
  "15s": 15 * second,
  "30s": 30 * second,
  "1m": minute,
  "3m": 3 * minute,
  "5m": 5 * minute,
  "15m": 15 * minute,
  "30m": 30 * minute,
  "1h": hour,
  "4h": 4 * hour,
  "6h": 6 * hour,
  "12h": 12 * hour,
  "1d": day,
  "7d": 7 * day
}

export const hourMs = hour

/**
 * Weeks start on Monday 00:00 UTC like the providers' weekly bars; plain `floor(t / size) * size`
 * would start them on Thursday, because 1970-01-01 was a Thursday. 1970-01-05 was a Monday.
 */
export const weekAnchorMs = 4 * day

/** Where a timeframe's buckets are anchored: 0 (the epoch) for all but `7d`. */
export const bucketAnchor = (timeframe: Timeframe): number => (timeframe === "7d" ? weekAnchorMs : 0)

/**
 * Open time of the bucket holding `t`: `floor(t / size) * size` in UTC, and for `7d` the Monday
 * 00:00 UTC starting the week.
 */
export const bucketStart = (timeframe: Timeframe, t: number): number => {
  const size = timeframeMs[timeframe]
  const anchor = timeframe === "7d" ? weekAnchorMs : 0
  return Math.floor((t - anchor) / size) * size + anchor
}

/** Timeframes at least an hour long are folds of hours and are kept beyond the raw tape. */
export const isHourAligned = (timeframe: Timeframe): boolean => timeframeMs[timeframe] >= hour

export type CandleMetric = "price" | "marketCap"
export type Denomination = "usd" | "native"

export interface CandleValue {
  readonly time: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: number
}

export interface CandleQuery {
  readonly timeframe: Timeframe
  readonly metric: CandleMetric
  readonly denomination: Denomination
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly countBack?: number | undefined
}

/** Spec limits: 500 candles by default, never more than 5,000 in one answer. */
export const defaultCandleCount = 500
export const maxCandleCount = 5_000

/**
 * How many candles a query may return, newest kept: `countBack` (clamped to 0..5,000; refusing
 * more than 5,000 is the use case's job), else 500 when `from` is absent, else 5,000.
 */
export const candleLimit = (query: CandleQuery): number => {
  const countBack = query.countBack
  if (countBack !== undefined) {
    if (!(countBack > 0)) return 0
    return Math.min(Math.floor(countBack), maxCandleCount)
  }
  return query.from === undefined ? defaultCandleCount : maxCandleCount
}

/** The first bucket open time at or after `t`. */
export const alignUp = (size: number, anchor: number, t: number): number => {
  const start = Math.floor((t - anchor) / size) * size + anchor
  return start === t ? t : start + size
}

/**
 * The range of trade (or hour) times whose buckets a query covers: buckets with open time in
 * [from, to) — `from` inclusive, `to` exclusive, both on the bucket's open time. A bucket is
 * wholly in or wholly out, so the trade range is [alignUp(from), alignUp(to)).
 */
export const queryTimeRange = (
  size: number,
  anchor: number,
  query: CandleQuery
): { readonly lowest: number; readonly beyond: number } => {
  const from = query.from
  const to = query.to
  return {
    lowest: from === undefined || !Number.isFinite(from) ? -Infinity : alignUp(size, anchor, from),
    beyond: to === undefined || !Number.isFinite(to) ? Infinity : alignUp(size, anchor, to)
  }
}

/** Index of the JSON-number column for a metric in a denomination (see the tape's layout). */
export const seriesIndex = (metric: CandleMetric, denomination: Denomination): number =>
  (metric === "price" ? 0 : 2) + (denomination === "native" ? 0 : 1)
