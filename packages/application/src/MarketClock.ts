/**
 * Time passing for the market. The engine has no clock of its own (the domain is pure): its
 * "now" moves with event timestamps and `advanceTo`. Stats windows are "trailing windows ending
 * now" (spec), so a token nobody trades must still see its trades leave its 5m window five minutes
 * later, whatever feeds the market: the simulator, an indexer through ingest, or nothing at all.
 * This moves the market to the wall clock once a period, in a fiber of the current scope.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { Market } from "./Market.js"

/** How often the market's clock follows the wall clock: windows are at most this stale. */
export const defaultPeriodMs = 1_000

/** Moves the market to the current time now, then every `periodMs`, until the scope closes. */
export const start = (periodMs: number = defaultPeriodMs) =>
  Effect.gen(function*() {
    const market = yield* Market
    const tick = market.writeLock.withPermit(Effect.map(Clock.currentTimeMillis, (now) => market.advanceTo(now)))
    yield* tick
    yield* Effect.forkScoped(Effect.repeat(Effect.delay(tick, Duration.millis(periodMs)), Schedule.forever))
  })
