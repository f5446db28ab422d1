/**
 * Start-up as a use case, on the ports' memory layers: a fresh log's warm-up is recorded before it
 * starts and marked complete after it; a warm-up the log began with and a stop interrupted is
 * finished through ingest; a record of another log's warm-up is left as it was.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { EventStore, Ingest, Market, MarketSimulation, MarketStartup, Snapshots, WarmUpRecord, WarmUpRecords } from "@spot/application"
import { MarketSimulator } from "@spot/simulator"

const simulator = { seed: 5, tradesPerSecond: 20, launchesPerMinute: 30, warmUpMs: 2 * 60_000, tickMs: 60_000 }
const simulation = Layer.succeed(MarketSimulation, { open: (settings) => new MarketSimulator(settings) })
/** Snapshots off: a full replay, nothing taken; how many were asked for. */
const snapshotsOff = () => {
  const asked = { takeHere: 0, startPeriodic: 0 }
  const skipped: Snapshots.TakeOutcome = { _tag: "Skipped", reason: "off" }
  const layer = Layer.succeed(Snapshots.Snapshots, {
    restore: Effect.succeed<Snapshots.RestoreOutcome>({ _tag: "FullReplay", reasons: [] }),
    take: Effect.succeed(skipped),
    takeHere: Effect.sync(() => (asked.takeHere++, skipped)),
    startPeriodic: Effect.sync(() => void asked.startPeriodic++)
  })
  return { asked, layer }
}

/** Start-up on `store` and `records` with a fresh market, snapshots off; then the log's events. */
const startOn = (store: EventStore["Service"], records: WarmUpRecords["Service"], snapshots: Layer.Layer<Snapshots.Snapshots>) =>
  Effect.gen(function*() {
    yield* MarketStartup.startMarket({ simulator, announce: false })
    const chunks = yield* Stream.runCollect(store.replay(0, 100_000))
    return chunks.flat()
  }).pipe(
    Effect.orDie,
    Effect.scoped,
    Effect.provide(
      Layer.mergeAll(snapshots, simulation, Layer.succeed(WarmUpRecords, records)).pipe(
        Layer.provideMerge(Ingest.layer.pipe(Layer.provideMerge(Layer.merge(Market.layer(), Layer.succeed(EventStore, store)))))
      )
    )
  )

describe("MarketStartup", () => {
  it("resumedSeed: the same for the same log, another for a longer one, never the configured seed's", () => {
    expect(MarketStartup.resumedSeed(1, 100)).toBe(MarketStartup.resumedSeed(1, 100))
    expect(MarketStartup.resumedSeed(1, 100)).not.toBe(MarketStartup.resumedSeed(1, 101))
    expect(MarketStartup.resumedSeed(1, 100)).not.toBe(1)
  })

  it("WarmUpRecord: a record is read back only whole; its options replay its warm-up", () => {
    const record = WarmUpRecord.beginning(simulator, 1_000_000)
    expect(record).toEqual({ seed: 5, tradesPerSecond: 20, launchesPerMinute: 30, warmUpMs: 120_000, warmUpEnd: 1_000_000, complete: false })
    expect(WarmUpRecord.fromUnknown(JSON.parse(JSON.stringify(record)))).toEqual(record)
    expect(WarmUpRecord.fromUnknown({ ...record, seed: "5" })).toBeUndefined()
    expect(WarmUpRecord.fromUnknown({ ...record, complete: undefined })).toBeUndefined()
    expect(WarmUpRecord.fromUnknown(null)).toBeUndefined()
    expect(WarmUpRecord.optionsOf(record, 200)).toEqual({ seed: 5, tradesPerSecond: 20, launchesPerMinute: 30, warmUpMs: 120_000, warmUpEnd: 1_000_000, tickMs: 200 })
  })

  it.live("a fresh log: the warm-up is recorded before it starts, complete after it, then one snapshot and the periodic ones", () =>
    Effect.gen(function*() {
      const store = EventStore.makeMemory()
      const records = WarmUpRecords.makeMemory()
      const written: Array<WarmUpRecord.WarmUpRecord> = []
      const spy: WarmUpRecords["Service"] = { read: records.read, write: (record) => Effect.andThen(records.write(record), Effect.sync(() => void written.push(record))) }
      const snapshots = snapshotsOff()
      const logged = yield* startOn(store, spy, snapshots.layer)
      expect(logged.length).toBeGreaterThan(100)
      expect(written.map((record) => record.complete)).toEqual([false, true])
      expect(written[1]).toEqual({ ...WarmUpRecord.beginning(simulator, written[0]!.warmUpEnd), complete: true })
      expect(records.record).toEqual(written[1])
      expect(snapshots.asked).toEqual({ takeHere: 1, startPeriodic: 1 })
    }))

  it.live("a log that began with a warm-up a stop interrupted: the warm-up is finished through ingest and marked complete", () =>
    Effect.gen(function*() {
      const store = EventStore.makeMemory()
      const end = Date.now() - 5_000
      const record = WarmUpRecord.beginning({ ...simulator, seed: 7 }, end)
      // the first two simulated minutes of that warm-up, as the interrupted start logged them
      const whole = new MarketSimulator({ seed: 7, startTime: end - simulator.warmUpMs, tradesPerSecond: 20, launchesPerMinute: 30 })
      const first = whole.advance(end - simulator.warmUpMs + 60_000)
      yield* store.append(first)
      const records = WarmUpRecords.makeMemory(record)
      const logged = yield* startOn(store, records, snapshotsOff().layer)
      expect(logged.length).toBeGreaterThan(first.length)
      expect(records.record).toEqual({ ...record, complete: true })
    }))

  it.live("a record of a warm-up the log did not begin with is left as it was", () =>
    Effect.gen(function*() {
      const store = EventStore.makeMemory()
      const end = Date.now() - 5_000
      const record = WarmUpRecord.beginning({ ...simulator, seed: 7 }, end)
      const other = new MarketSimulator({ seed: 8, startTime: end - simulator.warmUpMs, tradesPerSecond: 20, launchesPerMinute: 30 })
      yield* store.append(other.advance(end - simulator.warmUpMs + 60_000))
      const records = WarmUpRecords.makeMemory(record)
      yield* startOn(store, records, snapshotsOff().layer)
      expect(records.record).toBe(record)
    }))
})
