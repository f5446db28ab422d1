/**
 * The service's configuration, from the environment. Every setting has a working default (the
 * embedded market on port 8080); an invalid value stops start-up with a message naming it.
 */
import { Config, ConfigProvider, Redacted, Schema } from "effect"
import type { Option } from "effect"
import { SimulatorFeed, Snapshots } from "@spot/application"

const simDefaults = SimulatorFeed.defaultSimulatorFeedOptions
import { MemoryKeyStore } from "@spot/adapters-storage"

/** Where the service keeps its files (the API key file now): `SPOT_DATA_DIR`, default `.data`. */
export const dataDirConfig = Config.String("SPOT_DATA_DIR").pipe(Config.withDefault(".data"))
export const keyFileIn = (dataDir: string): string => `${dataDir}/api-keys.json`
/** The embedded PostgreSQL's files. */
export const embeddedDatabaseIn = (dataDir: string): string => `${dataDir}/pg`
/** `SPOT_DATA_DIR` read directly, for the `keys` command (which runs outside the Effect config). */
export const dataDirFromEnv = (): string => process.env["SPOT_DATA_DIR"] ?? ".data"
/** The key file, for the `keys` command. */
export const keyFilePath = (): string => keyFileIn(dataDirFromEnv())

export interface ServerConfig {
  readonly port: number
  readonly host: string
  readonly simulator: SimulatorFeed.SimulatorFeedOptions | null
  /** Signs page cursors; random per process when not set (cursors then end with the process). */
  readonly cursorSecret: Option.Option<Redacted.Redacted<string>>
  /** Keys accepted besides the key file (`SPOT_API_KEYS`). */
  readonly apiKeys: ReadonlyArray<Redacted.Redacted<string>>
  readonly dataDir: string
  /**
   * `DATABASE_URL`: a PostgreSQL server for the event log and the API keys. None: the embedded
   * PostgreSQL (PGlite) in `${dataDir}/pg`. Omitted (tests): none.
   */
  readonly databaseUrl?: Option.Option<Redacted.Redacted<string>>
  /** `SPOT_INGEST_KEYS`: operator keys of `POST /admin/v1/events`; none: ingest refused (401). */
  readonly ingestKeys?: ReadonlyArray<Redacted.Redacted<string>>
  /**
   * Engine snapshots in `${dataDir}/snapshots` (`SPOT_SNAPSHOTS`, `SPOT_SNAPSHOT_EVERY_EVENTS`,
   * `SPOT_SNAPSHOT_MIN_INTERVAL_SECONDS`). Omitted (tests): off.
   */
  readonly snapshots?: Snapshots.SnapshotSettings
}

/** Comma-separated secrets; blanks ignored; absent means none. */
const secretList = (name: string): Config.Config<ReadonlyArray<Redacted.Redacted<string>>> =>
  Config.Redacted(name).pipe(
    Config.map((all) =>
      Redacted.value(all)
        .split(",")
        .map((key) => key.trim())
        .filter((key) => key.length > 0)
        .map((key) => Redacted.make(key, { label: name }))
    ),
    Config.withDefault<ReadonlyArray<Redacted.Redacted<string>>>([])
  )

/** A PostgreSQL connection URL (`postgres://` or `postgresql://` with a host). */
const isPostgresUrl = (text: string): boolean => {
  try {
    const url = new URL(text)
    return (url.protocol === "postgres:" || url.protocol === "postgresql:") && url.hostname !== ""
  } catch {
    return false
  }
}

/**
 * `DATABASE_URL`, checked before anything connects; the message never repeats the value (it holds
 * the database password).
 */
const databaseUrlConfig = Config.Redacted("DATABASE_URL").pipe(
  Config.flatMap((url) =>
    isPostgresUrl(Redacted.value(url))
      ? Config.succeed(url)
      : Config.fail(new ConfigProvider.SourceError({ message: "DATABASE_URL: expected a URL of the form postgres://user:password@host:5432/database" }))
  ),
  Config.option
)

const positiveInt = (name: string, fallback: number) =>
  Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), name).pipe(Config.withDefault(fallback))

const switchOn = (name: string, fallback: boolean) =>
  Config.Literals(["on", "off", "true", "false", "1", "0"], name).pipe(
    Config.withDefault(fallback ? "on" : "off"),
    Config.map((v) => v === "on" || v === "true" || v === "1")
  )

export const serverConfig: Config.Config<ServerConfig> = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("0.0.0.0")),
  simulatorOn: switchOn("SPOT_SIMULATOR", true),
  seed: Config.Int("SPOT_SIM_SEED").pipe(Config.withDefault(simDefaults.seed)),
  tradesPerSecond: positiveInt("SPOT_SIM_TRADES_PER_SECOND", simDefaults.tradesPerSecond),
  launchesPerMinute: positiveInt("SPOT_SIM_LAUNCHES_PER_MINUTE", simDefaults.launchesPerMinute),
  tickMs: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 10, maximum: 10_000 })), "SPOT_SIM_TICK_MS").pipe(
    Config.withDefault(simDefaults.tickMs)
  ),
  warmUpMinutes: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1440 })), "SPOT_SIM_WARMUP_MINUTES").pipe(
    Config.withDefault(simDefaults.warmUpMs / 60_000)
  ),
  cursorSecret: Config.Redacted("SPOT_CURSOR_SECRET").pipe(Config.option),
  apiKeys: MemoryKeyStore.seedKeysConfig,
  dataDir: dataDirConfig,
  databaseUrl: databaseUrlConfig,
  ingestKeys: secretList("SPOT_INGEST_KEYS"),
  snapshotsOn: switchOn("SPOT_SNAPSHOTS", Snapshots.defaultSnapshotSettings.enabled),
  snapshotEveryEvents: positiveInt("SPOT_SNAPSHOT_EVERY_EVENTS", Snapshots.defaultSnapshotSettings.everyEvents),
  snapshotMinIntervalSeconds: Config.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)), "SPOT_SNAPSHOT_MIN_INTERVAL_SECONDS").pipe(
    Config.withDefault(Snapshots.defaultSnapshotSettings.minIntervalMs / 1000)
  )
}).pipe(
  Config.map((c) => ({
    port: c.port,
    host: c.host,
    simulator: c.simulatorOn
      ? { seed: c.seed, tradesPerSecond: c.tradesPerSecond, launchesPerMinute: c.launchesPerMinute, warmUpMs: c.warmUpMinutes * 60_000, tickMs: c.tickMs }
      : null,
    cursorSecret: c.cursorSecret,
    apiKeys: c.apiKeys,
    dataDir: c.dataDir,
    databaseUrl: c.databaseUrl,
    ingestKeys: c.ingestKeys,
    snapshots: { enabled: c.snapshotsOn, everyEvents: c.snapshotEveryEvents, minIntervalMs: c.snapshotMinIntervalSeconds * 1000 }
  }))
)
