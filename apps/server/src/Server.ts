/**
 * The composition root: the market, its embedded source, the key store, the limiter and the HTTP
 * API, as layers. `main.ts` launches it; tests build it on port 0.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Console, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { HttpServer } from "effect/http"
import { createServer } from "node:http"
import { randomBytes } from "node:crypto"
import { CursorSecret, KeyStore, Market, SimulatorFeed } from "@spot/application"
import { ApiServer, Contract, RateLimiterLive, readRoutes } from "@spot/adapters-http"
import { MemoryKeyStore } from "@spot/adapters-storage"
import type { ServerConfig } from "./ServerConfig.js"

const cursorSecretOf = (config: ServerConfig): Uint8Array =>
  Option.match(config.cursorSecret, {
    onNone: () => new Uint8Array(randomBytes(32)),
    onSome: (secret) => new TextEncoder().encode(Redacted.value(secret))
  })

/** Starts the simulator (warm-up first) when it is on. */
const embeddedMarket = (config: ServerConfig) =>
  config.simulator === null
    ? Layer.empty
    : Layer.effectDiscard(
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          yield* SimulatorFeed.start(config.simulator!)
          const market = yield* Market.Market
          const took = ((yield* Clock.currentTimeMillis) - started) / 1000
          yield* Console.log(`market warmed up in ${took.toFixed(1)} s: ${market.engine.stats.tokens} tokens, ${market.engine.stats.trades} trades`)
        })
      )

/** A line every 10 seconds: what the market holds and how fast it moves. */
const marketSummary = Layer.effectDiscard(
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

/** Prints how to call the service; creates a development key when none is configured. */
const banner = (config: ServerConfig) => Layer.effectDiscard(
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const keys = yield* KeyStore
    const market = yield* Market.Market
    const configured = yield* MemoryKeyStore.seedKeysConfig
    const key = configured.length > 0 ? Redacted.value(configured[0]!) : Redacted.value((yield* keys.create({ name: "development" })).key)
    const port = (server.address as { readonly port?: number }).port ?? config.port
    const base = `http://localhost:${port}`
    let sample: { chain: string; address: string } | undefined
    for (const token of market.engine.allTokens()) if (token.hasMarket && token.holdersCount > 5) sample = token
    const lines = [
      `spot market-data service listening on ${base}`,
      configured.length > 0 ? "API key: the first of SPOT_API_KEYS" : `development API key (shown once): ${key}`,
      `  curl -H 'Authorization: Bearer ${key}' ${base}/v1/tokens/${sample?.chain ?? "solana"}/${sample?.address ?? "<address>"}`,
      `  curl -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"chains":["solana","base","bsc"],"newPairs":{}}' ${base}/v1/discovery`,
      `  curl ${base}/openapi.json`
    ]
    yield* Console.log(lines.join("\n"))
  })
)

export const layer = (config: ServerConfig) => {
  const market = Market.layer()
  const services = Layer.mergeAll(
    market,
    CursorSecret.layer(cursorSecretOf(config)),
    MemoryKeyStore.layerConfig,
    RateLimiterLive.layerConfig
  )
  // The market warms up before the server listens, so the first request meets a populated market.
  const http = ApiServer.layer({ routes: readRoutes, contract: Contract }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: config.port, host: config.host })),
    Layer.provide(embeddedMarket(config))
  )
  return Layer.mergeAll(banner(config), marketSummary).pipe(Layer.provideMerge(http), Layer.provideMerge(services))
}
