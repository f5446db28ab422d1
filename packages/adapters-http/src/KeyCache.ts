/**
 * The key cache (the application's `KeyCache` port) in memory: the store's answers for the
 * request path, reused for `ttlMs` (what Admission keeps in it, and why that is safe: the port).
 *
 * - Entries are keyed by the SHA-256 of the presented key (`digestOf`), never by the key itself:
 *   the key's plain value lives only as long as the request that carried it.
 * - Bounded: past `maxEntries` the oldest entries go.
 * - A revocation reaches the server through the store; the cache delays it by at most `ttlMs`
 *   (the stores themselves re-read their keys about once a second). A record remembered just
 *   before a store outage keeps vouching for its key for at most `ttlMs`.
 * - Lookup by digest: the timing of a Map lookup depends on the digest of what the client sent,
 *   which the client cannot steer towards a stored digest, and knowing a digest does not give
 *   the key that produces it; so no constant-time comparison is needed here (the stores still
 *   compare their own hashes in constant time when they are asked).
 */
import { Layer } from "effect"
import { hash } from "node:crypto"
import { KeyCache as KeyCachePort } from "@spot/application"
import type { ApiKeyRecord } from "@spot/application"

export interface KeyCacheOptions {
  /** How long an answer of the store is reused, in ms. */
  readonly ttlMs: number
  /** Entries kept at most; default 10,000 (past it the oldest go). */
  readonly maxEntries?: number
}

export const defaultMaxEntries = 10_000

/** The cache key of a presented key: SHA-256, base64url (never the key itself). */
export const digestOf = (presentedKey: string): string => hash("sha256", presentedKey, "base64url")

interface Entry {
  readonly record: ApiKeyRecord
  readonly at: number
}

export class KeyCache {
  private readonly entries = new Map<string, Entry>()
  readonly ttlMs: number
  readonly maxEntries: number

  constructor(options: KeyCacheOptions) {
    this.ttlMs = options.ttlMs
    this.maxEntries = Math.max(1, options.maxEntries ?? defaultMaxEntries)
  }

  /** The record the store gave for this digest less than `ttlMs` before `now`, else undefined. */
  lookup(digest: string, now: number): ApiKeyRecord | undefined {
    const entry = this.entries.get(digest)
    if (entry === undefined) return undefined
    // A clock that went backwards makes the entry stale too (never trusted for longer than ttl).
    if (now - entry.at < this.ttlMs && now >= entry.at) return entry.record
    this.entries.delete(digest)
    return undefined
  }

  /** Remembers the store's answer for this digest, as of `now`. */
  remember(digest: string, record: ApiKeyRecord, now: number): void {
    // Deleted first so that a refreshed entry moves to the end of the insertion order.
    this.entries.delete(digest)
    if (this.entries.size >= this.maxEntries) {
      // Map iteration follows insertion order: the first entries are the oldest.
      let excess = this.entries.size - this.maxEntries + 1
      for (const oldest of this.entries.keys()) {
        if (excess-- <= 0) break
        this.entries.delete(oldest)
      }
    }
    this.entries.set(digest, { record, at: now })
  }

  get size(): number {
    return this.entries.size
  }
}

/** The port over a new cache: presented keys are looked up and remembered by their digest. */
export const make = (options: KeyCacheOptions): KeyCachePort["Service"] => {
  const cache = new KeyCache(options)
  return KeyCachePort.of({
    lookup: (presentedKey, now) => cache.lookup(digestOf(presentedKey), now),
    remember: (presentedKey, record, now) => cache.remember(digestOf(presentedKey), record, now)
  })
}

/** The key cache for Admission: answers reused for `ttlMs`. */
export const layer = (options: KeyCacheOptions): Layer.Layer<KeyCachePort> => Layer.sync(KeyCachePort, () => make(options))
