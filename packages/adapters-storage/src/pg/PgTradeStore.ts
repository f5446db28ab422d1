/**
 * `TradeStore` on PostgreSQL: the `trade_archive` table (Migrations.ts, docs/storage.md "Trade
 * history"). A write is one statement: the rows through `unnest` of six array parameters, `ON
 * CONFLICT DO NOTHING` (a replay writes the same trades again), and the archive's `last_seq`
 * moved in the same statement. A page is one range scan of the primary key, newest first.
 */
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { float8Array, textArray } from "./ArrayParameters.js"
import { StoreUnavailable, TradeStore } from "@spot/application"
import type { ArchivedTrade, TradePosition, TradeStoreShape } from "@spot/application"
import type { Chain as ChainSlug } from "@spot/domain"
import { stableKeyOf } from "@spot/domain"
type Chain = ChainSlug.Chain

export interface PgTradeStoreOptions {
  /** A write or read slower than this fails as unavailable. */
  readonly timeout?: Duration.Input
}


/** The token's 53-bit key: one half of the trade-id hash of "chain:token" (see Migrations.ts). */
const tokenKey = (chain: string, token: string): number => stableKeyOf(`${chain}:${token}`)

interface Row {
  readonly occurred_at: bigint | string | number
  readonly seq: bigint | string | number
  readonly body: string
}

export const make = (options: PgTradeStoreOptions = {}): Effect.Effect<TradeStoreShape, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const timeout = options.timeout ?? Duration.seconds(15)
    const bounded = <A>(what: string, effect: Effect.Effect<A, SqlError>): Effect.Effect<A, StoreUnavailable> =>
      effect.pipe(
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new StoreUnavailable({ message: `trade archive unavailable (${what} timed out)` })) }),
        Effect.mapError((error) => (error instanceof StoreUnavailable ? error : new StoreUnavailable({ message: `trade archive unavailable (${what})`, cause: error })))
      )

    const write = (trades: ReadonlyArray<ArchivedTrade>): Effect.Effect<void, StoreUnavailable> =>
      Effect.suspend(() => {
        if (trades.length === 0) return Effect.void
        const n = trades.length
        const keys = new Array<number>(n)
        const chains = new Array<string>(n)
        const tokens = new Array<string>(n)
        const times = new Array<number>(n)
        const seqs = new Array<number>(n)
        const bodies = new Array<string>(n)
        let last = 0
        for (let i = 0; i < n; i++) {
          const trade = trades[i]!
          keys[i] = tokenKey(trade.chain, trade.token)
          chains[i] = trade.chain
          tokens[i] = trade.token
          times[i] = trade.timestamp
          seqs[i] = trade.seq
          bodies[i] = trade.body
          if (trade.seq > last) last = trade.seq
        }
        // Times and seqs travel as float8 (exact for the safe integers they are) and are cast back.
        return bounded(
          "write",
          sql`
            WITH stored AS (
              INSERT INTO trade_archive (token_key, occurred_at, seq, chain, token, body)
              SELECT u.token_key::int8, u.occurred_at::int8, u.seq::int8, u.chain, u.token, u.body
              FROM unnest(${float8Array(keys)}::float8[], ${float8Array(times)}::float8[], ${float8Array(seqs)}::float8[],
                ${textArray(chains)}::text[], ${textArray(tokens)}::text[], ${textArray(bodies)}::text[])
                AS u(token_key, occurred_at, seq, chain, token, body)
              ON CONFLICT DO NOTHING
            )
            UPDATE spot_trade_archive_state SET last_seq = greatest(last_seq, ${last})`
        ).pipe(Effect.asVoid)
      })

    const older = (chain: Chain, token: string, before: TradePosition | null, limit: number) =>
      bounded(
        "page",
        before === null
          ? sql<Row>`
              SELECT occurred_at, seq, body FROM trade_archive
              WHERE token_key = ${tokenKey(chain, token)} AND chain = ${chain} AND token = ${token}
              ORDER BY occurred_at DESC, seq DESC LIMIT ${limit}`
          : sql<Row>`
              SELECT occurred_at, seq, body FROM trade_archive
              WHERE token_key = ${tokenKey(chain, token)} AND chain = ${chain} AND token = ${token}
                AND (occurred_at, seq) < (${before.timestamp}, ${before.seq})
              ORDER BY occurred_at DESC, seq DESC LIMIT ${limit}`
      ).pipe(
        Effect.map((rows) =>
          rows.map((row): ArchivedTrade => ({ chain, token, timestamp: Number(row.occurred_at), seq: Number(row.seq), body: row.body }))
        )
      )

    const lastSeq = bounded("last seq", sql<{ readonly last_seq: bigint | string | number }>`SELECT last_seq FROM spot_trade_archive_state`).pipe(
      Effect.map((rows) => (rows.length === 0 ? 0 : Number(rows[0]!.last_seq)))
    )

    return TradeStore.of({ write, older, lastSeq })
  })

export const layer = (options: PgTradeStoreOptions = {}): Layer.Layer<TradeStore, never, SqlClient.SqlClient> =>
  Layer.effect(TradeStore, make(options))
