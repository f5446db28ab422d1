import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { KeyStore } from "@spot/application"
import { apiKeyPrefix, generateApiKey, hashApiKey, sameHash } from "../../src/memory/ApiKeyHash.js"
import * as MemoryKeyStore from "../../src/memory/MemoryKeyStore.js"

describe("ApiKeyHash", () => {
  it("makes sk_live_ keys of 32 random bytes, each different", () => {
    const a = generateApiKey()
    const b = generateApiKey()
    expect(a.startsWith(apiKeyPrefix)).toBe(true)
    expect(Buffer.from(a.slice(apiKeyPrefix.length), "base64url")).toHaveLength(32)
    expect(a).not.toBe(b)
  })

  it("hashes deterministically, never to the key itself, and compares hashes exactly", () => {
    const key = generateApiKey()
    expect(hashApiKey(key)).toBe(hashApiKey(key))
    expect(hashApiKey(key)).not.toContain(key.slice(apiKeyPrefix.length))
    expect(sameHash(hashApiKey(key), hashApiKey(key))).toBe(true)
    expect(sameHash(hashApiKey(key), hashApiKey(key + "x"))).toBe(false)
    expect(sameHash("abc", "abcd")).toBe(false)
  })
})

describe("MemoryKeyStore", () => {
  it.effect("verifies created keys, returns null for unknown ones, keeps revoked records", () =>
    Effect.gen(function*() {
      const store = yield* KeyStore
      const created = yield* store.create({ name: "client A" })
      expect(String(created.key)).not.toContain(Redacted.value(created.key))
      expect(yield* store.verify(created.key)).toEqual(created.record)
      expect(yield* store.verify(Redacted.make(Redacted.value(created.key).toUpperCase()))).toBeNull()
      expect(yield* store.verify(Redacted.make("sk_live_unknown"))).toBeNull()
      const revoked = yield* store.revoke(created.record.id)
      expect(revoked?.revokedAt).not.toBeNull()
      const again = yield* store.revoke(created.record.id)
      expect(again?.revokedAt).toBe(revoked?.revokedAt)
      expect((yield* store.verify(created.key))?.revokedAt).toBe(revoked?.revokedAt)
      expect(yield* store.revoke("key_none")).toBeNull()
      const expiring = yield* store.create({ name: "client B", expiresAt: 123 })
      expect(expiring.record.expiresAt).toBe(123)
      // a lifetime is counted from the record's own creation time, exactly
      const lasting = yield* store.create({ name: "client C", expiresAt: 1, lifetimeMs: 3_153_600_000_000 })
      expect(lasting.record.expiresAt).toBe(lasting.record.createdAt + 3_153_600_000_000)
      expect((yield* store.list).map((r) => r.name)).toEqual(["client A", "client B", "client C"])
    }).pipe(Effect.provide(MemoryKeyStore.layer())))

  it.effect("keeps no plain key in its records", () =>
    Effect.gen(function*() {
      const store = yield* KeyStore
      const created = yield* store.create({ name: "n" })
      expect(JSON.stringify(yield* store.list)).not.toContain(Redacted.value(created.key))
    }).pipe(Effect.provide(MemoryKeyStore.layer())))

  it.effect("is seeded from SPOT_API_KEYS (comma-separated, blanks ignored, duplicates once)", () =>
    Effect.gen(function*() {
      const store = yield* KeyStore
      expect(yield* store.verify(Redacted.make("sk_live_first"))).not.toBeNull()
      expect(yield* store.verify(Redacted.make("sk_live_second"))).not.toBeNull()
      expect(yield* store.verify(Redacted.make("sk_live_third"))).toBeNull()
      expect(yield* store.list).toHaveLength(2)
    }).pipe(
      Effect.provide(
        MemoryKeyStore.layerConfig.pipe(
          Layer.provide(
            ConfigProvider.layer(ConfigProvider.fromEnv({ env: { SPOT_API_KEYS: "sk_live_first, ,sk_live_second,sk_live_first" } }))
          )
        )
      )
    ))

  it.effect("without SPOT_API_KEYS starts empty", () =>
    Effect.gen(function*() {
      const store = yield* KeyStore
      expect(yield* store.list).toEqual([])
    }).pipe(
      Effect.provide(
        MemoryKeyStore.layerConfig.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: {} }))))
      )
    ))
})
