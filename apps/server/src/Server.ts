/**
 * The composition root: the market, its embedded source, the key store, the limiter and the HTTP
 * API, as layers. `main.ts` launches it; tests build it on port 0.
 */
import { Clock, Console, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { HttpServer } from "effect/http"
import { randomBytes } from "node:crypto"
import { CursorSecret, KeyStore, Market, RateLimiter, SimulatorFeed } from "@spot/application"
import { ApiServer, Contract, Encoding, RateLimiterLive, readRoutes } from "@spot/adapters-http"
import { StreamLayer } from "@spot/adapters-ws"
import type { StreamLimits } from "@spot/adapters-ws"
import { ApiKeyHash, FileKeyStore } from "@spot/adapters-storage"
import type { ServerConfig } from "./ServerConfig.js"
import { keyFileIn } from "./ServerConfig.js"
import * as StreamGate from "./StreamGate.js"

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

/**
 * A key for this process alone when none is configured, so the banner can print a request that
 * works (held in memory, never written to the key file).
 */
const developmentKeyOf = (config: ServerConfig): Redacted.Redacted<string> | undefined =>
  config.apiKeys.length > 0 ? undefined : Redacted.make(ApiKeyHash.generateApiKey(), { label: "ApiKey" })

/** Prints how to call the service. */
const banner = (config: ServerConfig, developmentKey: Redacted.Redacted<string> | undefined) => Layer.effectDiscard(
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const market = yield* Market.Market
    const configured = config.apiKeys
    const key = Redacted.value(developmentKey ?? configured[0]!)
    const port = (server.address as { readonly port?: number }).port ?? config.port
    const base = `http://localhost:${port}`
    let sample: { chain: string; address: string } | undefined
    for (const token of market.engine.allTokens()) if (token.hasMarket && token.holdersCount > 5) sample = token
    const lines = [
      `spot market-data service listening on ${base}`,
      developmentKey === undefined ? "API key: the first of SPOT_API_KEYS" : `development API key for this run (make lasting ones with npm run keys -- create <name>): ${key}`,
      `  curl -H 'Authorization: Bearer ${key}' ${base}/v1/tokens/${sample?.chain ?? "solana"}/${sample?.address ?? "<address>"}`,
      `  curl -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"chains":["solana","base","bsc"],"newPairs":{}}' ${base}/v1/discovery`,
      `  curl ${base}/openapi.json`
    ]
    yield* Console.log(lines.join("\n"))
  })
)

/**
 * Replacements for the parts configuration normally decides. Tests feed a market of their own
 * (simulator off), seed keys and budgets directly, and keep the console quiet.
 */
export interface ServerOverrides {
  /** The market; default an empty one (filled by the simulator when it is on). */
  readonly market?: Layer.Layer<Market.Market>
  /** The key store; default the key file in `SPOT_DATA_DIR` plus the keys of `SPOT_API_KEYS`. */
  readonly keyStore?: Layer.Layer<KeyStore>
  /** The limiter; default budgets from `SPOT_RATE_LIMIT_*` (the spec's). */
  readonly rateLimiter?: Layer.Layer<RateLimiter>
  /** The start-up banner and the 10-second market summary; default on. */
  readonly announce?: boolean
  /** Stream limits and timings; default the spec's (`StreamServer.specLimits`). */
  readonly streamLimits?: Partial<StreamLimits>
}

export const layer = (config: ServerConfig, overrides: ServerOverrides = {}) => {
  const developmentKey = developmentKeyOf(config)
  const seedKeys = developmentKey === undefined ? config.apiKeys : [...config.apiKeys, developmentKey]
  const services = Layer.mergeAll(
    overrides.market ?? Market.layer(),
    CursorSecret.layer(cursorSecretOf(config)),
    overrides.keyStore ?? FileKeyStore.layer({ path: keyFileIn(config.dataDir), seedKeys }),
    overrides.rateLimiter ?? RateLimiterLive.layerConfig
  )
  // The market warms up before the server listens, so the first request meets a populated market.
  // /v1/stream shares the port: the stream adapter owns the server's `upgrade` event (docs/streams.md).
  const stream = StreamLayer.layer({
    gate: StreamGate.make(),
    encoders: { tokenJson: Encoding.tokenJson, tradeJson: Encoding.tradeJson },
    ...(overrides.streamLimits === undefined ? {} : { limits: overrides.streamLimits })
  })
  const http = Layer.merge(ApiServer.layer({ routes: readRoutes, contract: Contract }), stream).pipe(
    Layer.provideMerge(StreamLayer.httpServerLayer({ port: config.port, host: config.host })),
    Layer.provide(embeddedMarket(config))
  )
  const announcements = overrides.announce === false ? Layer.empty : Layer.mergeAll(banner(config, developmentKey), marketSummary)
  return announcements.pipe(Layer.provideMerge(http), Layer.provideMerge(services))
}
