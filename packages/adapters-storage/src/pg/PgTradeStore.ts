/**
 * `TradeStore` on PostgreSQL (Migrations.ts, docs/storage.md "Trade history"): a token's blocks of
 * trades that left memory in `trade_archive_blocks`, one row per block keyed by its oldest trade,
 * and late trades in `trade_archive`, one row per trade. A write is one statement: both inserts
 * through `unnest` of array parameters, `ON CONFLICT DO NOTHING` (a replay writes the same groups
 * again), and the archive's `last_seq` (the highest `leftAt`) moved in the same statement. A page
 * is one statement of two range scans: the newest blocks holding trades older than the position
 * (blocks never overlap, so by their oldest trade they are in trade order) and the newest late
 * trades older than it; merged here.
 */
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { float8Array, textArray } from "./ArrayParameters.js"
import { isOlder, newestFirst, StoreUnavailable, TradeStore } from "@spot/application"
import type { TradePosition, TradeStoreShape } from "@spot/application"
import type { Chain as ChainSlug, TradeRecord, TradesLeftMemory } from "@spot/domain"
import { stableKeyOf, tradesFromArchive, tradesToArchive } from "@spot/domain"
type Chain = ChainSlug.Chain

export interface PgTradeStoreOptions {
  /** A write or read slower than this fails as unavailable. */
  readonly timeout?: Duration.Input
}

/** The token's 53-bit key: one half of the trade-id hash of "chain:token" (see Migrations.ts). */
const tokenKey = (chain: string, token: string): number => stableKeyOf(`${chain}:${token}`)

/** A (timestamp, seq) beyond every real trade: "from the newest". */
const newest: TradePosition = { timestamp: Number.MAX_SAFE_INTEGER, seq: Number.MAX_SAFE_INTEGER }

/** Blocks read per page beyond what `limit` needs when blocks hold at least this many trades. */
const assumedBlockTrades = 16

/** A write's rows of one table, column by column (for `unnest`). */
const newColumns = () => ({
  keys: [] as Array<number>,
  times: [] as Array<number>,
  seqs: [] as Array<number>,
  chains: [] as Array<string>,
  tokens: [] as Array<string>,
  counts: [] as Array<number>,
  bodies: [] as Array<string>
})

interface Row {
  readonly late: boolean
  readonly at: bigint | string | number
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

    const write = (groups: ReadonlyArray<TradesLeftMemory>): Effect.Effect<void, StoreUnavailable> =>
      Effect.suspend(() => {
        if (groups.length === 0) return Effect.void
        // blocks: one row each, keyed by the oldest trade; late trades: one row each
        const block = newColumns()
        const late = newColumns()
        let last = 0
        for (const group of groups) {
          const rows = group.late ? late : block
          const oldest = group.trades[group.trades.length - 1]!
          rows.keys.push(tokenKey(group.chain, group.token))
          rows.times.push(oldest.timestamp)
          rows.seqs.push(oldest.seq)
          rows.chains.push(group.chain)
          rows.tokens.push(group.token)
          rows.counts.push(group.trades.length)
          rows.bodies.push(tradesToArchive(group.trades))
          if (group.leftAt > last) last = group.leftAt
        }
        // Times and seqs travel as float8 (exact for the safe integers they are) and are cast back.
        return bounded(
          "write",
          sql`
            WITH blocks AS (
              INSERT INTO trade_archive_blocks (token_key, oldest_at, oldest_seq, chain, token, trades, body)
              SELECT u.token_key::int8, u.oldest_at::int8, u.oldest_seq::int8, u.chain, u.token, u.trades::int4, u.body
              FROM unnest(${float8Array(block.keys)}::float8[], ${float8Array(block.times)}::float8[], ${float8Array(block.seqs)}::float8[],
                ${textArray(block.chains)}::text[], ${textArray(block.tokens)}::text[], ${float8Array(block.counts)}::float8[],
                ${textArray(block.bodies)}::text[])
                AS u(token_key, oldest_at, oldest_seq, chain, token, trades, body)
              ON CONFLICT DO NOTHING
            ), late AS (
              INSERT INTO trade_archive (token_key, occurred_at, seq, chain, token, body)
              SELECT u.token_key::int8, u.occurred_at::int8, u.seq::int8, u.chain, u.token, u.body
              FROM unnest(${float8Array(late.keys)}::float8[], ${float8Array(late.times)}::float8[], ${float8Array(late.seqs)}::float8[],
                ${textArray(late.chains)}::text[], ${textArray(late.tokens)}::text[], ${textArray(late.bodies)}::text[])
                AS u(token_key, occurred_at, seq, chain, token, body)
              ON CONFLICT DO NOTHING
            )
            UPDATE spot_trade_archive_state SET last_seq = greatest(last_seq, ${last})`
        ).pipe(Effect.asVoid)
      })

    /**
     * The newest `blocks` blocks with a trade older than `from` and the newest `lateTrades` late
     * trades older than it, in one statement.
     */
    const read = (chain: Chain, token: string, from: TradePosition, blocks: number, lateTrades: number) => {
      const key = tokenKey(chain, token)
      return sql<Row>`
        (SELECT false AS late, oldest_at AS at, oldest_seq AS seq, body FROM trade_archive_blocks
          WHERE token_key = ${key} AND chain = ${chain} AND token = ${token} AND (oldest_at, oldest_seq) < (${from.timestamp}, ${from.seq})
          ORDER BY oldest_at DESC, oldest_seq DESC LIMIT ${blocks})
        UNION ALL
        (SELECT true AS late, occurred_at AS at, seq, body FROM trade_archive
          WHERE token_key = ${key} AND chain = ${chain} AND token = ${token} AND (occurred_at, seq) < (${from.timestamp}, ${from.seq})
          ORDER BY occurred_at DESC, seq DESC LIMIT ${lateTrades})`
    }

    const older = (chain: Chain, token: string, before: TradePosition | null, limit: number) =>
      bounded(
        "page",
        Effect.gen(function*() {
          const found: Array<TradeRecord> = []
          const perRead = 1 + Math.ceil(limit / assumedBlockTrades)
          let from = before ?? newest
          let blockTrades = 0
          let lateWanted = limit
          // Blocks come newest first and never overlap; after the first (which may straddle
          // `before`), each gives all its trades. Read until `limit` block trades are in hand or
          // the blocks run out; late trades come from their own scan, `limit` at most.
          for (;;) {
            const rows = yield* read(chain, token, from, perRead, lateWanted)
            let blocksRead = 0
            for (const row of rows) {
              let older = 0
              for (const trade of tradesFromArchive(chain, token, row.body)) {
                if (!isOlder(trade, before)) continue
                found.push(trade)
                older++
              }
              if (!row.late) {
                blocksRead++
                blockTrades += older
                from = { timestamp: Number(row.at), seq: Number(row.seq) }
              }
            }
            lateWanted = 0
            if (blocksRead < perRead || blockTrades >= limit) break
          }
          return found.sort(newestFirst).slice(0, limit)
        })
      )

    const lastLeftAt = bounded("last leftAt", sql<{ readonly last_seq: bigint | string | number }>`SELECT last_seq FROM spot_trade_archive_state`).pipe(
      Effect.map((rows) => (rows.length === 0 ? 0 : Number(rows[0]!.last_seq)))
    )

    return TradeStore.of({ write, older, lastLeftAt })
  })

export const layer = (options: PgTradeStoreOptions = {}): Layer.Layer<TradeStore, never, SqlClient.SqlClient> =>
  Layer.effect(TradeStore, make(options))
