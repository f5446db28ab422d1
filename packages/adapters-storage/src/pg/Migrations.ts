/**
 * The schema, as versioned migrations kept in code (no files to ship next to the bundle), run at
 * start-up by effect/sql's Migrator: each runs once, in id order, inside a transaction, under a
 * table lock so two servers starting together do not both migrate. Append new migrations; never
 * edit one that has shipped.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"

/** Where the Migrator records what ran. */
export const migrationsTable = "spot_migrations"

const createEventLog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The durable event log: the source of truth (docs/storage.md). `seq` is the replay order;
  // `id` the event's identity (ingest de-duplicates on it); `body` the event's JSON exactly as
  // encodeMarketEvent writes it, stored as text (no jsonb parse on the write path: nothing
  // queries inside it). `type` and `occurred_at` are for operators and for resuming.
  yield* sql`
    CREATE TABLE market_events (
      seq bigserial PRIMARY KEY,
      id text NOT NULL,
      type text NOT NULL,
      occurred_at bigint NOT NULL,
      body text NOT NULL,
      stored_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT market_events_id_unique UNIQUE (id)
    )`
})

const createApiKeys = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Hashes only (SHA-256 base64url of the key, see ApiKeyHash), never a key. Times in Unix ms.
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      hash text NOT NULL UNIQUE,
      name text NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint,
      revoked_at bigint
    )`
})

const createLogIdentity = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The event log's identity: one row, a random id made with the database. Engine snapshots
  // record it and are refused by any other log (docs/storage.md, "Snapshots").
  yield* sql`
    CREATE TABLE spot_log_identity (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      log_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`INSERT INTO spot_log_identity (log_id) VALUES (gen_random_uuid()::text)`
})

const createTradeArchive = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Trades past memory (docs/storage.md, "Trade history"): each trade as the engine made it,
  // keyed and ordered as trade pages read them (a token's trades, newest first by time then seq),
  // so a page is one index range scan. `token_key` is a 53-bit hash of chain and token: a narrow
  // key (the index is most of a write's cost); pages also match `chain` and `token`, so a hash
  // shared by two tokens costs a longer scan, never a wrong row. `spot_trade_archive_state.last_seq`:
  // every trade up to it is stored (writes go in seq order), kept with each write in the same statement.
  yield* sql`
    CREATE TABLE trade_archive (
      token_key bigint NOT NULL,
      occurred_at bigint NOT NULL,
      seq bigint NOT NULL,
      chain text NOT NULL,
      token text NOT NULL,
      body text NOT NULL,
      PRIMARY KEY (token_key, occurred_at, seq)
    )`
  yield* sql`
    CREATE TABLE spot_trade_archive_state (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      last_seq bigint NOT NULL
    )`
  yield* sql`INSERT INTO spot_trade_archive_state (last_seq) VALUES (0)`
})

// The trade archive stores what leaves the engine's memory in groups (docs/storage.md, "Trade
// history"): a token's blocks of oldest trades, one row per block, keyed by the block's oldest
// trade — blocks of a token never overlap, so ordered by their oldest trade they are ordered by
// every trade, and a page is one range scan — and, in `trade_archive`, the rare late trade
// (older than a trade that already left), one row per trade as before. Rows written in the
// earlier one-row-per-trade format are cleared: the engine state version moved with this change,
// so a start replays the log and writes every group again. `spot_trade_archive_state.last_seq`
// now holds the highest `leftAt` written (groups are written in that order).
const createTradeArchiveBlocks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE trade_archive_blocks (
      token_key bigint NOT NULL,
      oldest_at bigint NOT NULL,
      oldest_seq bigint NOT NULL,
      chain text NOT NULL,
      token text NOT NULL,
      trades integer NOT NULL,
      body text NOT NULL,
      PRIMARY KEY (token_key, oldest_at, oldest_seq)
    )`
  yield* sql`TRUNCATE trade_archive`
  yield* sql`UPDATE spot_trade_archive_state SET last_seq = 0`
})

// Event ids compare as bytes (collation "C"): the unique index every append maintains, and every
// duplicate lookup, then compare with memcmp instead of the database's locale rules (a C.UTF-8
// or en_US database goes through strcoll, copying both strings per comparison). Equality, all
// an id is used for, is byte equality under either. Measured on the PostgreSQL 15 server here,
// 300,000 rows of 100-character ids with 700-byte bodies into a table of 300,000: 3.62 s with the
// database's C.UTF-8, 3.17 s with "C". Changing a column's collation rebuilds its index, not the table.
const eventIdsAsBytes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE market_events ALTER COLUMN id TYPE text COLLATE "C"`
})

// Archive bodies are stored without compression. A block's body (25 trades, about 9 KB of JSON
// made mostly of ids, addresses and hashes) is past the 2 KB at which PostgreSQL moves a value out
// of line, and by default it compresses it first with pglz: about a fifth of the database's CPU
// on the ingest path for about half the bytes. `EXTERNAL` still moves it out of line, uncompressed;
// it applies to rows written from now on. Measured (`npm run bench -- ingest --trades 300000
// --ingest-only`, two interleaved pairs): PostgreSQL CPU 11.3 / 12.2 → 9.5 / 9.3 µs per event.
const archiveBodiesUncompressed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE trade_archive_blocks ALTER COLUMN body SET STORAGE EXTERNAL`
  yield* sql`ALTER TABLE trade_archive ALTER COLUMN body SET STORAGE EXTERNAL`
})

export const loader = Migrator.fromRecord({
  "1_create_event_log": createEventLog,
  "2_create_api_keys": createApiKeys,
  "3_create_log_identity": createLogIdentity,
  "4_create_trade_archive": createTradeArchive,
  "5_create_trade_archive_blocks": createTradeArchiveBlocks,
  "6_event_ids_as_bytes": eventIdsAsBytes,
  "7_archive_bodies_uncompressed": archiveBodiesUncompressed
})

/** Runs the migrations not yet applied; returns those it ran. */
export const run = Migrator.make({})({ loader, table: migrationsTable })
