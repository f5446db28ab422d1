/**
 * Port: where the simulator's warm-up record is kept (`WarmUpRecord`): one record, the data
 * directory's, read at start-up and written before and after a fresh log's warm-up (MarketStartup).
 */
import { Context, Effect, Layer } from "effect"
import type { WarmUpRecord } from "../WarmUpRecord.js"

export interface WarmUpRecordsShape {
  /** The kept record; undefined when there is none (or it cannot be read). */
  readonly read: Effect.Effect<WarmUpRecord | undefined>
  /** Keeps `record` whole in place of the previous one (never half a record). */
  readonly write: (record: WarmUpRecord) => Effect.Effect<void>
}

/** A record kept in memory, for a test that keeps its handle: `record` is the kept one. */
export interface MemoryWarmUpRecords extends WarmUpRecordsShape {
  record: WarmUpRecord | undefined
}

const makeMemory = (initial?: WarmUpRecord): MemoryWarmUpRecords => {
  const records: MemoryWarmUpRecords = {
    record: initial,
    read: Effect.sync(() => records.record),
    write: (record) => Effect.sync(() => void (records.record = record))
  }
  return records
}

export class WarmUpRecords extends Context.Service<WarmUpRecords, WarmUpRecordsShape>()("@spot/application/WarmUpRecords") {
  /** A record in memory (none, or `initial`), for a test that keeps its handle (`Layer.succeed(WarmUpRecords, records)`). */
  static readonly makeMemory: (initial?: WarmUpRecord) => MemoryWarmUpRecords = makeMemory
  /** No record yet, in memory, each time the layer is built: for tests and for running without a data directory. */
  static readonly layerMemory: Layer.Layer<WarmUpRecords> = Layer.sync(WarmUpRecords, () => makeMemory())
}
