/**
 * `KeyStore` on PostgreSQL (`api_keys`: hashes and records, never a key).
 *
 * `verify` runs on every request, so it never touches the database: the store keeps every key
 * record in memory (one row is about a hundred bytes; a hundred thousand keys are a few MB) and
 * reloads the table every `refreshMs` (1 s) in a background fiber, so keys created or revoked
 * elsewhere (the `keys` command, another server) take effect within about a second, and unknown
 * keys cost no query (a flood of bad keys cannot reach the database). When reloads fail for
 * longer than `maxStaleMs` (10 s), the snapshot is too old to vouch for a key (it could have been
 * revoked since): `verify` then fails with `KeyStoreUnavailable` (HTTP 503, never 401) until a
 * reload succeeds. Keys from configuration (`SPOT_API_KEYS`) are held in memory only and keep
 * working through an outage.
 */
import { Duration, Effect, Exit, Layer, Redacted, Schema, Schedule } from "effect"
import type { Scope } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { randomBytes } from "node:crypto"
import { KeyStore, KeyStoreUnavailable, keyExpiryOf } from "@spot/application"
import type { ApiKeyRecord, KeyStoreShape } from "@spot/application"
import { generateApiKey, hashApiKey, sameHash } from "../memory/ApiKeyHash.js"

export interface PgKeyStoreOptions {
  /** Plain keys accepted besides the table's (hashed on load, never written). */
  readonly seedKeys?: ReadonlyArray<Redacted.Redacted<string>>
  readonly refreshMs?: number
  readonly maxStaleMs?: number
}

/** Unix ms; the queries cast the int8 columns to float8 (exact below 2^53) so they arrive as numbers. */
const Millis = Schema.Number

const KeyRow = Schema.Struct({
  id: Schema.String,
  hash: Schema.String,
  name: Schema.String,
  created_at: Millis,
  expires_at: Schema.NullOr(Millis),
  revoked_at: Schema.NullOr(Millis)
})
type KeyRow = typeof KeyRow.Type

const selectColumns = "id, hash, name, created_at::float8 AS created_at, expires_at::float8 AS expires_at, revoked_at::float8 AS revoked_at"

const recordOf = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at
})

const unavailable = (what: string) => (cause: unknown) => new KeyStoreUnavailable({ message: `key store unavailable (${what})`, cause })

interface StoredKey {
  readonly hash: string
  readonly record: ApiKeyRecord
}

export const make = (options: PgKeyStoreOptions = {}): Effect.Effect<KeyStoreShape, KeyStoreUnavailable, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const refreshMs = options.refreshMs ?? 1_000
    const maxStaleMs = options.maxStaleMs ?? 10_000

    const seeded = new Map<string, StoredKey>()
    let n = 1
    for (const seed of options.seedKeys ?? []) {
      const hash = hashApiKey(Redacted.value(seed))
      seeded.set(hash, { hash, record: { id: `configured-${n}`, name: `configured-${n++}`, createdAt: Date.now(), expiresAt: null, revokedAt: null } })
    }

    const allRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () => sql`SELECT ${sql.literal(selectColumns)} FROM api_keys`
    })
    const rowById = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: KeyRow,
      execute: (id) => sql`SELECT ${sql.literal(selectColumns)} FROM api_keys WHERE id = ${id}`
    })

    let byHash = new Map<string, StoredKey>()
    let loadedAt = -Infinity

    const reload = Effect.map(Effect.mapError(allRows(undefined), unavailable("reload")), (rows) => {
      const next = new Map<string, StoredKey>()
      for (const row of rows) next.set(row.hash, { hash: row.hash, record: recordOf(row) })
      byHash = next
      loadedAt = Date.now()
      return rows
    })

    yield* reload
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.ignore(Effect.delay(reload, Duration.millis(refreshMs))),
        Schedule.forever
      )
    )

    const staleFailure = () =>
      new KeyStoreUnavailable({ message: `key store unavailable: the key table could not be read for ${Math.round((Date.now() - loadedAt) / 1000)} s` })

    return KeyStore.of({
      // An Exit, so the HTTP middleware branches without scheduling (see PlatformMiddleware).
      verify: (presentedKey) =>
        Effect.suspend(() => {
          const hash = hashApiKey(Redacted.value(presentedKey))
          const seed = seeded.get(hash)
          if (seed !== undefined && sameHash(seed.hash, hash)) return Exit.succeed(seed.record)
          if (Date.now() - loadedAt > maxStaleMs) return Exit.fail(staleFailure())
          const stored = byHash.get(hash)
          return Exit.succeed(stored !== undefined && sameHash(stored.hash, hash) ? stored.record : null)
        }),
      create: Effect.fn("PgKeyStore.create")(function*(input) {
        const key = generateApiKey()
        const createdAt = Date.now()
        const record: ApiKeyRecord = {
          id: `key_${randomBytes(8).toString("hex")}`,
          name: input.name,
          createdAt,
          expiresAt: keyExpiryOf(input, createdAt),
          revokedAt: null
        }
        yield* Effect.mapError(
          sql`INSERT INTO api_keys (id, hash, name, created_at, expires_at, revoked_at)
              VALUES (${record.id}, ${hashApiKey(key)}, ${record.name}, ${record.createdAt}, ${record.expiresAt}, NULL)`,
          unavailable("create")
        )
        yield* Effect.ignore(reload)
        return { record, key: Redacted.make(key, { label: "ApiKey" }) }
      }),
      list: Effect.map(reload, (rows) => [...Array.from(seeded.values(), (k) => k.record), ...rows.map(recordOf)]),
      revoke: Effect.fn("PgKeyStore.revoke")(function*(id) {
        // The first revocation time is kept (COALESCE): revoking twice changes nothing.
        yield* Effect.mapError(sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${Date.now()}) WHERE id = ${id}`, unavailable("revoke"))
        const row = yield* Effect.mapError(rowById(id), unavailable("revoke"))
        yield* Effect.ignore(reload)
        return row._tag === "Some" ? recordOf(row.value) : null
      })
    })
  })

export const layer = (options: PgKeyStoreOptions = {}): Layer.Layer<KeyStore, KeyStoreUnavailable, SqlClient.SqlClient> =>
  Layer.effect(KeyStore, make(options))
