/**
 * Start-up, in order, before the server listens: restore the newest usable engine snapshot (when
 * snapshots are on), fold the rest of the event log into the market (the market is a projection
 * of the log; without a snapshot that is the whole log), then start the simulator when it is on.
 * A fresh log gets the warm-up; a log with history resumes at the present without warm-up (the
 * history is already there; re-simulating it would add a second past), with a seed of its own.
 */
import { Clock, Console, Duration, Effect, Schedule, Stream } from "effect"
import * as Ingest from "./Ingest.js"
import { Market } from "./Market.js"
import * as MarketClock from "./MarketClock.js"
import type { EventStoreShape, StoreUnavailable } from "./ports/EventStore.js"
import { EventStore } from "./ports/EventStore.js"
import { WarmUpRecords } from "./ports/WarmUpRecords.js"
import * as SimulatorFeed from "./SimulatorFeed.js"
import { Snapshots } from "./Snapshots.js"
import * as WarmUpRecord from "./WarmUpRecord.js"

export interface MarketStartupSettings {
  /** The embedded simulator's settings; null: no simulator (the market is fed by ingest only). */
  readonly simulator: SimulatorFeed.SimulatorFeedOptions | null
  /** Whether start-up says what it did on the console (the replay, the warm-up). */
  readonly announce: boolean
}

/**
 * A seed for a simulator resuming after a restart: the log already holds the first run's tokens,
 * wallets and transactions, so the new run must not draw the same ones again (same seed = same
 * addresses and hashes). Derived from the configured seed and the log's length: a restart of the
 * same log still gives the same market.
 */
export const resumedSeed = (seed: number, lastSeq: number): number => (Math.imul(seed ^ 0x5bd1e995, 0x27d4eb2d) + lastSeq) | 0

/**
 * A start-up step that needs the event store: retried every 2 s while the store is unavailable
 * (a database lost during start-up), with a warning each time, instead of ending the process;
 * whatever it did before failing is kept (a replay resumes after the last event it folded).
 */
export const retryWhileUnavailable = <A>(what: string, step: Effect.Effect<A, StoreUnavailable>): Effect.Effect<A> =>
  step.pipe(
    Effect.tapError((error) => Effect.logWarning(`${what}: ${error.message}; retrying in 2 s`)),
    Effect.retry(Schedule.spaced(Duration.seconds(2))),
    Effect.orDie // the schedule never ends
  )

/**
 * Whether the log began with `record`'s warm-up: its first token launch is among the log's first
 * events (a warm-up logs its first minute in one batch). A data directory's record says nothing
 * about another database's log (`DATABASE_URL` changed).
 */
export const beganWith = (store: EventStoreShape, record: WarmUpRecord.WarmUpRecord) =>
  Effect.gen(function*() {
    const first = yield* retryWhileUnavailable("reading the event log's first events", Stream.runHead(store.replay(0, 5_000)))
    const launch = yield* SimulatorFeed.firstWarmUpLaunchId(record)
    return launch !== undefined && first._tag === "Some" && first.value.some((stored) => stored.event.id === launch)
  })

/** Start-up (above), in the current scope: the market clock, periodic snapshots and the live feed run in its fibers. */
export const startMarket = Effect.fn("MarketStartup.startMarket")(function*(settings: MarketStartupSettings) {
  const { announce, simulator } = settings
  const market = yield* Market
  const ingest = yield* Ingest.Ingest
  const store = yield* EventStore
  const records = yield* WarmUpRecords
  const started = yield* Clock.currentTimeMillis
  const snapshots = yield* Snapshots
  const restored = yield* snapshots.restore
  const tailStarted = yield* Clock.currentTimeMillis
  // counted by the market: a replay retried after an outage resumes where it stopped
  const foldedBefore = market.engine.stats.events
  yield* retryWhileUnavailable("replaying the event log", ingest.catchUp)
  const replayed = market.engine.stats.events - foldedBefore
  const now = yield* Clock.currentTimeMillis
  // From here on the market follows the wall clock (stats windows expire on their own).
  yield* MarketClock.start()
  const head = simulator === null ? null : yield* retryWhileUnavailable("reading the event log's head", store.head)
  // A fresh log's warm-up is not interrupted by periodic snapshots: it ends with one (below).
  const warmingUp = simulator !== null && head === null
  if (!warmingUp) yield* snapshots.startPeriodic
  if (announce && (replayed > 0 || restored._tag === "Restored")) {
    const from = restored._tag === "Restored" ? `snapshot at seq ${restored.seq} restored in ${restored.seconds.toFixed(1)} s, then ` : ""
    yield* Console.log(`${from}event log replayed in ${((now - (restored._tag === "Restored" ? tailStarted : started)) / 1000).toFixed(1)} s: ${replayed} events, ${market.engine.stats.tokens} tokens, ${market.engine.stats.trades} trades`)
  }
  if (simulator === null) return
  const publish = Ingest.publishWithRetry(ingest)
  if (head === null) {
    // The warm-up's record first: a start after a crash part-way through it finishes it.
    const record = WarmUpRecord.beginning(simulator, now)
    yield* records.write(record)
    if (announce) {
      yield* Console.log(
        `fresh event log: warming up a simulated market first (${simulator.warmUpMs / 60_000} simulated minutes through the log, ` +
          `about a second each)`
      )
    }
    yield* SimulatorFeed.start(WarmUpRecord.optionsOf(record, simulator.tickMs), publish)
    yield* records.write({ ...record, complete: true })
    if (announce) {
      const took = ((yield* Clock.currentTimeMillis) - now) / 1000
      yield* Console.log(`market warmed up in ${took.toFixed(1)} s: ${market.engine.stats.tokens} tokens, ${market.engine.stats.trades} trades`)
    }
    // The warmed-up market's snapshot, serialized before the service listens: the periodic
    // ones are built in a worker from the previous one and the log since, so they start from
    // here (without it, the first would be serialized while serving, folding held).
    yield* snapshots.takeHere
    yield* snapshots.startPeriodic
    return
  }
  const interrupted = yield* records.read
  if (interrupted !== undefined && !interrupted.complete && (yield* beganWith(store, interrupted))) {
    // The same warm-up again, through ingest: what the log holds is a duplicate, the rest is appended.
    const resumedAt = yield* Clock.currentTimeMillis
    yield* SimulatorFeed.warmUp(WarmUpRecord.optionsOf(interrupted, simulator.tickMs), publish)
    yield* records.write({ ...interrupted, complete: true })
    if (announce) {
      const took = ((yield* Clock.currentTimeMillis) - resumedAt) / 1000
      yield* Console.log(`the warm-up a stop interrupted is complete (${took.toFixed(1)} s): ${market.engine.stats.tokens} tokens, ${market.engine.stats.trades} trades`)
    }
  }
  yield* SimulatorFeed.start({ ...simulator, warmUpMs: 0, seed: resumedSeed(simulator.seed, head.seq) }, publish)
})
