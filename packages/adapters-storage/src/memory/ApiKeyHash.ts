/**
 * Making and hashing API keys (node:crypto). Shared by every key store.
 *
 * Keys are `sk_live_` + 32 random bytes in base64url (256 bits of entropy). A store keeps only
 * SHA-256(key) in base64url: with keys that random, a plain hash cannot be reversed or
 * brute-forced, so no per-store pepper or slow KDF is needed, and the hash can be the lookup key.
 * Keys seeded from configuration (`SPOT_API_KEYS`) are hashed the same way; operators must make
 * them equally random (a short memorable key would be guessable from a leaked hash).
 */
import * as crypto from "node:crypto"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import type { ApiKeyHashing } from "@spot/application"

export const apiKeyPrefix = "sk_live_"

/** A fresh random key. */
export const generateApiKey = (): string => apiKeyPrefix + randomBytes(32).toString("base64url")

/** The stored form of a key: SHA-256, base64url (43 characters). */
export const hashApiKey: (key: string) => string =
  // crypto.hash (Node 20.12+) is one call, about 4x cheaper than a Hash object; it runs per request.
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (key) => (crypto as unknown as { hash: (algorithm: string, data: string, encoding: string) => string }).hash("sha256", key, "base64url")
    : (key) => createHash("sha256").update(key, "utf8").digest("base64url")

/**
 * Compares two stored hashes in constant time. A lookup by hash already reveals nothing about the
 * key through timing (the attacker does not control the hash); this guards the final comparison
 * whatever the lookup structure is.
 */
export const sameHash = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "utf8")
  const right = Buffer.from(b, "utf8")
  return left.length === right.length && timingSafeEqual(left, right)
}

/** These functions as a key store is given them (`KeyStore.layerMemory`). */
export const hashing: ApiKeyHashing = { generate: generateApiKey, hash: hashApiKey, sameHash }
