/**
 * Port: where API keys live. Implementations keep only a one-way hash of each key (never the key),
 * compare in constant time, and never log a key (keys travel as `Redacted`).
 */
import { Clock, Context, Data, Effect, Layer, Redacted } from "effect"
import type { ApiKeyRecord } from "../auth/ApiKey.js"

/**
 * The store cannot answer right now (database down, timeout). Never means "bad key": the HTTP
 * adapter answers 503 SERVICE_UNAVAILABLE, not 401 (spec "Authentication", rule 6).
 */
export class KeyStoreUnavailable extends Data.TaggedError("KeyStoreUnavailable")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** A key just created: the only moment its plain value exists outside the client. */
export interface CreatedApiKey {
  readonly record: ApiKeyRecord
  readonly key: Redacted.Redacted<string>
}

export interface NewApiKey {
  readonly name: string
  /** Unix ms after which the key is refused; omitted or null: never expires. */
  readonly expiresAt?: number | null
  /**
   * Or: how long the key lives from its creation, in ms (wins over `expiresAt`). The store dates
   * the key, so only it can make `expiresAt` exactly `createdAt` + the lifetime.
   */
  readonly lifetimeMs?: number | null
}

/** The `expiresAt` of a key `input` asks for, created at `createdAt`. */
export const keyExpiryOf = (input: NewApiKey, createdAt: number): number | null =>
  input.lifetimeMs !== undefined && input.lifetimeMs !== null ? createdAt + input.lifetimeMs : input.expiresAt ?? null

export interface KeyStoreShape {
  /**
   * The record of the key presented, or null when no key has that value. Revoked and expired
   * records are returned as they are: deciding whether one may be used is `ApiKey.isUsable`.
   */
  readonly verify: (presentedKey: Redacted.Redacted<string>) => Effect.Effect<ApiKeyRecord | null, KeyStoreUnavailable>
  readonly create: (input: NewApiKey) => Effect.Effect<CreatedApiKey, KeyStoreUnavailable>
  readonly list: Effect.Effect<ReadonlyArray<ApiKeyRecord>, KeyStoreUnavailable>
  /** Marks the key revoked (idempotent: the first revocation time is kept); null if no such id. */
  readonly revoke: (id: string) => Effect.Effect<ApiKeyRecord | null, KeyStoreUnavailable>
}

/**
 * How a store makes and hashes keys. That is cryptography, so it comes from an adapter (the storage
 * adapter's `ApiKeyHash`, on node:crypto); the memory store is given it.
 */
export interface ApiKeyHashing {
  /** A fresh random key. */
  readonly generate: () => string
  /** The stored form of a key: one-way, the same for the same key. */
  readonly hash: (key: string) => string
  /** Whether two stored forms are the same, compared in constant time. */
  readonly sameHash: (a: string, b: string) => boolean
}

export interface MemoryKeyStoreOptions {
  readonly hashing: ApiKeyHashing
  /** Plain keys accepted from the start (named `configured-1`, `configured-2`, ...), hashed and then forgotten. */
  readonly seedKeys?: ReadonlyArray<Redacted.Redacted<string>>
}

interface StoredKey {
  readonly hash: string
  record: ApiKeyRecord
}

/**
 * The keys in memory, looked up by hash and compared in constant time. Record ids are `key_` + a
 * counter: unique within one process. For development, tests and single-node demos; the file and
 * PostgreSQL stores replace it where keys must survive a restart.
 */
const makeMemory = ({ hashing, seedKeys = [] }: MemoryKeyStoreOptions): Effect.Effect<KeyStoreShape> =>
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

    for (const seed of seedKeys) {
      const hash = hashing.hash(Redacted.value(seed))
      if (!byHash.has(hash)) insert(hash, `configured-${nextId}`, createdAt, null)
    }

    return {
      verify: (presentedKey) =>
        Effect.sync(() => {
          const hash = hashing.hash(Redacted.value(presentedKey))
          const stored = byHash.get(hash)
          return stored !== undefined && hashing.sameHash(stored.hash, hash) ? stored.record : null
        }),
      create: Effect.fn("MemoryKeyStore.create")(function*(input) {
        const now = yield* Clock.currentTimeMillis
        const key = hashing.generate()
        const stored = insert(hashing.hash(key), input.name, now, keyExpiryOf(input, now))
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
    }
  })

export class KeyStore extends Context.Service<KeyStore, KeyStoreShape>()("@spot/application/KeyStore") {
  /** A new key store in memory, holding the seed keys (dated by the clock when it is made). */
  static readonly makeMemory: (options: MemoryKeyStoreOptions) => Effect.Effect<KeyStoreShape> = makeMemory
  /** A new key store in memory each time the layer is built, holding the seed keys. */
  static readonly layerMemory = (options: MemoryKeyStoreOptions): Layer.Layer<KeyStore> => Layer.effect(KeyStore, makeMemory(options))
}
