/**
 * What the simulator's warm-up was, kept in the data directory (`warm-up.json`) while it runs and
 * after: its options (which fix its events, ids included) and whether it completed. A start on a
 * log with history does not warm up again; so a warm-up a crash or `kill -9` interrupts would
 * leave the market short for good (as few as 115 tokens of 589). A start that finds the record
 * incomplete replays the same warm-up through ingest: what the log holds comes back as duplicates,
 * the rest is appended (docs/simulator.md, "Warm-up").
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { SimulatorFeed } from "@spot/application"

export interface WarmUpRecord {
  readonly seed: number
  readonly tradesPerSecond: number
  readonly launchesPerMinute: number
  readonly warmUpMs: number
  readonly warmUpEnd: number
  readonly complete: boolean
}

export const fileIn = (dataDir: string): string => join(dataDir, "warm-up.json")

/** The record of the data directory's warm-up; undefined when there is none (or it cannot be read). */
export const read = (dataDir: string): WarmUpRecord | undefined => {
  try {
    const r = JSON.parse(readFileSync(fileIn(dataDir), "utf8")) as Partial<WarmUpRecord>
    const numbers = [r.seed, r.tradesPerSecond, r.launchesPerMinute, r.warmUpMs, r.warmUpEnd]
    return numbers.every((n) => typeof n === "number" && Number.isFinite(n)) && typeof r.complete === "boolean" ? (r as WarmUpRecord) : undefined
  } catch {
    return undefined
  }
}

/** Writes the record whole (a temporary file renamed over it: never half a record). */
export const write = (dataDir: string, record: WarmUpRecord): void => {
  mkdirSync(dataDir, { recursive: true })
  const file = fileIn(dataDir)
  writeFileSync(`${file}.tmp`, JSON.stringify(record))
  renameSync(`${file}.tmp`, file)
}

/** The options that replay `record`'s warm-up exactly. */
export const optionsOf = (record: WarmUpRecord, tickMs: number): SimulatorFeed.SimulatorFeedOptions => ({
  seed: record.seed,
  tradesPerSecond: record.tradesPerSecond,
  launchesPerMinute: record.launchesPerMinute,
  warmUpMs: record.warmUpMs,
  warmUpEnd: record.warmUpEnd,
  tickMs
})
