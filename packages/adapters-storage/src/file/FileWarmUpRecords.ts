/**
 * The application's `WarmUpRecords` as a file in the data directory, `warm-up.json`: the record's
 * JSON, replaced whole (a temporary file renamed over it: never half a record).
 */
import { Effect, Layer } from "effect"
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { WarmUpRecord, WarmUpRecords } from "@spot/application"

export interface FileWarmUpRecordsOptions {
  readonly dataDir: string
}

/** Where the record is kept in a data directory. */
export const fileIn = (dataDir: string): string => join(dataDir, "warm-up.json")

/** The record of the data directory's warm-up; undefined when there is none (or it cannot be read). */
export const read = (dataDir: string): WarmUpRecord.WarmUpRecord | undefined => {
  try {
    return WarmUpRecord.fromUnknown(JSON.parse(readFileSync(fileIn(dataDir), "utf8")))
  } catch {
    return undefined
  }
}

/** Writes the record whole (a temporary file renamed over it: never half a record). */
export const write = (dataDir: string, record: WarmUpRecord.WarmUpRecord): void => {
  mkdirSync(dataDir, { recursive: true })
  const file = fileIn(dataDir)
  writeFileSync(`${file}.tmp`, JSON.stringify(record))
  renameSync(`${file}.tmp`, file)
}

/** The record kept in `dataDir` (a write that fails is a defect, as a data directory that cannot be written is). */
export const layer = (options: FileWarmUpRecordsOptions): Layer.Layer<WarmUpRecords> =>
  Layer.succeed(WarmUpRecords, {
    read: Effect.sync(() => read(options.dataDir)),
    write: (record) => Effect.sync(() => write(options.dataDir, record))
  })
