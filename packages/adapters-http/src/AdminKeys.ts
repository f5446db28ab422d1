/**
 * Keys of the administrative interface (`/admin/...`, the ingest endpoint): operator secrets from
 * configuration (`SPOT_INGEST_KEYS`), separate from customer API keys (no key store, no per-key
 * budget, never valid on `/v1`). Held as SHA-256 digests; a presented key is hashed and compared
 * with each in constant time, so neither the comparison nor the key's length leaks through timing.
 */
import { Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"

export interface AdminKeys {
  /** True when the presented key is one of the configured keys. */
  readonly accepts: (presented: string) => boolean
  readonly configured: boolean
}

const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest()

export const make = (keys: ReadonlyArray<Redacted.Redacted<string>>): AdminKeys => {
  const digests = keys.map((key) => digest(Redacted.value(key)))
  return {
    configured: digests.length > 0,
    accepts: (presented) => {
      const candidate = digest(presented)
      let match = false
      // Every digest is compared (no early exit): the time does not say which key matched.
      for (const known of digests) if (timingSafeEqual(known, candidate)) match = true
      return match
    }
  }
}
