/**
 * The database the adapter tests run against: the real PostgreSQL server when one answers on
 * 127.0.0.1:5432 (database `test`; or `SPOT_TEST_DATABASE_URL`), each test file in a schema of
 * its own that is dropped afterwards; otherwise the embedded engine (PGlite in memory). Never
 * skipped: the file prints which one ran.
 */
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { connect } from "node:net"
import { randomBytes } from "node:crypto"
import { PgDatabase } from "@spot/adapters-storage"

export const serverUrl = process.env["SPOT_TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

/** True when something accepts TCP connections at the server URL's host and port. */
export const serverReachable = (url: string = serverUrl): Promise<boolean> => {
  const parsed = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: parsed.hostname, port: Number(parsed.port || 5432) })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
  })
}

export const uniqueSchema = (): string => `spot_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`

/** A schema of its own on the real server, dropped when the layer is released. */
export const serverLayer = (url: string = serverUrl, schema: string = uniqueSchema()) =>
  Layer.provideMerge(
    Layer.effectDiscard(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Effect.addFinalizer(() => Effect.ignore(sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`))
      })
    ),
    PgDatabase.layerServer({ url: Redacted.make(url), schema })
  )

export const embeddedLayer = () => PgDatabase.layerEmbedded({ dataDir: "memory://" })

export type Engine = "postgresql-server" | "pglite-embedded"

/** Picks the engine once per test file and says which. */
export const pick = async (): Promise<{ readonly engine: Engine; readonly layer: () => ReturnType<typeof embeddedLayer> }> => {
  const engine: Engine = (await serverReachable()) ? "postgresql-server" : "pglite-embedded"
  // eslint-disable-next-line no-console
  console.log(`[storage tests] running against ${engine === "postgresql-server" ? `the PostgreSQL server at ${new URL(serverUrl).host}` : "embedded PGlite (no server reachable)"}`)
  return { engine, layer: engine === "postgresql-server" ? () => serverLayer() : embeddedLayer }
}
