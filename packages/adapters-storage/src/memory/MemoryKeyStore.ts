/**
 * In-memory `KeyStore`: keys hashed with SHA-256 (see ApiKeyHash), looked up by hash, compared in
 * constant time. Seeded from configuration: `SPOT_API_KEYS`, comma-separated plain keys, hashed
 * on load and then forgotten. For development, tests and single-node demos; the PostgreSQL store
 * replaces it where keys must survive a restart.
 */
import { Clock, Config, Effect, Layer, Redacted } from "effect"
import { KeyStore, keyExpiryOf } from "@spot/application"
import type { ApiKeyRecord } from "@spot/application"
import { generateApiKey, hashApiKey, sameHash } from "./ApiKeyHash.js"

interface StoredKey {
  readonly hash: string
  record: ApiKeyRecord
}

export interface MemoryKeyStoreOptions {
  /** Plain keys accepted from the start (named `configured-1`, `configured-2`, ...). */
  readonly seedKeys?: ReadonlyArray<Redacted.Redacted<string>>
}

/** Builds the store. Record ids are `key_` + a counter: unique within one process. */
export const make = (options: MemoryKeyStoreOptions = {}) =>
  Effect.gen(function*() {
    const byHash = new Map<string, StoredKey>()
    const byId = new Map<string, StoredKey>()
    let nextId = 1
    const createdAt = yield* Clock.currentTimeMillis

    const insert = (hash: string, name: string, created: number, expiresAt: number | null): StoredKey => {
      const stored: StoredKey = {
        hash,
        record: { id: `key_${nextId++}`, name, createdAt: created, expiresAt, revokedAt: null }
      }
      byHash.set(hash, stored)
      byId.set(stored.record.id, stored)
      return stored
    }

    for (const seed of options.seedKeys ?? []) {
      const hash = hashApiKey(Redacted.value(seed))
      if (!byHash.has(hash)) insert(hash, `configured-${nextId}`, createdAt, null)
    }

    return KeyStore.of({
      verify: (presentedKey) =>
        Effect.sync(() => {
          const hash = hashApiKey(Redacted.value(presentedKey))
          const stored = byHash.get(hash)
          return stored !== undefined && sameHash(stored.hash, hash) ? stored.record : null
        }),
      create: Effect.fn("MemoryKeyStore.create")(function*(input) {
        const now = yield* Clock.currentTimeMillis
        const key = generateApiKey()
        const stored = insert(hashApiKey(key), input.name, now, keyExpiryOf(input, now))
        return { record: stored.record, key: Redacted.make(key, { label: "ApiKey" }) }
      }),
      list: Effect.sync(() => Array.from(byId.values(), (stored) => stored.record)),
      revoke: Effect.fn("MemoryKeyStore.revoke")(function*(id) {
        const stored = byId.get(id)
        if (stored === undefined) return null
        if (stored.record.revokedAt === null) {
          stored.record = { ...stored.record, revokedAt: yield* Clock.currentTimeMillis }
        }
        return stored.record
      })
    })
  })

/** The store with the given seed keys. */
export const layer = (options: MemoryKeyStoreOptions = {}): Layer.Layer<KeyStore> => Layer.effect(KeyStore, make(options))

/** `SPOT_API_KEYS`: comma-separated plain keys; blanks ignored; absent means no key. */
export const seedKeysConfig: Config.Config<ReadonlyArray<Redacted.Redacted<string>>> = Config.Redacted("SPOT_API_KEYS").pipe(
  Config.map((all) =>
    Redacted.value(all)
      .split(",")
      .map((key) => key.trim())
      .filter((key) => key.length > 0)
      .map((key) => Redacted.make(key, { label: "ApiKey" }))
  ),
  Config.withDefault<ReadonlyArray<Redacted.Redacted<string>>>([])
)

/** The store seeded from `SPOT_API_KEYS`. */
export const layerConfig: Layer.Layer<KeyStore, Config.ConfigError> = Layer.effect(
  KeyStore,
  Effect.flatMap(seedKeysConfig, (seedKeys) => make({ seedKeys }))
)
