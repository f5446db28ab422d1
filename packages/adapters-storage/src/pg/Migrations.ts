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

export const loader = Migrator.fromRecord({
  "1_create_event_log": createEventLog,
  "2_create_api_keys": createApiKeys,
  "3_create_log_identity": createLogIdentity
})

/** Runs the migrations not yet applied; returns those it ran. */
export const run = Migrator.make({})({ loader, table: migrationsTable })
