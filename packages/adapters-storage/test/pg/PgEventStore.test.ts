import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { EventStore } from "@spot/application"
import type { StoredEvent } from "@spot/application"
import { Events } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import type { MarketEvent } from "@spot/domain"
import { PgEventStore } from "@spot/adapters-storage"
import * as TestDatabase from "./TestDatabase.js"

const database = await TestDatabase.pick()

/** Realistic events; each seed its own period, so two tests never share an id. */
const simulated = (minutes: number, seed = 3): Array<MarketEvent> =>
  new Simulator.MarketSimulator({ seed, startTime: 1_700_000_000_000 + seed * 86_400_000, tradesPerSecond: 20, launchesPerMinute: 20 }).runFor(minutes * 60_000)

const replayAll = (store: EventStore["Service"], after = 0, batch = 1_000) =>
  Effect.map(Stream.runCollect(store.replay(after, batch)), (chunks) => chunks.flat() as Array<StoredEvent>)

/** A delay on the wall clock (the tests' Effect clock is a test clock that moves only when told). */
const wallClockDelay = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/**
 * Appends 1,500 events (three statements of 700 rows) while a trigger runs `onMarked` (PL/pgSQL)
 * on the 1,451st row; then, the trigger gone, checks that nothing was stored and that the same
 * append stores them all. Returns how the first append ended.
 */
const appendFailingAt = (seed: number, onMarked: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const events = simulated(3, seed).slice(0, 1_500)
    expect(events.length).toBe(1_500)
    yield* sql.unsafe(`CREATE OR REPLACE FUNCTION on_marked_row() RETURNS trigger AS $$
      BEGIN IF NEW.id = '${events[1_450]!.id}' THEN ${onMarked} END IF; RETURN NEW; END $$ LANGUAGE plpgsql`)
    yield* sql`CREATE TRIGGER on_marked_row BEFORE INSERT ON market_events FOR EACH ROW EXECUTE FUNCTION on_marked_row()`
    const exit = yield* Effect.exit(store.append(events))
    yield* sql`DROP TRIGGER on_marked_row ON market_events`
    const stored = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market_events WHERE id IN ${sql.in(events.map((e) => e.id))}`
    expect(stored[0]!.n).toBe(0)
    const retried = yield* store.append(events)
    expect(retried.accepted.length).toBe(events.length)
    return exit
  })

const TestLayer = Layer.provideMerge(PgEventStore.layer({ rowsPerStatement: 700 }), database.layer())

describe(`PgEventStore (${database.engine})`, () => {
  it.layer(TestLayer, { timeout: 120_000 })((it) => {
    it.effect("stores new ids once, in order, and replays exactly what was stored", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const events = simulated(3)
        expect(events.length).toBeGreaterThan(1_500) // several INSERT statements in one transaction
        const first = yield* store.append(events)
        expect(first.accepted.length).toBe(events.length)
        expect(first.duplicates).toBe(0)

        // Sent twice: nothing new.
        const again = yield* store.append(events)
        expect(again).toEqual({ accepted: [], duplicates: events.length, firstSeq: 0, lastSeq: 0 })

        const replayed = yield* replayAll(store)
        expect(replayed.map((e) => e.event)).toEqual(events)
        for (let i = 1; i < replayed.length; i++) expect(replayed[i]!.seq).toBeGreaterThan(replayed[i - 1]!.seq)
        expect(first.lastSeq).toBe(replayed[replayed.length - 1]!.seq)
        expect(first.firstSeq).toBe(replayed[0]!.seq)

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

    it.effect("a fresh batch repeating an id inside itself (none in the log): the first occurrence is stored, with its body, the repeats count as duplicates", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const sql = yield* SqlClient.SqlClient
        // Longer than one statement (700 rows), the repeats in the second one: the transaction's
        // plain INSERT fails on them, the append runs again without them.
        const events = simulated(3, 51).slice(0, 1_000)
        expect(events.length).toBe(1_000)
        const batch = [...events.slice(0, 900), events[5]!, ...events.slice(900), events[950]!]
        // Given bodies (a leading space: not the canonical text) at the repeat of events[5] (index
        // 900) and at the first occurrence of events[950] (index 951), none at its repeat (1001).
        const bodies = batch.map((e, i) => (i === 900 || (i >= 901 && i <= 1000) ? ` ${PgEventStore.bodyOf(e)}` : undefined))
        const result = yield* store.append(batch, bodies)
        expect(result.accepted.map((e) => e.id)).toEqual(events.map((e) => e.id))
        expect(result.duplicates).toBe(2)
        const replayed = yield* replayAll(store)
        const mine = replayed.filter((r) => events.some((e) => e.id === r.event.id))
        expect(mine.map((r) => r.event.id)).toEqual(events.map((e) => e.id))
        expect(result.lastSeq).toBe(mine[mine.length - 1]!.seq)
        // Each id keeps its first occurrence's body.
        const rows = yield* sql<{ id: string; body: string }>`SELECT id, body FROM market_events WHERE id IN ${sql.in([events[5]!.id, events[950]!.id])}`
        const stored = new Map(rows.map((r) => [r.id, r.body]))
        expect(stored.get(events[5]!.id)).toBe(PgEventStore.bodyOf(events[5]!))
        expect(stored.get(events[950]!.id)).toBe(` ${PgEventStore.bodyOf(events[950]!)}`)
        const again = yield* store.append(batch, bodies)
        expect(again).toEqual({ accepted: [], duplicates: batch.length, firstSeq: 0, lastSeq: 0 })
      }))

    it.effect("a known id in a later statement of a multi-statement append: nothing doubled, the new ids stored once, in batch order", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const events = simulated(3, 31).slice(0, 1_500)
        expect(events.length).toBe(1_500)
        // Ids 800..899 are known: the plain INSERT of the second statement (700..1399) meets them,
        // the transaction (first statement included) rolls back, and the append runs again
        // skipping known ids.
        const known = yield* store.append(events.slice(800, 900))
        const result = yield* store.append(events)
        expect(result.accepted.map((e) => e.id)).toEqual([...events.slice(0, 800), ...events.slice(900)].map((e) => e.id))
        expect(result.duplicates).toBe(100)
        const replayed = yield* replayAll(store, known.lastSeq)
        expect(replayed.map((e) => e.event.id)).toEqual(result.accepted.map((e) => e.id))
        expect(result.lastSeq).toBe(replayed[replayed.length - 1]!.seq)
        // And then the plain path again: a fresh batch right after.
        const next = simulated(1, 32)
        const appended = yield* store.append(next)
        expect(appended).toMatchObject({ duplicates: 0 })
        expect(appended.accepted.length).toBe(next.length)
        const head = yield* store.head
        expect(head?.seq).toBe(appended.lastSeq)
      }))

    it.effect("keeps a given body as it is and writes the canonical JSON for the others; both replay to the same events", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const sql = yield* SqlClient.SqlClient
        const events = simulated(1, 41).slice(0, 30)
        const bodies = events.map((e, i) => (i % 3 === 0 ? undefined : JSON.stringify(JSON.parse(PgEventStore.bodyOf(e)), null, 2)))
        yield* store.append(events, bodies)
        const rows = yield* sql<{ id: string; body: string }>`SELECT id, body FROM market_events WHERE id IN ${sql.in(events.map((e) => e.id))}`
        const stored = new Map(rows.map((r) => [r.id, r.body]))
        events.forEach((e, i) => expect(stored.get(e.id)).toBe(bodies[i] ?? Events.marketEventJson(e)))
        const replayed = yield* replayAll(store)
        const byId = new Map(replayed.map((r) => [r.event.id, r.event]))
        for (const e of events) expect(byId.get(e.id)).toEqual(e)
      }))

    it.effect("an append that fails part-way stores nothing (one transaction)", () =>
      Effect.gen(function*() {
        // a trigger refusing one row in the third statement: the first two must roll back too
        const exit = yield* appendFailingAt(21, "RAISE EXCEPTION 'refused';")
        expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({ _tag: "StoreUnavailable" })
      }))

    it.effect("a connection that dies inside a multi-statement append is an outage (StoreUnavailable, not a defect); nothing stored, the retry stores all", () =>
      Effect.gen(function*() {
        // In the third statement a trigger ends the session on the server (its ROLLBACK then
        // fails too, which the SQL client raises as a defect); the embedded engine has no session
        // to end, and refuses the row instead (the ordinary failure path).
        const exit = yield* appendFailingAt(22, database.engine === "postgresql-server" ? "PERFORM pg_terminate_backend(pg_backend_pid());" : "RAISE EXCEPTION 'refused';")
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          expect(Cause.hasDies(exit.cause)).toBe(false)
          expect(Cause.squash(exit.cause)).toMatchObject({ _tag: "StoreUnavailable" })
        }
      }))

    it.effect("one writer at a time: an append waits for another writer's open transaction, so the earlier seqs are committed when it returns", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const sql = yield* SqlClient.SqlClient
        const [early, ...later] = simulated(2, 23).slice(0, 301)
        // another writer (an append whose client gave up, still open on the server): takes the
        // writers' lock, stores an event, and commits a while later
        const holding = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${0x73706f74})`
          yield* sql`INSERT INTO market_events (id, type, occurred_at, body) VALUES (${early!.id}, ${early!.type}, ${early!.timestamp}, ${PgEventStore.bodyOf(early!)})`
          yield* wallClockDelay(1_000)
        })))
        yield* wallClockDelay(200)
        const appended = yield* store.append(later)
        // when the append returns, the earlier writer has committed: its seq is below, and visible
        const committed = yield* sql<{ seq: string | number }>`SELECT seq FROM market_events WHERE id = ${early!.id}`
        expect(committed.length).toBe(1)
        expect(appended.firstSeq).toBeGreaterThan(Number(committed[0]!.seq))
        yield* Fiber.join(holding)
        // and such a writer cannot hold the lock forever once its client is gone
        if (database.engine === "postgresql-server") {
          const [setting] = yield* sql<{ idle_in_transaction_session_timeout: string }>`SHOW idle_in_transaction_session_timeout`
          expect(setting!.idle_in_transaction_session_timeout).toBe("30s")
        }
      }), { timeout: 30_000 })

    it.effect("keeps event ids in collation \"C\" (compared as bytes), and their unique index with them", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const column = yield* sql<{ collation: string | null }>`
          SELECT collation_name AS collation FROM information_schema.columns
          WHERE table_name = 'market_events' AND column_name = 'id'`
        expect(column[0]!.collation).toBe("C")
        const index = yield* sql<{ definition: string }>`
          SELECT pg_get_indexdef(indexrelid) AS definition FROM pg_index
          WHERE indrelid = 'market_events'::regclass AND indisunique AND NOT indisprimary`
        expect(index.map((i) => i.definition).join()).toMatch(/\(id\)/)
      }))
  })
})
