/**
 * A `KeyStore` kept in one JSON file (hashes and records only, never a key), so keys made with
 * the `keys` command survive restarts and reach a running server: the server re-reads the file
 * when it changed (checked at most once a second). Keys from `SPOT_API_KEYS` are accepted too,
 * held in memory only. Writes go to a temporary file renamed over the old one, so a reader never
 * sees half a file; a change (read, change, write) holds the lock file `<path>.lock` throughout,
 * so two `keys` commands run at once both land (without it the second write would replace the
 * first: a key printed as stored would be lost).
 */
import { Clock, Effect, Exit, Layer, Redacted } from "effect"
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { randomBytes } from "node:crypto"
import { KeyStore, KeyStoreUnavailable, keyExpiryOf } from "@spot/application"
import type { ApiKeyRecord } from "@spot/application"
import { generateApiKey, hashApiKey, sameHash } from "../memory/ApiKeyHash.js"

interface StoredKey {
  readonly hash: string
  readonly record: ApiKeyRecord
}

export interface FileKeyStoreOptions {
  /** Path of the JSON file; created on the first write. */
  readonly path: string
  /** Plain keys accepted besides the file's (hashed on load, never written). */
  readonly seedKeys?: ReadonlyArray<Redacted.Redacted<string>>
}

const recheckMs = 1_000

const readKeys = (path: string): Array<StoredKey> => {
  if (!existsSync(path)) return []
  const parsed = JSON.parse(readFileSync(path, "utf8")) as { keys?: Array<StoredKey> }
  return Array.isArray(parsed.keys) ? parsed.keys : []
}

const writeKeys = (path: string, keys: ReadonlyArray<StoredKey>): void => {
  mkdirSync(dirname(path), { recursive: true })
  const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`
  writeFileSync(temporary, JSON.stringify({ version: 1, keys }, null, 2), { mode: 0o600 })
  renameSync(temporary, path)
}

const mtimeOf = (path: string): number => (existsSync(path) ? statSync(path).mtimeMs : 0)

/** How long a change waits for another process's lock, and when a lock counts as left behind by a crash. */
const lockWaitMs = 10_000
const staleLockMs = 30_000
const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Runs `change` holding `<path>.lock` (created exclusively: one holder at a time, across
 * processes). A lock older than `staleLockMs` was left by a process that died holding it (a
 * change takes milliseconds) and is taken over; after `lockWaitMs` of waiting it throws.
 */
const withFileLock = <A>(path: string, change: () => A): A => {
  const lock = `${path}.lock`
  mkdirSync(dirname(lock), { recursive: true })
  const deadline = Date.now() + lockWaitMs
  for (;;) {
    try {
      closeSync(openSync(lock, "wx", 0o600))
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      if (Date.now() - mtimeOf(lock) > staleLockMs) {
        try {
          unlinkSync(lock)
        } catch {
          // another waiter took it over first
        }
        continue
      }
      if (Date.now() > deadline) throw new Error(`the key file is locked (${lock}); if no keys command is running, delete the lock file`)
      Atomics.wait(pause, 0, 0, 10)
    }
  }
  try {
    return change()
  } finally {
    unlinkSync(lock)
  }
}

export const make = (options: FileKeyStoreOptions) =>
  Effect.gen(function*() {
    const seeded = new Map<string, StoredKey>()
    const startedAt = yield* Clock.currentTimeMillis
    let n = 1
    for (const seed of options.seedKeys ?? []) {
      const hash = hashApiKey(Redacted.value(seed))
      seeded.set(hash, { hash, record: { id: `configured-${n}`, name: `configured-${n++}`, createdAt: startedAt, expiresAt: null, revokedAt: null } })
    }
    let byHash = new Map<string, StoredKey>()
    let loadedMtime = -1
    let checkedAt = -Infinity

    /** Re-reads the file when it changed; a broken file makes the store unavailable, not empty. */
    const refreshNow = (now: number, force: boolean): KeyStoreUnavailable | undefined => {
      if (!force && now - checkedAt < recheckMs) return undefined
      checkedAt = now
      try {
        const mtime = mtimeOf(options.path)
        if (mtime === loadedMtime) return undefined
        byHash = new Map(readKeys(options.path).map((k) => [k.hash, k]))
        loadedMtime = mtime
        return undefined
      } catch (cause) {
        checkedAt = -Infinity // try again on the next request
        return new KeyStoreUnavailable({ message: `cannot read the key file ${options.path}`, cause })
      }
    }
    const refresh = (now: number, force: boolean): Effect.Effect<void, KeyStoreUnavailable> =>
      Effect.suspend(() => {
        const failure = refreshNow(now, force)
        return failure === undefined ? Effect.void : Effect.fail(failure)
      })

    const update = (change: (keys: Array<StoredKey>) => StoredKey | null) =>
      Effect.try({
        try: () =>
          withFileLock(options.path, () => {
            const keys = readKeys(options.path)
            const result = change(keys)
            writeKeys(options.path, keys)
            return result
          }),
        catch: (cause) => new KeyStoreUnavailable({ message: `cannot write the key file ${options.path}`, cause })
      })

    yield* refresh(startedAt, true)

    return KeyStore.of({
      // Answers with an Exit (no scheduling) on the hot path: a lookup in memory, the file's
      // modification time checked at most once a second.
      verify: (presentedKey) =>
        Effect.suspend(() => {
          const hash = hashApiKey(Redacted.value(presentedKey))
          const seed = seeded.get(hash)
          if (seed !== undefined && sameHash(seed.hash, hash)) return Exit.succeed(seed.record)
          const failure = refreshNow(Date.now(), false)
          if (failure !== undefined) return Exit.fail(failure)
          const stored = byHash.get(hash)
          return Exit.succeed(stored !== undefined && sameHash(stored.hash, hash) ? stored.record : null)
        }),
      create: Effect.fn("FileKeyStore.create")(function*(input) {
        const now = yield* Clock.currentTimeMillis
        const key = generateApiKey()
        const stored: StoredKey = {
          hash: hashApiKey(key),
          record: { id: `key_${randomBytes(8).toString("hex")}`, name: input.name, createdAt: now, expiresAt: keyExpiryOf(input, now), revokedAt: null }
        }
        yield* update((keys) => {
          keys.push(stored)
          return stored
        })
        yield* refresh(now, true)
        return { record: stored.record, key: Redacted.make(key, { label: "ApiKey" }) }
      }),
      list: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(refresh(now, true), () => [...Array.from(seeded.values(), (k) => k.record), ...Array.from(byHash.values(), (k) => k.record)])
      ),
      revoke: Effect.fn("FileKeyStore.revoke")(function*(id) {
        const now = yield* Clock.currentTimeMillis
        const revoked = yield* update((keys) => {
          const at = keys.findIndex((k) => k.record.id === id)
          if (at < 0) return null
          const current = keys[at]!
          const next = current.record.revokedAt === null ? { ...current, record: { ...current.record, revokedAt: now } } : current
          keys[at] = next
          return next
        })
        yield* refresh(now, true)
        return revoked?.record ?? null
      })
    })
  })

export const layer = (options: FileKeyStoreOptions): Layer.Layer<KeyStore> => Layer.effect(KeyStore, Effect.orDie(make(options)))
