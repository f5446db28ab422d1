/**
 * What the simulator's warm-up was, kept while it runs and after (the `WarmUpRecords` port): its
 * options (which fix its events, ids included) and whether it completed. A start on a log with
 * history does not warm up again; so a warm-up a crash or `kill -9` interrupts would leave the
 * market short for good (as few as 115 tokens of 589). A start that finds the record incomplete
 * replays the same warm-up through ingest: what the log holds comes back as duplicates, the rest
 * is appended (docs/simulator.md, "Warm-up"; MarketStartup).
 */
import type { SimulatorFeedOptions } from "./SimulatorFeed.js"

export interface WarmUpRecord {
  readonly seed: number
  readonly tradesPerSecond: number
  readonly launchesPerMinute: number
  readonly warmUpMs: number
  readonly warmUpEnd: number
  readonly complete: boolean
}

/** `value` as a record when it is one (every number finite, `complete` a boolean), else undefined. */
export const fromUnknown = (value: unknown): WarmUpRecord | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const r = value as Partial<WarmUpRecord>
  const numbers = [r.seed, r.tradesPerSecond, r.launchesPerMinute, r.warmUpMs, r.warmUpEnd]
  return numbers.every((n) => typeof n === "number" && Number.isFinite(n)) && typeof r.complete === "boolean" ? (r as WarmUpRecord) : undefined
}

/** The record of a fresh log's warm-up with `options`, ending at `warmUpEnd`: not yet complete. */
export const beginning = (options: SimulatorFeedOptions, warmUpEnd: number): WarmUpRecord => ({
  seed: options.seed,
  tradesPerSecond: options.tradesPerSecond,
  launchesPerMinute: options.launchesPerMinute,
  warmUpMs: options.warmUpMs,
  warmUpEnd,
  complete: false
})

/** The options that replay `record`'s warm-up exactly. */
export const optionsOf = (record: WarmUpRecord, tickMs: number): SimulatorFeedOptions => ({
  seed: record.seed,
  tradesPerSecond: record.tradesPerSecond,
  launchesPerMinute: record.launchesPerMinute,
  warmUpMs: record.warmUpMs,
  warmUpEnd: record.warmUpEnd,
  tickMs
})
