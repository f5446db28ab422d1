/**
 * `EventStore` on PostgreSQL: the append-only `market_events` log (see Migrations.ts and
 * docs/storage.md).
 *
 * Append: rows go in through `unnest` of four typed arrays (four bind parameters whatever the
 * batch size, so the 65,535-parameter limit never applies), in chunks that keep a statement's
 * message a few megabytes; one statement (atomic by itself) when the batch fits in one chunk, one
 * transaction otherwise, each taking the writers' advisory lock before its rows take their seqs
 * (one writer at a time, in seq order: see `writerLock`). The common case, no id already in the
 * log, is a plain INSERT that returns one row (how many, the first and last seq): no `ON CONFLICT` check per row (about a fifth of the
 * database's work) and no row per event to send back. When an id is already there (a retried
 * batch) or repeats inside the batch, that INSERT fails on the unique constraint, nothing of it
 * stays, and the append runs again without the repeats as `INSERT ... ON CONFLICT (id) DO NOTHING
 * RETURNING id, seq`, which tells which ids were new. Replay: keyset pages (`seq > last ORDER BY seq LIMIT n`), the next page read while the
 * previous one is folded.
 */
import { Duration, Effect, Fiber, Layer, Option, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { isSqlError } from "effect/sql/SqlError"
import type { SqlError } from "effect/sql/SqlError"
import { float8Array, textArray } from "./ArrayParameters.js"
import { decodeStoredText, EventStore, StoreUnavailable } from "@spot/application"
import type { AppendResult, EventStoreShape, StoredEvent, StoredText } from "@spot/application"
import { Events } from "@spot/domain"
import type { MarketEvent } from "@spot/domain"

export interface PgEventStoreOptions {
  /** Rows per INSERT statement inside the append's one transaction. */
  readonly rowsPerStatement?: number
  /** An append or a replay page slower than this fails as unavailable (a cut network hangs otherwise). */
  readonly timeout?: Duration.Input
}

/**
 * The stored text of an event: its wire JSON, `JSON.stringify(encodeMarketEvent(event))` byte for
 * byte (by the hand-written encoder, property-tested against the schema's).
 */
export const bodyOf = (event: MarketEvent): string => Events.marketEventJson(event)

const unavailable = (what: string) => (cause: unknown) =>
  new StoreUnavailable({ message: `event store unavailable (${what})`, cause })


const chunkStarts = (count: number, size: number): Array<number> => {
  const starts: Array<number> = []
  for (let from = 0; from < count; from += size) starts.push(from)
  return starts
}

/** The advisory lock appends take (any constant of our own: "spot" in ASCII). */
const WRITER_LOCK = 0x73706f74

/** The log's unique constraint on `id` refused a row: an id of the batch is already stored. */
const isKnownId = (error: SqlError): boolean =>
  error.reason._tag === "UniqueViolation" && error.reason.constraint === "market_events_id_unique"

interface InsertedRow {
  readonly id: string
  readonly seq: bigint | string | number
}

export const make = (options: PgEventStoreOptions = {}): Effect.Effect<EventStoreShape, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rowsPerStatement = options.rowsPerStatement ?? 5_000
    const timeout = options.timeout ?? Duration.seconds(15)

    /**
     * `effect` as an outage when it fails or takes longer than `timeout`. It runs in a fiber of
     * its own that the deadline leaves to end by itself (interrupted, without waiting): on a
     * frozen connection, interrupting a transaction means a ROLLBACK that waits on that same
     * connection, and the caller would wait with it until the network came back (ingest would hang
     * 300 s). Left alone, it ends when the connection does; the database ends the transaction of a
     * departed client within 30 s (PgDatabase), and an append that commits meanwhile is a late
     * commit (`Ingest` folds it in log order).
     */
    const bounded = <A>(what: string, effect: Effect.Effect<A, SqlError>): Effect.Effect<A, StoreUnavailable> => {
      const work = effect.pipe(
        Effect.mapError((error): StoreUnavailable => unavailable(what)(error)),
        // A transaction whose connection died fails its ROLLBACK too, which the SQL client turns
        // into a defect (`withTransaction`): that is an outage like any other, not a bug (503, as
        // a one-statement append answers, not 500).
        Effect.catchDefect((defect) => (isSqlError(defect) ? Effect.fail(unavailable(what)(defect)) : Effect.die(defect)))
      )
      return Effect.flatMap(Effect.forkDetach(work), (fiber) =>
        Fiber.join(fiber).pipe(
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () => Effect.andThen(Effect.forkDetach(Fiber.interrupt(fiber)), Effect.fail(unavailable(`${what} timed out`)(undefined)))
          }),
          Effect.onInterrupt(() => Effect.forkDetach(Fiber.interrupt(fiber)))
        ))
    }

    /** The columns of `events[from, to)` as typed array parameters (no per-element type inference). */
    const columnsOf = (events: ReadonlyArray<MarketEvent>, given: ReadonlyArray<string | undefined> | undefined, from: number, to: number) => {
      const n = to - from
      const ids = new Array<string>(n)
      const types = new Array<string>(n)
      const times = new Array<number>(n)
      const bodies = new Array<string>(n)
      for (let i = 0; i < n; i++) {
        const event = events[from + i]!
        ids[i] = event.id
        types[i] = event.type
        times[i] = event.timestamp
        bodies[i] = given?.[from + i] ?? bodyOf(event)
      }
      // Times travel as float8 (exact for the safe integers they are) and are cast back: no
      // BigInt per row, as an int8[] parameter would need.
      return { ids: textArray(ids), types: textArray(types), times: float8Array(times), bodies: textArray(bodies) }
    }

    /** No id of the chunk is in the log: inserts them all, or fails (a unique violation) inserting none. */
    const insertNew = (events: ReadonlyArray<MarketEvent>, given: ReadonlyArray<string | undefined> | undefined, from: number, to: number) => {
      const c = columnsOf(events, given, from, to)
      return Effect.map(
        sql<{ readonly n: number; readonly first: bigint | string | number | null; readonly last: bigint | string | number | null }>`
          WITH writer AS MATERIALIZED (SELECT pg_advisory_xact_lock(${WRITER_LOCK})), inserted AS (
            INSERT INTO market_events (id, type, occurred_at, body)
            SELECT u.id, u.type, u.occurred_at::int8, u.body
            FROM writer, unnest(${c.ids}::text[], ${c.types}::text[], ${c.times}::float8[], ${c.bodies}::text[]) AS u(id, type, occurred_at, body)
            RETURNING seq
          )
          SELECT count(*)::int AS n, min(seq) AS first, max(seq) AS last FROM inserted`,
        (rows) => ({ inserted: rows[0]!.n, firstSeq: Number(rows[0]!.first ?? 0), lastSeq: Number(rows[0]!.last ?? 0) })
      )
    }

    /** Inserts the chunk's new ids; returns each inserted id's seq. */
    const insertSkippingKnown = (events: ReadonlyArray<MarketEvent>, given: ReadonlyArray<string | undefined> | undefined, from: number, to: number) => {
      const c = columnsOf(events, given, from, to)
      return sql<InsertedRow>`
        WITH writer AS MATERIALIZED (SELECT pg_advisory_xact_lock(${WRITER_LOCK}))
        INSERT INTO market_events (id, type, occurred_at, body)
        SELECT u.id, u.type, u.occurred_at::int8, u.body
        FROM writer, unnest(${c.ids}::text[], ${c.types}::text[], ${c.times}::float8[], ${c.bodies}::text[]) AS u(id, type, occurred_at, body)
        ON CONFLICT (id) DO NOTHING
        RETURNING id, seq`
    }

    /**
     * One writer at a time, in the database's own order: every append takes this
     * transaction-scoped advisory lock before its rows take their seqs (each INSERT above joins
     * the `writer` CTE, evaluated once and first; a multi-statement append also takes it first of
     * all), so an append commits before the next one takes its seqs. Without it, an append whose
     * client gave up (a statement timeout: 503) could still commit after a later append, below the
     * seqs the market had folded past, and stay unserved (docs/storage.md, "Late commits"). A
     * replay takes it too before its first page, so it reads a prefix of the log no late commit
     * can change. In the INSERT rather than in a `BEGIN`/lock/`COMMIT` of its own: an append stays
     * one round trip, which the database works on while the market folds (three more round trips
     * would each wait for the event loop, busy folding, and cost ingest a sixth of its rate).
     */
    const writerLock = sql`SELECT pg_advisory_xact_lock(${WRITER_LOCK})`

    const chunked = <A>(count: number, statement: (from: number, to: number) => Effect.Effect<A, SqlError>) =>
      count <= rowsPerStatement
        ? Effect.map(statement(0, count), (result) => [result])
        : sql.withTransaction(
          Effect.andThen(writerLock, Effect.forEach(chunkStarts(count, rowsPerStatement), (from) => statement(from, Math.min(count, from + rowsPerStatement))))
        )

    /** The common case; fails with `null` when an id is already in the log (then nothing was stored). */
    const appendAllNew = (unique: ReadonlyArray<MarketEvent>, given: ReadonlyArray<string | undefined> | undefined): Effect.Effect<AppendResult, SqlError | null> =>
      chunked(unique.length, (from, to) => insertNew(unique, given, from, to)).pipe(
        Effect.map((results): AppendResult => {
          let firstSeq = 0
          let lastSeq = 0
          let inserted = 0
          for (const result of results) {
            inserted += result.inserted
            if (result.lastSeq > lastSeq) lastSeq = result.lastSeq
            if (result.firstSeq > 0 && (firstSeq === 0 || result.firstSeq < firstSeq)) firstSeq = result.firstSeq
          }
          // The INSERT has no ON CONFLICT: it stored every row or failed.
          if (inserted !== unique.length) throw new Error(`append: ${inserted} of ${unique.length} rows inserted`)
          return { accepted: unique, duplicates: 0, firstSeq, lastSeq }
        }),
        Effect.catchIf(isKnownId, () => Effect.fail(null))
      )

    const appendSkippingKnown = (unique: ReadonlyArray<MarketEvent>, given: ReadonlyArray<string | undefined> | undefined): Effect.Effect<AppendResult, SqlError> =>
      Effect.map(chunked(unique.length, (from, to) => insertSkippingKnown(unique, given, from, to)), (chunks): AppendResult => {
        const inserted = new Map<string, number>()
        for (const rows of chunks) for (const row of rows) inserted.set(row.id, Number(row.seq))
        const accepted: Array<MarketEvent> = []
        let firstSeq = 0
        let lastSeq = 0
        for (const event of unique) {
          const seq = inserted.get(event.id)
          if (seq === undefined) continue
          accepted.push(event)
          if (seq > lastSeq) lastSeq = seq
          if (firstSeq === 0 || seq < firstSeq) firstSeq = seq
        }
        return { accepted, duplicates: 0, firstSeq, lastSeq }
      })

    /** The batch without repeated ids (the first occurrence of each is kept, with its body). */
    const withoutRepeats = (events: ReadonlyArray<MarketEvent>, bodies: ReadonlyArray<string | undefined> | undefined) => {
      const seen = new Set<string>()
      const kept: Array<MarketEvent> = []
      const keptBodies: Array<string | undefined> = []
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!
        if (seen.has(event.id)) continue
        seen.add(event.id)
        kept.push(event)
        keptBodies.push(bodies?.[i])
      }
      return { unique: kept, given: bodies === undefined ? undefined : keptBodies }
    }

    const append = (events: ReadonlyArray<MarketEvent>, bodies?: ReadonlyArray<string | undefined>): Effect.Effect<AppendResult, StoreUnavailable> =>
      Effect.suspend(() => {
        if (events.length === 0) return Effect.succeed<AppendResult>({ accepted: [], duplicates: 0, firstSeq: 0, lastSeq: 0 })
        // The common case goes in as given, without looking for repeated ids first: a repeat
        // inside the batch violates the unique constraint just as an id already in the log does,
        // the plain INSERT then stores nothing, and the fallback drops the repeats (the first
        // occurrence is the one stored; the others count as duplicates) before skipping known ids.
        const write = appendAllNew(events, bodies).pipe(
          Effect.catch((error) => {
            if (error !== null) return Effect.fail(error)
            const { given, unique } = withoutRepeats(events, bodies)
            return appendSkippingKnown(unique, given)
          })
        )
        return Effect.map(bounded("append", write), (result): AppendResult => ({ ...result, duplicates: events.length - result.accepted.length }))
      })

    const rowsAfter = (afterSeq: number, batchSize: number) =>
      bounded(
        "replay",
        sql<{ readonly seq: bigint | string | number; readonly body: string }>`
          SELECT seq, body FROM market_events WHERE seq > ${afterSeq} ORDER BY seq LIMIT ${batchSize}`
      )

    const page = (afterSeq: number, batchSize: number) =>
      Effect.map(rowsAfter(afterSeq, batchSize), (rows) => {
        const chunk = new Array<StoredEvent>(rows.length)
        for (let i = 0; i < rows.length; i++) {
          const seq = Number(rows[i]!.seq)
          chunk[i] = { seq, event: decodeStoredText(rows[i]!.body, seq) }
        }
        return chunk
      })

    const textPage = (afterSeq: number, batchSize: number) =>
      Effect.map(rowsAfter(afterSeq, batchSize), (rows) => {
        const chunk = new Array<StoredText>(rows.length)
        for (let i = 0; i < rows.length; i++) chunk[i] = { seq: Number(rows[i]!.seq), text: rows[i]!.body }
        return chunk
      })

    /**
     * Waits until no append is in flight: takes the writers' lock in a statement of its own (its
     * implicit transaction lets it go at once), not in a `BEGIN`/`COMMIT` (see `bounded`).
     */
    const writersDone = bounded("replay", writerLock)

    /** Pages of the log after `afterSeq`, the first once no append is in flight. */
    const pages = <A extends { readonly seq: number }>(read: (after: number, batchSize: number) => Effect.Effect<ReadonlyArray<A>, StoreUnavailable>) =>
    (afterSeq: number, batchSize: number): Stream.Stream<ReadonlyArray<A>, StoreUnavailable> =>
      Stream.paginate(afterSeq, (after) =>
        Effect.map(after === afterSeq ? Effect.andThen(writersDone, read(after, batchSize)) : read(after, batchSize), (chunk) =>
          [
            chunk.length === 0 ? [] : [chunk],
            chunk.length < batchSize ? Option.none() : Option.some(chunk[chunk.length - 1]!.seq)
          ] as const)
      ).pipe(Stream.buffer({ capacity: 2 }))

    const replay = pages(page)
    const replayText = pages(textPage)

    const head = bounded(
      "head",
      sql<{ readonly seq: bigint | string | number; readonly occurred_at: bigint | string | number }>`
        SELECT seq, occurred_at FROM market_events ORDER BY seq DESC LIMIT 1`
    ).pipe(Effect.map((rows) => (rows.length === 0 ? null : { seq: Number(rows[0]!.seq), timestamp: Number(rows[0]!.occurred_at) })))

    return EventStore.of({ append, replay, replayText, head })
  })

export const layer = (options: PgEventStoreOptions = {}): Layer.Layer<EventStore, never, SqlClient.SqlClient> =>
  Layer.effect(EventStore, make(options))

