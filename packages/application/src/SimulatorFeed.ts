/**
 * The embedded market source: a simulated market (the `MarketSimulation` port), driven by the
 * clock, folding its events into the market in small batches. On start it replays a warm-up
 * period so the service opens on a populated market (tokens in every discovery column, positions
 * in both lifecycles).
 */
import { Clock, Duration, Effect } from "effect"
import type { MarketEvent } from "@spot/domain"
import { Market } from "./Market.js"
import type { SimulatedMarket } from "./ports/MarketSimulation.js"
import { MarketSimulation } from "./ports/MarketSimulation.js"

export interface SimulatorFeedOptions {
  readonly seed: number
  readonly tradesPerSecond: number
  readonly launchesPerMinute: number
  /** Simulated history replayed before going live. */
  readonly warmUpMs: number
  /** How often the live feed folds what the simulator produced meanwhile. */
  readonly tickMs: number
  /** When the warm-up ends (it covers the `warmUpMs` before); default the clock's now at start. */
  readonly warmUpEnd?: number
}

export const defaultSimulatorFeedOptions: SimulatorFeedOptions = {
  seed: 1,
  tradesPerSecond: 200,
  launchesPerMinute: 120,
  warmUpMs: 20 * 60_000,
  tickMs: 200
}

/** Largest batch handed to the market at once during warm-up (keeps each fold step short). */
const warmUpBatch = 20_000

/**
 * Largest batch handed to the market at once while serving: about 25 ms of folding (a tick at
 * the default rate brings a few dozen events; more only after a stall).
 */
export const liveBatch = 1_000

export type Publish = (events: ReadonlyArray<MarketEvent>) => Effect.Effect<void>

/**
 * Starts the embedded market: replays the warm-up period into the market (before returning, so a
 * server opens on a populated market), then feeds it live in a fiber of the current scope.
 * `publish` is the path events take into the market (the ingest path when storage is on;
 * `market.apply` otherwise).
 */
export const start = (options: SimulatorFeedOptions, publish?: Publish) =>
  Effect.gen(function*() {
    const market = yield* Market
    const apply = publish ?? applyTo(market)
    const simulator = yield* warmUp(options, apply)
    yield* Effect.forkScoped(feedLive(simulator, market, apply, options.tickMs))
    return simulator
  })

/** What fixes a warm-up's events, ids included: the simulator's settings and the period's end. */
type WarmUpPeriod = Pick<SimulatorFeedOptions, "seed" | "tradesPerSecond" | "launchesPerMinute" | "warmUpMs"> & { readonly warmUpEnd: number }

/** The warm-up's simulator and its events a simulated minute at a time (`warmUpEnd - warmUpMs` to `warmUpEnd`). */
const warmUpMinutes = (simulation: MarketSimulation["Service"], period: WarmUpPeriod) => {
  const end = period.warmUpEnd
  const simulator = simulation.open({
    seed: period.seed,
    startTime: end - period.warmUpMs,
    tradesPerSecond: period.tradesPerSecond,
    launchesPerMinute: period.launchesPerMinute
  })
  function* minutes(): Generator<ReadonlyArray<MarketEvent>> {
    for (let t = end - period.warmUpMs; t < end; ) {
      t = Math.min(end, t + 60_000)
      yield simulator.advance(t)
    }
  }
  return { simulator, minutes: minutes() }
}

/**
 * Replays the warm-up period alone and returns the simulator at its end. The same options give
 * the same events, ids included: replayed again through ingest (a warm-up a crash interrupted),
 * what the log holds comes back as duplicates.
 */
export const warmUp = (options: SimulatorFeedOptions, publish?: Publish) =>
  Effect.gen(function*() {
    const apply = publish ?? applyTo(yield* Market)
    const { minutes, simulator } = warmUpMinutes(yield* MarketSimulation, { ...options, warmUpEnd: options.warmUpEnd ?? (yield* Clock.currentTimeMillis) })
    for (const events of minutes) {
      for (let i = 0; i < events.length; i += warmUpBatch) yield* apply(events.slice(i, i + warmUpBatch))
      yield* Effect.yieldNow
    }
    return simulator
  })

/**
 * The id of the warm-up's first token launch (undefined when it has none): the mark of a log that
 * warm-up began. Its first events are native prices, whose ids any warm-up of the same times shares.
 */
export const firstWarmUpLaunchId = (period: WarmUpPeriod) =>
  MarketSimulation.useSync((simulation): string | undefined => {
    for (const events of warmUpMinutes(simulation, period).minutes) {
      const launch = events.find((event) => event.type === "tokenLaunched")
      if (launch !== undefined) return launch.id
    }
    return undefined
  })

const applyTo = (market: Market["Service"]): Publish => (events) => market.writeLock.withPermit(Effect.sync(() => void market.apply(events)))

const feedLive = (simulator: SimulatedMarket, market: Market["Service"], apply: Publish, tickMs: number) =>
  Effect.gen(function*() {
    // Time itself (stats windows expiring) is moved by MarketClock, with or without a simulator.
    for (;;) {
      const at = yield* Clock.currentTimeMillis
      const events = simulator.advance(at)
      // After a stall (folding held by a snapshot, a slow store) a tick brings seconds of events:
      // folded in slices, each its own batch, so no single fold holds the event loop for long.
      for (let i = 0; i < events.length; i += liveBatch) {
        yield* apply(events.length <= liveBatch ? events : events.slice(i, i + liveBatch))
        if (i + liveBatch < events.length) yield* Effect.yieldNow
      }
      yield* Effect.sleep(Duration.millis(tickMs))
    }
  })
