/**
 * A database for the server tests, behind a TCP proxy the test can cut: a fresh database on the
 * real PostgreSQL server when one answers on 127.0.0.1:5432 (dropped afterwards), else an
 * embedded PGlite served over its socket by the test itself. The server under test always gets
 * `DATABASE_URL` = the proxy, so an outage is one `cut()` away (stopping the shared server would
 * disturb everything else running on the machine; a cut connection is what the driver sees then).
 */
import { connect, createServer, type Server, type Socket } from "node:net"
import { randomBytes } from "node:crypto"
import { Effect, Exit, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { PgDatabase } from "@spot/adapters-storage"

export interface CuttableProxy {
  readonly port: number
  cut(): void
  restore(): void
  /** Stops forwarding bytes either way, connections left open (a hung network); `thaw` resumes. */
  freeze(): void
  thaw(): void
  close(): Promise<void>
}

export const startProxy = async (upstreamPort: number, upstreamHost = "127.0.0.1"): Promise<CuttableProxy> => {
  const sockets = new Set<Socket>()
  let open = true
  let frozen = false
  /** Bytes that arrived while frozen, in order, sent on thaw. */
  const held: Array<() => void> = []
  const server: Server = createServer((client) => {
    if (!open) return void client.destroy()
    const upstream = connect({ host: upstreamHost, port: upstreamPort })
    sockets.add(client).add(upstream)
    const drop = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on("error", drop).on("close", drop)
    upstream.on("error", drop).on("close", drop)
    // forwarded by hand, not piped: a pipe resumes a paused source when its destination drains,
    // and a frozen proxy must hold every byte until thawed
    const forward = (from: Socket, to: Socket) =>
      from.on("data", (chunk: Buffer) => {
        if (frozen) held.push(() => to.write(chunk))
        else to.write(chunk)
      })
    forward(client, upstream)
    forward(upstream, client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    port,
    cut: () => {
      open = false
      for (const socket of sockets) socket.destroy()
      sockets.clear()
    },
    restore: () => {
      open = true
    },
    freeze: () => {
      frozen = true
    },
    thaw: () => {
      frozen = false
      for (const send of held.splice(0)) send()
    },
    close: () => {
      open = false
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => server.close(() => resolve()))
    }
  }
}

export interface TestDatabase {
  readonly engine: string
  readonly port: number
  readonly database: string
  readonly drop: () => Promise<void>
}

const serverReachable = (): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: 5432 })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.once("connect", () => done(true)).once("error", () => done(false))
  })

export const startDatabase = async (): Promise<TestDatabase> => {
  if (await serverReachable()) {
    const name = `spot_test_${randomBytes(5).toString("hex")}`
    await adminStatement(`CREATE DATABASE ${name}`)
    console.log(`[server storage tests] running against the PostgreSQL server at 127.0.0.1:5432 (database ${name})`)
    return { engine: "postgresql-server", port: 5432, database: name, drop: () => adminStatement(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
  }
  const scope = Effect.runSync(Scope.make())
  const { port } = await Effect.runPromise(Scope.provide(PgDatabase.startEmbedded({ dataDir: "memory://", maxConnections: 16 }), scope))
  console.log("[server storage tests] running against embedded PGlite (no server on 127.0.0.1:5432)")
  return { engine: "pglite-embedded", port, database: "postgres", drop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** Runs one administrative statement (CREATE/DROP DATABASE) on the real server's `postgres` database. */
const adminStatement = (statement: string): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(PgDatabase.layerClient({ url: Redacted.make("postgres://postgres@127.0.0.1:5432/postgres") })))
  )
