/**
 * Port: where API keys live. Implementations keep only a one-way hash of each key (never the key),
 * compare in constant time, and never log a key (keys travel as `Redacted`).
 */
import { Context, Data } from "effect"
import type { Effect, Redacted } from "effect"
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

export class KeyStore extends Context.Service<KeyStore, KeyStoreShape>()("@spot/application/KeyStore") {}
