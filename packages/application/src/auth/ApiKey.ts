/**
 * API keys as the service knows them (spec "Authentication"). The key itself is a secret the
 * store never keeps: a store holds a hash and this record.
 */

/** What is known about one key. Times are Unix milliseconds. */
export interface ApiKeyRecord {
  readonly id: string
  /** Who or what the key is for (free text chosen at creation). */
  readonly name: string
  readonly createdAt: number
  /** After this instant the key is refused; null: never expires. */
  readonly expiresAt: number | null
  /** When the key was revoked; null: not revoked. */
  readonly revokedAt: number | null
}

/**
 * True when a known key may be used at `now`. Revoked and expired keys are refused exactly like
 * unknown ones (spec "Authentication", rule 5): callers must not tell the cases apart on the wire.
 */
export const isUsable = (record: ApiKeyRecord, now: number): boolean =>
  record.revokedAt === null && (record.expiresAt === null || now < record.expiresAt)
