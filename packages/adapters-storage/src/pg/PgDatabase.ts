/**
 * The PostgreSQL connection, in one of two modes, both behind the same `SqlClient` (same driver,
 * same SQL, same migrations):
 *
 * - server: `DATABASE_URL` names a PostgreSQL server (@effect/sql-pg's own wire driver, a pool);
 * - embedded (the default): PGlite, PostgreSQL compiled to WASM, running in a worker thread of
 *   this process with its files in `${SPOT_DATA_DIR}/pg`, served over the PostgreSQL wire
 *   protocol on a loopback port chosen by the OS (pglite-socket), to which the same driver
 *   connects. PGlite runs one query at a time, so the pool has a single connection.
 *
 * Migrations run when the layer is built, before anything uses the database.
 */
import { Cause, Duration, Effect, Layer, Redacted, Schedule } from "effect"
import type { Scope } from "effect"
import { PgClient } from "@effect/sql-pg"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { MigrationError } from "effect/sql/Migrator"
import { existsSync } from "node:fs"
import { Worker } from "node:worker_threads"
import * as Migrations from "./Migrations.js"

export type Database = PgClient.PgClient | SqlClient.SqlClient

export interface ServerOptions {
  readonly url: Redacted.Redacted<string>
  /** Tables live in this schema (created when missing); default: the server's search_path. */
  readonly schema?: string
  readonly maxConnections?: number
}

const migrated = <E, R>(client: Layer.Layer<Database, E, R>): Layer.Layer<Database, E | SqlError | MigrationError, R> =>
  Layer.tap(client, (context) => Effect.asVoid(Effect.provide(Migrations.run, context)))

/** A plain connection to a server, no migrations (administrative statements, tools). */
export const layerClient = (options: { readonly url: Redacted.Redacted<string>; readonly maxConnections?: number }): Layer.Layer<Database, SqlError> =>
  PgClient.layer({ url: options.url, maxConnections: options.maxConnections ?? 1, connectTimeout: Duration.seconds(5) })

/** Where a server URL points, without its credentials (for logs). */
export const serverAddress = (url: Redacted.Redacted<string>): string => {
  try {
    const parsed = new URL(Redacted.value(url))
    return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`
  } catch {
    return "(unreadable DATABASE_URL)"
  }
}

/**
 * Waits until the server at `url` answers a query, retrying every `every` (default 2 s) for as
 * long as it takes; `onWait` hears of each failed attempt (its number and reason). A service
 * started before its database (or while it is down) then starts once the database answers,
 * instead of exiting with a driver's stack trace.
 */
export const waitUntilReachable = (
  url: Redacted.Redacted<string>,
  onWait: (attempt: number, reason: string) => Effect.Effect<void>,
  every: Duration.Input = Duration.seconds(2)
): Effect.Effect<void> => {
  let attempt = 0
  const probe = Effect.scoped(
    Effect.flatMap(Layer.build(layerClient({ url })), (context) =>
      Effect.provide(
        Effect.gen(function*() {
          const sql = yield* PgClient.PgClient
          yield* sql`SELECT 1`
        }),
        context
      ))
  )
  const attemptOnce: Effect.Effect<void> = Effect.catchCause(probe, (cause) => {
    attempt++
    const reason = String(Cause.squash(cause)).split("\n")[0]!
    return Effect.andThen(onWait(attempt, reason), Effect.andThen(Effect.sleep(every), Effect.suspend(() => attemptOnce)))
  })
  return attemptOnce
}

/** A PostgreSQL server, migrated. */
export const layerServer = (options: ServerOptions): Layer.Layer<Database, SqlError | MigrationError> => {
  const client = PgClient.layer({
    url: options.url,
    maxConnections: options.maxConnections ?? 4,
    connectTimeout: Duration.seconds(5),
    applicationName: "spot-market-data",
    startupParameters: {
      // A transaction whose client went away (a cut network: the statement timed out here, the
      // server still waits for its next command) is ended within 30 s: it holds the event log's
      // writers' lock (PgEventStore), and every append waits for it meanwhile.
      idle_in_transaction_session_timeout: "30000",
      ...(options.schema === undefined ? {} : { search_path: options.schema })
    }
  })
  if (options.schema === undefined) return migrated(client)
  const schema = options.schema
  const withSchema = Layer.tap(client, (context) =>
    Effect.provide(
      Effect.gen(function*() {
        const sql = yield* PgClient.PgClient
        yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
      }),
      context
    ))
  return migrated(withSchema)
}

export interface EmbeddedOptions {
  /** Directory of PGlite's files (created when missing), or `memory://` for a throw-away database. */
  readonly dataDir: string
  /** When to checkpoint (`checkpoints`); the defaults below. */
  readonly checkpoint?: CheckpointPolicy
}

/**
 * When the embedded database checkpoints. PGlite has no background checkpointer: without one, its
 * write-ahead log grows for as long as the service runs (about 3 GB an hour at 500 trades/s), only
 * a clean stop shrinks it, and a `kill -9` leaves all of it to replay at the next start. A
 * server's own checkpointer does this (`checkpoint_timeout`, `max_wal_size`).
 */
export interface CheckpointPolicy {
  /** How often the log's growth since the last checkpoint is looked at. */
  readonly everyMs: number
  /** Checkpoint once this much log was written since the last checkpoint... */
  readonly afterBytes: number
  /** ...or once the last one is this old and any log was written since (a redo pointer's record aside). */
  readonly afterMs: number
}

export const defaultCheckpointPolicy: CheckpointPolicy = { everyMs: 10_000, afterBytes: 64 * 1024 * 1024, afterMs: 300_000 }

/** Log bytes a checkpoint itself writes after its redo pointer: below this, nothing was written since. */
const checkpointRecordBytes = 4096

/**
 * The embedded database's checkpointer: a fiber of the layer's scope that looks at the log every
 * `everyMs` and runs `CHECKPOINT` when `afterBytes` of log were written since the last checkpoint
 * or it is `afterMs` old. Through the service's own pool (one connection), so it never runs inside
 * another statement's transaction. A failed look or checkpoint is tried again at the next one.
 */
const checkpoints = (policy: CheckpointPolicy) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const look = Effect.gen(function*() {
        const [since] = yield* sql<{ readonly bytes: number; readonly ageMs: number }>`
          SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::float8 AS bytes,
                 (extract(epoch from now() - checkpoint_time) * 1000)::float8 AS "ageMs"
          FROM pg_control_checkpoint()`
        if (since === undefined) return
        if (since.bytes >= policy.afterBytes || (since.ageMs >= policy.afterMs && since.bytes > checkpointRecordBytes)) {
          yield* sql`CHECKPOINT`
        }
      })
      yield* Effect.forkScoped(Effect.repeat(Effect.ignore(look), Schedule.spaced(Duration.millis(policy.everyMs))))
    })
  )

/**
 * The worker's file: beside this module when the service runs from source; through this package's
 * exports (`@spot/adapters-storage/embedded-worker`) when it runs bundled into one file
 * (`scripts/bundle.mjs`), where `import.meta.url` is the bundle's and the worker is not beside it.
 */
const embeddedWorkerUrl = (): URL => {
  const beside = new URL("./EmbeddedWorker.mjs", import.meta.url)
  return existsSync(beside) ? beside : new URL(import.meta.resolve("@spot/adapters-storage/embedded-worker"))
}

/**
 * Starts PGlite and its wire-protocol socket on 127.0.0.1 (OS-chosen port), in a worker thread
 * (`EmbeddedWorker.mjs`: its statements then never stall this thread's event loop); both close
 * with the scope, the database cleanly (its files consistent) before the worker ends.
 */
export const startEmbedded = (options: EmbeddedOptions & { readonly maxConnections?: number }): Effect.Effect<{ readonly port: number }, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        new Promise<{ readonly worker: Worker; readonly port: number }>((resolve, reject) => {
          // The worker is plain JavaScript and loads no TypeScript: no loader flags needed.
          const worker = new Worker(embeddedWorkerUrl(), {
            workerData: { dataDir: options.dataDir, maxConnections: options.maxConnections ?? 8 },
            execArgv: []
          })
          const fail = (error: unknown) => {
            void worker.terminate()
            reject(error)
          }
          worker.once("error", fail)
          worker.once("exit", (code) => fail(new Error(`the embedded database's worker exited (${code}) before it listened`)))
          worker.once("message", (message: { readonly port?: number; readonly error?: string }) => {
            worker.removeAllListeners("exit")
            worker.removeAllListeners("error")
            if (message.port === undefined) return fail(new Error(`the embedded database did not start: ${message.error}`))
            // Not kept alive by the worker: the service's own life decides when the process ends.
            worker.unref()
            resolve({ worker, port: message.port })
          })
        }),
      catch: (cause) => cause
    }).pipe(Effect.orDie),
    ({ worker }) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            const done = () => {
              void worker.terminate().then(() => resolve())
            }
            worker.once("message", done)
            worker.once("exit", () => resolve())
            worker.once("error", done)
            worker.postMessage("stop")
          })
      )
  )

/** The embedded database (PGlite), migrated, with its checkpointer. */
export const layerEmbedded = (options: EmbeddedOptions): Layer.Layer<Database, SqlError | MigrationError> =>
  checkpoints(options.checkpoint ?? defaultCheckpointPolicy).pipe(
    Layer.provideMerge(
      migrated(
        Layer.unwrap(
          Effect.map(startEmbedded(options), ({ port }) =>
            PgClient.layer({
              host: "127.0.0.1",
              port,
              username: "postgres",
              database: "postgres",
              maxConnections: 1,
              connectTimeout: Duration.seconds(30)
            }))
        )
      )
    )
  )
