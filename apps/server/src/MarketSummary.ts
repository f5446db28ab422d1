/**
 * The service's periodic console line: every 10 seconds, what the market holds and how fast it
 * moves (tokens, graduated ones, trades and their rate, positions, wallets). Off with
 * `announce: false` (ServerOverrides).
 */
import { Console, Duration, Effect, Layer, Schedule } from "effect"
import { Market } from "@spot/application"

/** A line every 10 seconds, from the layer's build until its scope closes. */
export const layer: Layer.Layer<never, never, Market.Market> = Layer.effectDiscard(
  Effect.gen(function*() {
    const market = yield* Market.Market
    let lastTrades = market.engine.stats.trades
    const report = Effect.sync(() => {
      const stats = market.engine.stats
      let graduated = 0
      for (const token of market.engine.allTokens()) if (token.graduatedAt !== null) graduated++
      const perSecond = (stats.trades - lastTrades) / 10
      lastTrades = stats.trades
      return `market: ${stats.tokens} tokens, ${graduated} graduated, ${stats.trades} trades (${perSecond.toFixed(0)}/s), ${stats.positions} positions, ${stats.wallets} wallets`
    }).pipe(Effect.flatMap(Console.log))
    yield* Effect.forkScoped(Effect.repeat(Effect.delay(report, Duration.seconds(10)), Schedule.forever))
  })
)
