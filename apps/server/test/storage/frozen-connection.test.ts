/**
 * The event log over a connection that hangs (bytes stop flowing, nothing is closed: a frozen
 * network), not one that is cut: an append answers as an outage within its timeout, whether it
 * is one statement or a transaction of several (whose ROLLBACK would wait on the frozen
 * connection), and after the thaw nothing is lost or doubled.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { EventStore } from "@spot/application"
import * as Simulator from "@spot/simulator"
import { PgDatabase, PgEventStore } from "@spot/adapters-storage"
import type { CuttableProxy, TestDatabase } from "./support.js"
import { startDatabase, startProxy } from "./support.js"

describe("the event log over a frozen connection", () => {
  let database: TestDatabase
  let proxy: CuttableProxy
  beforeAll(async () => {
    database = await startDatabase()
    proxy = await startProxy(database.port)
  })
  afterAll(async () => {
    await proxy?.close()
    await database?.drop()
  })

  it("answers an outage within the timeout, one statement or several, and loses or doubles nothing after the thaw", async () => {
    const events = new Simulator.MarketSimulator({ seed: 31, startTime: 1_700_000_000_000, tradesPerSecond: 20, launchesPerMinute: 20 }).runFor(3 * 60_000)
    const small = events.slice(0, 300) // one statement
    const large = events.slice(300, 1_800) // three statements of 700 rows: a transaction
    expect(large.length).toBe(1_500)
    const url = Redacted.make(`postgres://postgres@127.0.0.1:${proxy.port}/${database.database}`)
    const layer = Layer.provideMerge(PgEventStore.layer({ timeout: "1 second", rowsPerStatement: 700 }), PgDatabase.layerServer({ url }))
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* EventStore
      const sql = yield* SqlClient.SqlClient
      yield* store.append(events.slice(1_800, 1_801)) // connections open, migrations done
      proxy.freeze()
      for (const batch of [large, small]) {
        const started = Date.now()
        const exit = yield* Effect.exit(store.append(batch))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(Date.now() - started).toBeLessThan(5_000) // not until the thaw
      }
      proxy.thaw()
      // resent until acknowledged: each event stored exactly once
      for (const batch of [large, small]) {
        let exit = yield* Effect.exit(store.append(batch))
        for (let attempt = 0; Exit.isFailure(exit) && attempt < 20; attempt++) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 250)))
          exit = yield* Effect.exit(store.append(batch))
        }
        expect(Exit.isSuccess(exit)).toBe(true)
      }
      const [counted] = yield* sql<{ n: number; distinct: number }>`SELECT count(*)::int AS n, count(DISTINCT id)::int AS distinct FROM market_events`
      expect(counted).toEqual({ n: 1_801, distinct: 1_801 })
    }).pipe(Effect.provide(layer))))
  }, 60_000)
})
