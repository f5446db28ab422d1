/**
 * `EventStore` on PostgreSQL: the append-only `market_events` log (see Migrations.ts and
 * docs/storage.md).
 *
 * Append: one transaction; rows go in through `unnest` of four arrays (four bind parameters
 * whatever the batch size, so the 65,535-parameter limit never applies), in chunks that keep a
 * statement's message a few megabytes; `ON CONFLICT (id) DO NOTHING RETURNING id, seq` tells which
 * ids were new. Replay: keyset pages (`seq > last ORDER BY seq LIMIT n`), the next page read
 * while the previous one is folded.
 */
import { Duration, Effect, Layer, Option, Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { EventStore, StoreUnavailable } from "@spot/application"
import type { AppendResult, EventStoreShape, StoredEvent } from "@spot/application"
import { Events } from "@spot/domain"
import type { MarketEvent } from "@spot/domain"

export interface PgEventStoreOptions {
  /** Rows per INSERT statement inside the append's one transaction. */
  readonly rowsPerStatement?: number
  /** An append or a replay page slower than this fails as unavailable (a cut network hangs otherwise). */
  readonly timeout?: Duration.Input
}

/** The stored text of an event: its wire JSON. */
export const bodyOf = (event: MarketEvent): string => JSON.stringify(Events.encodeMarketEvent(event))

const decodeBody = (seq: number, body: string): MarketEvent => {
  const decoded = Events.decodeMarketEvent(JSON.parse(body))
  if (decoded._tag === "Success") return decoded.value
  // A stored event that no longer decodes is a broken deployment (an incompatible schema change),
  // not an outage: stop loudly rather than serve a market missing events.
  throw new Error(`stored event seq ${seq} does not decode: ${String(decoded.cause)}`)
}

const unavailable = (what: string) => (cause: unknown) =>
  new StoreUnavailable({ message: `event store unavailable (${what})`, cause })

interface InsertedRow {
  readonly id: string
  readonly seq: bigint | string | number
}

export const make = (options: PgEventStoreOptions = {}): Effect.Effect<EventStoreShape, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rowsPerStatement = options.rowsPerStatement ?? 5_000
    const timeout = options.timeout ?? Duration.seconds(15)

    const bounded = <A>(what: string, effect: Effect.Effect<A, SqlError>): Effect.Effect<A, StoreUnavailable> =>
      effect.pipe(
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(unavailable(`${what} timed out`)(undefined)) }),
        Effect.mapError((error) => (error instanceof StoreUnavailable ? error : unavailable(what)(error)))
      )

    const insertChunk = (events: ReadonlyArray<MarketEvent>, from: number, to: number) => {
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
        bodies[i] = bodyOf(event)
      }
      return sql<InsertedRow>`
        INSERT INTO market_events (id, type, occurred_at, body)
        SELECT * FROM unnest(${ids}::text[], ${types}::text[], ${times}::int8[], ${bodies}::text[])
        ON CONFLICT (id) DO NOTHING
        RETURNING id, seq`
    }

    const append = (events: ReadonlyArray<MarketEvent>): Effect.Effect<AppendResult, StoreUnavailable> =>
      Effect.suspend(() => {
        // Repeats inside the batch count as duplicates; the first occurrence is the one stored.
        const seen = new Set<string>()
        const unique: Array<MarketEvent> = []
        for (const event of events) {
          if (seen.has(event.id)) continue
          seen.add(event.id)
          unique.push(event)
        }
        if (unique.length === 0) return Effect.succeed<AppendResult>({ accepted: [], duplicates: events.length, lastSeq: 0 })
        const write = Effect.gen(function*() {
          const inserted = new Map<string, number>()
          for (let from = 0; from < unique.length; from += rowsPerStatement) {
            const rows = yield* insertChunk(unique, from, Math.min(unique.length, from + rowsPerStatement))
            for (const row of rows) inserted.set(row.id, Number(row.seq))
          }
          return inserted
        })
        return Effect.map(bounded("append", sql.withTransaction(write)), (inserted): AppendResult => {
          const accepted: Array<MarketEvent> = []
          let lastSeq = 0
          for (const event of unique) {
            const seq = inserted.get(event.id)
            if (seq === undefined) continue
            accepted.push(event)
            if (seq > lastSeq) lastSeq = seq
          }
          return { accepted, duplicates: events.length - accepted.length, lastSeq }
        })
      })

    const page = (afterSeq: number, batchSize: number) =>
      bounded(
        "replay",
        sql<{ readonly seq: bigint | string | number; readonly body: string }>`
          SELECT seq, body FROM market_events WHERE seq > ${afterSeq} ORDER BY seq LIMIT ${batchSize}`
      ).pipe(
        Effect.map((rows) => {
          const chunk = new Array<StoredEvent>(rows.length)
          for (let i = 0; i < rows.length; i++) {
            const seq = Number(rows[i]!.seq)
            chunk[i] = { seq, event: decodeBody(seq, rows[i]!.body) }
          }
          return chunk
        })
      )

    const replay = (afterSeq: number, batchSize: number): Stream.Stream<ReadonlyArray<StoredEvent>, StoreUnavailable> =>
      Stream.paginate(afterSeq, (after) =>
        Effect.map(page(after, batchSize), (chunk) =>
          [
            chunk.length === 0 ? [] : [chunk],
            chunk.length < batchSize ? Option.none() : Option.some(chunk[chunk.length - 1]!.seq)
          ] as const)
      ).pipe(Stream.buffer({ capacity: 2 }))

    const head = bounded(
      "head",
      sql<{ readonly seq: bigint | string | number; readonly occurred_at: bigint | string | number }>`
        SELECT seq, occurred_at FROM market_events ORDER BY seq DESC LIMIT 1`
    ).pipe(Effect.map((rows) => (rows.length === 0 ? null : { seq: Number(rows[0]!.seq), timestamp: Number(rows[0]!.occurred_at) })))

    return EventStore.of({ append, replay, head })
  })

export const layer = (options: PgEventStoreOptions = {}): Layer.Layer<EventStore, never, SqlClient.SqlClient> =>
  Layer.effect(EventStore, make(options))

