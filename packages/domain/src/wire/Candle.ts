/**
 * Candles (spec "Candle", "spot.candles"): the one object whose values are JSON numbers rather
 * than decimal strings.
 */
import { Schema } from "effect"
import { TimestampMs } from "./Common.js"

export const timeframes = ["1s", "5s", "15s", "30s", "1m", "3m", "5m", "15m", "30m", "1h", "4h", "6h", "12h", "1d", "7d"] as const

export const Timeframe = Schema.Literals(timeframes).annotate({
  identifier: "Timeframe",
  description: "Candle bucket width"
})
export type Timeframe = typeof Timeframe.Type

export const CandleMetric = Schema.Literals(["price", "marketCap"]).annotate({
  identifier: "CandleMetric",
  description: "Value the candle tracks"
})
export type CandleMetric = typeof CandleMetric.Type

export const Denomination = Schema.Literals(["usd", "native"]).annotate({
  identifier: "Denomination",
  description: "Unit of candle values and volume: US dollars or the chain's native unit"
})
export type Denomination = typeof Denomination.Type

export const Candle = Schema.Struct({
  time: TimestampMs.annotateKey({ description: "The bucket's open time" }),
  open: Schema.Finite.annotate({ description: "First value in the bucket" }),
  high: Schema.Finite.annotate({ description: "Highest value in the bucket" }),
  low: Schema.Finite.annotate({ description: "Lowest value in the bucket" }),
  close: Schema.Finite.annotate({ description: "Latest value in the bucket" }),
  volume: Schema.Finite.annotate({ description: "Volume in the requested denomination" })
}).annotate({
  identifier: "Candle",
  description: "One bucket of the requested metric; values are JSON numbers, not decimal strings"
})
export type Candle = typeof Candle.Type

/** Body of `GET /v1/tokens/{chain}/{address}/ohlcv` (the spec leaves the envelope open; this is the service's). */
export const CandlesResponse = Schema.Struct({
  candles: Schema.Array(Candle).annotate({ description: "Candles, oldest first" })
}).annotate({ identifier: "CandlesResponse", description: "Candles, oldest first" })
export type CandlesResponse = typeof CandlesResponse.Type
