/**
 * The service's start-up banner: where it listens, where its event log and keys are, whether
 * ingest is on, a key to try and requests that work with it. Off with `announce: false`
 * (ServerOverrides).
 */
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { HttpServer } from "effect/http"
import { Market } from "@spot/application"
import type { ServerConfig } from "./ServerConfig.js"
import { embeddedDatabaseIn } from "./ServerConfig.js"

/**
 * Prints how to call the service once it listens, and the first line of a stop (its finalizer).
 */
export const layer = (config: ServerConfig, developmentKey: Redacted.Redacted<string> | undefined) => Layer.effectDiscard(
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const market = yield* Market.Market
    const configured = config.apiKeys
    // The run's own development key is printed: it exists for this run only, and a newcomer needs
    // it. A configured one is the operator's secret and keys are never logged: a placeholder.
    const key = developmentKey === undefined ? "<a key of SPOT_API_KEYS>" : Redacted.value(developmentKey)
    const port = (server.address as { readonly port?: number }).port ?? config.port
    // Listening on every interface: localhost reaches it; on one address, that address does.
    const hostName = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host.includes(":") ? `[${config.host}]` : config.host
    const base = `http://${hostName}:${port}`
    let sample: { chain: string; address: string } | undefined
    for (const token of market.engine.allTokens()) if (token.hasMarket && token.holdersCount > 5) sample = token
    const lines = [
      `spot market-data service listening on ${base}`,
      config.databaseUrl !== undefined && Option.isSome(config.databaseUrl)
        ? "event log and API keys: the PostgreSQL server of DATABASE_URL"
        : `event log: embedded PostgreSQL (PGlite) in ${embeddedDatabaseIn(config.dataDir)} (set DATABASE_URL for a server)`,
      (config.ingestKeys ?? []).length > 0
        ? `ingest: POST ${base}/admin/v1/events with a key of SPOT_INGEST_KEYS (docs/ingest.md)`
        : "ingest: off (set SPOT_INGEST_KEYS to accept POST /admin/v1/events)",
      developmentKey === undefined ? "API key: one of SPOT_API_KEYS (not shown: keys are never logged)" : `development API key for this run (make lasting ones with npm run keys -- create <name>): ${key}`,
      `  curl -H 'Authorization: Bearer ${key}' ${base}/v1/tokens/${sample?.chain ?? "solana"}/${sample?.address ?? "<address>"}`,
      `  curl -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"chains":["solana","base","bsc"],"newPairs":{}}' ${base}/v1/discovery`,
      `  curl ${base}/openapi.json`,
      `stream: ws://${hostName}:${port}/v1/stream (same bearer header; frames in docs/streams.md)`
    ]
    // Development keys are compared like stored ones, but nothing guessable should guard an API.
    const short = configured.filter((k) => Redacted.value(k).length < 16).length
    if (short > 0) lines.push(`warning: ${short} key(s) of SPOT_API_KEYS are shorter than 16 characters: easy to guess; use npm run keys -- create <name>`)
    yield* Console.log(lines.join("\n"))
    // The first thing a stop does (this layer is built last, so its finalizer runs first).
    const stopping = config.snapshots?.enabled === true ? "stopping: finishing requests, closing streams, writing a snapshot..." : "stopping: finishing requests, closing streams..."
    yield* Effect.addFinalizer(() => Console.log(stopping))
  })
)
