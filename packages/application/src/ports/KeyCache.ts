/**
 * Port: a short-lived memory of the key store's answers, so that a client sending thousands of
 * requests a second with one key does not cost a store lookup on each (Admission asks the store
 * again once an answer is older than the implementation's time to live).
 *
 * What Admission keeps in it, and why that is safe: only records (a known key, usable or not),
 * never "no such key" (a key created a moment ago works as soon as the store knows it, and a flood
 * of random keys cannot fill it) and never a store failure (the next request asks again). Whether
 * a cached key may be used is decided per request from the record, so expiry stays exact; a
 * revocation is noticed at most one time to live later than the store notices it.
 *
 * Implementations never keep the presented key itself (a digest of it, say): its plain value
 * lives only as long as the request that carried it.
 */
import { Context } from "effect"
import type { ApiKeyRecord } from "../auth/ApiKey.js"

export interface KeyCacheShape {
  /** The record the store gave for this key recently enough as of `now`, else undefined. */
  readonly lookup: (presentedKey: string, now: number) => ApiKeyRecord | undefined
  /** Remembers the store's answer for this key, as of `now`. */
  readonly remember: (presentedKey: string, record: ApiKeyRecord, now: number) => void
}

export class KeyCache extends Context.Service<KeyCache, KeyCacheShape>()("@spot/application/KeyCache") {}
