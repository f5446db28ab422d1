/**
 * The ingest pipeline on the real log: batches sent all at once are appended one after the other
 * in arrival order (the pool has several connections, yet no two appends overlap), so the log's
 * seq order is the order the market folded, and a replay of the log rebuilds the same market.
 * NDJSON texts are stored as sent. Runs on the PostgreSQL server when one answers, else on PGlite.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { EventStore, Ingest, Market } from "@spot/application"
import type { StoredEvent } from "@spot/application"
import { Events } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { PgEventStore } from "@spot/adapters-storage"
import * as EngineSnapshot from "../../src/snapshot/EngineSnapshot.js"
import { firstDifference, readsOf } from "@spot/domain/testing"
import * as TestDatabase from "./TestDatabase.js"

const database = await TestDatabase.pick()

const simulated = new Simulator.MarketSimulator({ seed: 23, startTime: 1_700_500_000_000, tradesPerSecond: 20, launchesPerMinute: 30 }).runFor(3 * 60_000)
const texts = simulated.map((e) => JSON.stringify(Events.encodeMarketEvent(e)))
const batchCount = 6
const cut = (i: number) => Math.floor((simulated.length * i) / batchCount)
const batches = Array.from({ length: batchCount }, (_, i) => ({ texts: texts.slice(cut(i), cut(i + 1)) }))

const TestLayer = Ingest.layer.pipe(
  Layer.provideMerge(Layer.merge(Market.layer(), Layer.provideMerge(PgEventStore.layer(), database.layer())))
)

describe(`Ingest on PgEventStore (${database.engine})`, () => {
  it.layer(TestLayer, { timeout: 120_000 })((it) => {
    it.effect("batches in flight: appended in arrival order, the log replays to the same market; sent again, all duplicates", () =>
      Effect.gen(function*() {
        const ingest = yield* Ingest.Ingest
        const market = yield* Market.Market
        const store = yield* EventStore
        const sql = yield* SqlClient.SqlClient
        const send = () =>
          Effect.all(
            batches.map((b) => ingest.ingest(b.texts.map((t) => JSON.parse(t)), b.texts)),
            { concurrency: "unbounded" }
          )
        const first = yield* send()
        expect(first).toEqual(batches.map((b) => ({ accepted: b.texts.length, duplicates: 0 })))

        const replayed = (yield* Stream.runCollect(store.replay(0, 1_000))).flat() as Array<StoredEvent>
        expect(replayed.map((s) => s.event.id)).toEqual(simulated.map((e) => e.id))
        // A restart: the log replayed, then the clock moved to the present (here, the live market's).
        const rebuilt = Market.makeMarket()
        rebuilt.apply(replayed.map((s) => s.event), market.engine.now)
        expect(rebuilt.engine.stats).toEqual(market.engine.stats)
        // Every read the same, each token's updatedAt aside (it counts the changes told, so the batches: see EngineReads).
        expect(firstDifference(readsOf(market.engine, { withoutTokenUpdatedAt: true }), readsOf(rebuilt.engine, { withoutTokenUpdatedAt: true }))).toBeUndefined()
        expect(ingest.foldedSeq()).toBe(replayed[replayed.length - 1]!.seq)

        // The lines were stored as sent.
        const rows = yield* sql<{ body: string }>`SELECT body FROM market_events ORDER BY seq`
        expect(rows.map((r) => r.body)).toEqual(texts)

        // Sent again: the whole engine state is byte for byte what it was.
        const before = EngineSnapshot.snapshot(market.engine)
        const again = yield* send()
        expect(again).toEqual(batches.map((b) => ({ accepted: 0, duplicates: b.texts.length })))
        expect(market.engine.stats).toEqual(rebuilt.engine.stats)
        expect(Buffer.compare(EngineSnapshot.snapshot(market.engine), before)).toBe(0)
      }).pipe(
        // The live clock: ingest refuses events dated past the service's clock, and the test
        // clock starts at 0, before these events.
        Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())
      ))
  })
})
