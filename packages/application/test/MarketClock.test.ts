import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Market, MarketClock } from "@spot/application"
import * as Simulator from "@spot/simulator"

const minute = 60_000

describe("MarketClock", () => {
  it.effect("a token nobody trades sees its trades leave the 5m window as the clock passes, with no event arriving", () =>
    Effect.gen(function*() {
      const market = Market.makeMarket()
      // A market that then goes quiet: its last events at about one minute after the epoch.
      const events = new Simulator.MarketSimulator({ seed: 3, startTime: 0, tradesPerSecond: 20, launchesPerMinute: 20 }).runFor(minute)
      market.apply(events)
      const traded = [...market.engine.allTokens()].filter((t) => t.toWire().stats["5m"].buyCount + t.toWire().stats["5m"].sellCount > 0)
      expect(traded.length).toBeGreaterThan(0)
      yield* Effect.provide(
        Effect.scoped(Effect.gen(function*() {
          yield* MarketClock.start(1_000)
          // Four minutes on: every trade is still inside its 5m window.
          yield* TestClock.adjust(4 * minute)
          for (const token of traded) expect(token.toWire().stats["5m"].buyCount + token.toWire().stats["5m"].sellCount).toBeGreaterThan(0)
          // Six and a half minutes on: none is; the 30m window still holds them all.
          yield* TestClock.adjust(2.5 * minute)
          for (const token of traded) {
            const stats = token.toWire().stats
            expect(stats["5m"].buyCount + stats["5m"].sellCount).toBe(0)
            expect(stats["5m"].volume).toEqual({ native: "0", usd: "0" })
            expect(stats["30m"].buyCount + stats["30m"].sellCount).toBeGreaterThan(0)
          }
        })),
        Layer.succeed(Market.Market, market)
      )
    }))
})
