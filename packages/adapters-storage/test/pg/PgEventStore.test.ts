import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { EventStore } from "@spot/application"
import type { StoredEvent } from "@spot/application"
import { Simulator } from "@spot/domain"
import type { MarketEvent } from "@spot/domain"
import { PgEventStore } from "@spot/adapters-storage"
import * as TestDatabase from "./TestDatabase.js"

const database = await TestDatabase.pick()

/** Realistic events; each seed its own period, so two tests never share an id. */
const simulated = (minutes: number, seed = 3): Array<MarketEvent> =>
  new Simulator.MarketSimulator({ seed, startTime: 1_700_000_000_000 + seed * 86_400_000, tradesPerSecond: 20, launchesPerMinute: 20 }).runFor(minutes * 60_000)

const replayAll = (store: EventStore["Service"], after = 0, batch = 1_000) =>
  Effect.map(Stream.runCollect(store.replay(after, batch)), (chunks) => chunks.flat() as Array<StoredEvent>)

const TestLayer = Layer.provideMerge(PgEventStore.layer({ rowsPerStatement: 700 }), database.layer())

describe(`PgEventStore (${database.engine})`, () => {
  it.layer(TestLayer, { timeout: 120_000 })((it) => {
    it.effect("stores new ids once, in order, and replays exactly what was stored", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const events = simulated(2)
        expect(events.length).toBeGreaterThan(1_500) // several INSERT statements in one transaction
        const first = yield* store.append(events)
        expect(first.accepted.length).toBe(events.length)
        expect(first.duplicates).toBe(0)

        // Sent twice: nothing new.
        const again = yield* store.append(events)
        expect(again).toEqual({ accepted: [], duplicates: events.length, lastSeq: 0 })

        const replayed = yield* replayAll(store)
        expect(replayed.map((e) => e.event)).toEqual(events)
        for (let i = 1; i < replayed.length; i++) expect(replayed[i]!.seq).toBeGreaterThan(replayed[i - 1]!.seq)
        expect(first.lastSeq).toBe(replayed[replayed.length - 1]!.seq)

        const head = yield* store.head
        expect(head).toEqual({ seq: first.lastSeq, timestamp: events[events.length - 1]!.timestamp })

        // Replay from the middle gives the tail.
        const middle = replayed[500]!.seq
        const tail = yield* replayAll(store, middle, 333)
        expect(tail.map((e) => e.event.id)).toEqual(replayed.slice(501).map((e) => e.event.id))
      }))

    it.effect("a batch mixing new and known ids stores only the new ones; repeats inside a batch count as duplicates", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const events = simulated(3, 11)
        yield* store.append(events.slice(0, 100))
        const mixed = [...events.slice(50, 150), events[120]!]
        const result = yield* store.append(mixed)
        expect(result.accepted.map((e) => e.id)).toEqual(events.slice(100, 150).map((e) => e.id))
        expect(result.duplicates).toBe(51)
      }))

    it.effect("an append that fails part-way stores nothing (one transaction)", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const sql = yield* SqlClient.SqlClient
        const events = simulated(3, 21).slice(0, 1_500)
        expect(events.length).toBe(1_500)
        // A trigger refusing one row in the third statement: the first two must roll back too.
        yield* sql`CREATE OR REPLACE FUNCTION refuse_marked() RETURNS trigger AS $$
          BEGIN IF NEW.id = ${sql.literal(`'${events[1_450]!.id}'`)} THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`
        yield* sql`CREATE TRIGGER refuse_marked BEFORE INSERT ON market_events FOR EACH ROW EXECUTE FUNCTION refuse_marked()`
        const failed = yield* Effect.flip(store.append(events))
        expect(failed._tag).toBe("StoreUnavailable")
        yield* sql`DROP TRIGGER refuse_marked ON market_events`
        const stored = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market_events WHERE id IN ${sql.in(events.map((e) => e.id))}`
        expect(stored[0]!.n).toBe(0)
        const retried = yield* store.append(events)
        expect(retried.accepted.length).toBe(events.length)
      }))
  })
})
