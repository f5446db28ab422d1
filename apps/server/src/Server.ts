/**
 * The composition root: the market, its embedded source, the key store, the limiter and the HTTP
 * API, as layers, merged. What start-up does is the application's (MarketStartup); the console's
 * banner and periodic summary are Banner.ts and MarketSummary.ts. `main.ts` launches it; tests
 * build it on port 0.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { Admission, EventStore, Ingest, KeyStore, LogIdentity, Market, MarketSimulation, MarketStartup, RateLimiter, SnapshotStore, Snapshots, TradeHistory, TradeStore } from "@spot/application"
import { AdminKeys, ApiServer, Contract, CursorCodecLive, directReadRoutes, Encoding, ingestRoutes, KeyCache, RateLimiterLive, readRoutes } from "@spot/adapters-http"
import { StreamLayer } from "@spot/adapters-ws"
import type { StreamLimits } from "@spot/adapters-ws"
// Named in the inferred type of `layer` (the server's services, DirectReads' among them).
import type { DirectReads as _DirectReads } from "@spot/adapters-http"
import { MarketSimulator } from "@spot/simulator"
import { ApiKeyHash, DataDirLock, EngineCodecLive, FileCursorSecret, FileKeyStore, FileSnapshotStore, FileWarmUpRecords, LogIdentityLive, MemorySnapshotStore, PgDatabase, PgEventStore, PgKeyStore, PgTradeStore } from "@spot/adapters-storage"
import * as Banner from "./Banner.js"
import * as MarketSummary from "./MarketSummary.js"
import * as NodeServer from "./NodeServer.js"
import * as SnapshotWorker from "./SnapshotWorker.js"
import type { ServerConfig } from "./ServerConfig.js"
import { embeddedDatabaseIn, keyFileIn } from "./ServerConfig.js"
import * as StreamGate from "./StreamGate.js"

/**
 * Start-up before the server listens (MarketStartup: the snapshot, the log, the market clock,
 * periodic snapshots, the simulator), the warm-up's record kept in the data directory.
 */
const startMarket = (config: ServerConfig, announce: boolean) =>
  Layer.effectDiscard(MarketStartup.startMarket({ simulator: config.simulator, announce })).pipe(
    Layer.provide(FileWarmUpRecords.layer({ dataDir: config.dataDir }))
  )

/** The embedded feed's simulated markets: the simulator package, bound to the application's port. */
export const marketSimulation: Layer.Layer<MarketSimulation> = Layer.succeed(MarketSimulation, { open: (settings) => new MarketSimulator(settings) })

/**
 * Before start-up uses the database: waits until it answers, saying so on the first failed
 * attempt and every 30 s after (a supervisor's restart loop is not needed, and the log says why
 * the service is not listening yet).
 */
const waitForDatabase = (url: Redacted.Redacted<string>) =>
  PgDatabase.waitUntilReachable(url, (attempt, reason) =>
    attempt === 1 || attempt % 15 === 0
      ? Effect.logWarning(`the database at ${PgDatabase.serverAddress(url)} does not answer (${reason}); retrying every 2 s, the service starts once it does`)
      : Effect.void)

/**
 * A key for this process alone when none is configured, so the banner can print a request that
 * works (held in memory, never written to the key file).
 */
const developmentKeyOf = (config: ServerConfig): Redacted.Redacted<string> | undefined =>
  config.apiKeys.length > 0 ? undefined : Redacted.make(ApiKeyHash.generateApiKey(), { label: "ApiKey" })

/**
 * How long Admission reuses the key store's answer for a key (the KeyCache): a client's steady
 * stream of requests then costs one store lookup per half second, not one per request. The
 * stores re-read their keys about once a second, so a revocation made elsewhere (the `keys`
 * command, another server) takes at most 0.5 s longer to reach a request; expiry stays exact.
 * The stream handshake asks the store every time.
 */
export const keyCacheTtlMs = 500

/**
 * Replacements for the parts configuration normally decides. Tests feed a market of their own
 * (simulator off), seed keys and budgets directly, and keep the console quiet.
 */
export interface ServerOverrides {
  /** The market; default an empty one (filled by the simulator when it is on). */
  readonly market?: Layer.Layer<Market.Market>
  /**
   * The key store; default with `DATABASE_URL` the `api_keys` table, otherwise the key file in
   * `SPOT_DATA_DIR`; both plus the keys of `SPOT_API_KEYS`.
   */
  readonly keyStore?: Layer.Layer<KeyStore>
  /** The event log; default PostgreSQL (`DATABASE_URL`, or the embedded PGlite in `SPOT_DATA_DIR/pg`). */
  readonly eventStore?: Layer.Layer<EventStore>
  /** The limiter; default budgets from `SPOT_RATE_LIMIT_*` (the spec's). */
  readonly rateLimiter?: Layer.Layer<RateLimiter>
  /** The start-up banner and the 10-second market summary; default on. */
  readonly announce?: boolean
  /**
   * Successful token reads answered before Effect's server (DirectReads); default on. Off, every
   * request takes the request pipeline (tests compare the two).
   */
  readonly directReads?: boolean
  /** How long the key store's answer for a key is reused (`keyCacheTtlMs` above by default). */
  readonly keyCacheTtlMs?: number
  /** Stream limits and timings; default the spec's (`StreamServer.specLimits`). */
  readonly streamLimits?: Partial<StreamLimits>
  /** Where engine snapshots are kept; default files in `SPOT_DATA_DIR/snapshots` (used when `config.snapshots` is on). */
  readonly snapshotStore?: Layer.Layer<SnapshotStore>
  /** The trade archive; default the `trade_archive` table of the database. */
  readonly tradeStore?: Layer.Layer<TradeStore>
  /** The event log's identity; default the `spot_log_identity` row of the database. */
  readonly logIdentity?: Layer.Layer<LogIdentity>
}

/**
 * The trade archive: the override, else the database's `trade_archive` when the event log is the
 * database's too; a service given another event log (tests) keeps its archive in memory as well.
 */
const tradeStoreOf = (overrides: ServerOverrides, database: Layer.Layer<PgDatabase.Database>): Layer.Layer<TradeStore> =>
  overrides.tradeStore ?? (overrides.eventStore === undefined ? PgTradeStore.layer().pipe(Layer.provide(database)) : TradeStore.layerMemory)

export const layer = (config: ServerConfig, overrides: ServerOverrides = {}) => {
  const developmentKey = developmentKeyOf(config)
  const seedKeys = developmentKey === undefined ? config.apiKeys : [...config.apiKeys, developmentKey]
  const databaseUrl = config.databaseUrl !== undefined && Option.isSome(config.databaseUrl) ? config.databaseUrl.value : undefined
  // One database layer, shared (layers are memoized by reference) by the event log and the keys.
  const database = Layer.orDie(
    databaseUrl === undefined
      ? PgDatabase.layerEmbedded({ dataDir: embeddedDatabaseIn(config.dataDir) })
      : Layer.unwrap(Effect.as(waitForDatabase(databaseUrl), PgDatabase.layerServer({ url: databaseUrl })))
  )
  // Embedded mode keeps the key file: PGlite is one process's database, and the `keys` command
  // must work while the server runs.
  const keyStore = overrides.keyStore ??
    (databaseUrl === undefined
      ? FileKeyStore.layer({ path: keyFileIn(config.dataDir), seedKeys })
      : Layer.orDie(PgKeyStore.layer({ seedKeys })).pipe(Layer.provide(database)))
  const market = overrides.market ?? Market.layer()
  const eventStore = overrides.eventStore ?? PgEventStore.layer().pipe(Layer.provide(database))
  const ingest = Ingest.layer.pipe(Layer.provideMerge(Layer.merge(market, eventStore)))
  // Engine snapshots (docs/storage.md): files next to the data, refused unless they belong to this log.
  const snapshotSettings: Snapshots.SnapshotSettings = {
    ...(config.snapshots ?? Snapshots.disabledSnapshotSettings),
    cpuMillis: () => {
      const cpu = process.cpuUsage()
      return (cpu.user + cpu.system) / 1000
    }
  }
  // Trades past memory: written to the trade archive after each fold, read by deep trade pages.
  const tradeHistory = Layer.orDie(TradeHistory.layer()).pipe(
    Layer.provide(Layer.merge(market, tradeStoreOf(overrides, database)))
  )
  const snapshots = Snapshots.layer(snapshotSettings).pipe(
    Layer.provide(
      Layer.mergeAll(
        overrides.snapshotStore ??
          (snapshotSettings.enabled ? FileSnapshotStore.layer({ directory: FileSnapshotStore.directoryIn(config.dataDir) }) : MemorySnapshotStore.layer()),
        overrides.logIdentity ??
          (snapshotSettings.enabled ? LogIdentityLive.layerPg.pipe(Layer.provide(database)) : LogIdentityLive.layerFixed("unused")),
        EngineCodecLive.layer,
        // periodic snapshots built in a worker thread: folding goes on meanwhile; with the files of
        // the default store, the worker reads and writes them itself
        snapshotSettings.enabled
          ? SnapshotWorker.layer(overrides.snapshotStore === undefined ? { directory: FileSnapshotStore.directoryIn(config.dataDir) } : {})
          : Layer.empty
      )
    ),
    Layer.provideMerge(tradeHistory),
    Layer.provideMerge(ingest)
  )
  // One admission for REST, the direct reads and the stream's handshake.
  const ttlMs = overrides.keyCacheTtlMs ?? keyCacheTtlMs
  const admission = Admission.layer().pipe(
    Layer.provide(ttlMs > 0 ? KeyCache.layer({ ttlMs }) : Layer.empty),
    Layer.provideMerge(Layer.merge(keyStore, overrides.rateLimiter ?? RateLimiterLive.layerConfig))
  )
  const services = Layer.mergeAll(
    snapshots,
    CursorCodecLive.layer.pipe(Layer.provide(FileCursorSecret.layer({ configured: config.cursorSecret, dataDir: config.dataDir }))),
    admission
  )
  // The market warms up before the server listens, so the first request meets a populated market.
  // /v1/stream shares the port: the stream adapter owns the server's `upgrade` event (docs/streams.md).
  const stream = StreamLayer.layer({
    gate: StreamGate.make(),
    encoders: {
      tokenJson: Encoding.tokenJson,
      tradeJson: Encoding.tradeJson,
      encodedTradeJson: Encoding.encodedTradeJson,
      tradeObjectJson: Encoding.tradeObjectJson,
      candleJson: Encoding.candleJson,
      positionJson: Encoding.positionJson
    },
    ...(overrides.streamLimits === undefined ? {} : { limits: overrides.streamLimits })
  })
  const api = ApiServer.layer({
    routes: Layer.merge(readRoutes, ingestRoutes),
    contract: Contract,
    platform: { admin: { pathPrefix: "/admin/", keys: AdminKeys.make(config.ingestKeys ?? []) } },
    ...(overrides.directReads === false ? {} : { directRoutes: directReadRoutes })
  })
  const http = Layer.merge(api, stream).pipe(
    Layer.provideMerge(NodeServer.layer({ port: config.port, host: config.host })),
    Layer.provide(startMarket(config, overrides.announce !== false).pipe(Layer.provide(marketSimulation)))
  )
  const announcements = overrides.announce === false ? Layer.empty : Layer.mergeAll(Banner.layer(config, developmentKey), MarketSummary.layer)
  // One server per data directory, taken before anything opens its files, released after all else.
  return announcements.pipe(Layer.provideMerge(http), Layer.provideMerge(services), Layer.provide(DataDirLock.layer(config.dataDir)))
}
