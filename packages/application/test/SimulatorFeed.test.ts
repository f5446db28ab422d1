/**
 * The live feed after a stall (folding held by a snapshot, a slow store): the events of the
 * seconds it missed reach the market in batches of at most `liveBatch`, every one of them, in the
 * simulator's order, so no single fold holds the event loop for long.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Scope } from "effect"
import { Market, MarketSimulation, SimulatorFeed } from "@spot/application"
import type { MarketEvent } from "@spot/domain"
import { MarketSimulator } from "@spot/simulator"

describe("SimulatorFeed", () => {
  it.live("after a stall, a tick's events are folded in batches of at most liveBatch, all of them, in order", () =>
    Effect.gen(function*() {
      const market = Market.makeMarket()
      const batches: Array<ReadonlyArray<MarketEvent>> = []
      let live = false
      let stalled = false
      const resume = yield* Deferred.make<void>()
      const publish = (events: ReadonlyArray<MarketEvent>) =>
        Effect.gen(function*() {
          if (live) batches.push(events)
          market.apply(events)
          // the first live batch is held 1.5 s, as a snapshot holds folding
          if (live && !stalled) {
            stalled = true
            yield* Effect.andThen(Effect.sleep("1500 millis"), Deferred.succeed(resume, undefined))
          }
        })
      const scope = yield* Scope.make()
      yield* SimulatorFeed.start({ seed: 4, tradesPerSecond: 20_000, launchesPerMinute: 600, warmUpMs: 60_000, tickMs: 50 }, publish).pipe(
        Effect.provideService(Market.Market, market),
        Effect.provideService(MarketSimulation, { open: (settings) => new MarketSimulator(settings) }),
        Scope.provide(scope)
      )
      live = true
      yield* Deferred.await(resume)
      // Until the backlog is folded: the tick after the stall generates the events up to its own
      // time, past the resume, and folds them last. A fixed wait is not enough on a loaded
      // machine, where as few as three slices are folded in it.
      const resumedAt = Date.now()
      for (let waited = 0; waited < 30_000; waited += 50) {
        const last = batches.at(-1)?.at(-1)
        if (last !== undefined && last.timestamp >= resumedAt - 50) break
        yield* Effect.sleep("50 millis")
      }
      yield* Scope.close(scope, Effect.void as never)
      const sizes = batches.map((batch) => batch.length)
      // the events of the stalled 1.5 s (the simulator settles well below the configured rate this
      // soon after its start) came after it, cut into several batches
      expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(3_000)
      expect(Math.max(...sizes)).toBeLessThanOrEqual(SimulatorFeed.liveBatch)
      expect(sizes.filter((size) => size === SimulatorFeed.liveBatch).length).toBeGreaterThanOrEqual(2)
      // in order, none lost or repeated: timestamps never go back, ids all distinct
      const events = batches.flat()
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length)
      expect(events.every((e, i) => i === 0 || e.timestamp >= events[i - 1]!.timestamp)).toBe(true)
    }))
})
