import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { isUsable } from "../../src/auth/ApiKey.js"
import type { ApiKeyRecord } from "../../src/auth/ApiKey.js"

const record = (overrides: Partial<ApiKeyRecord>): ApiKeyRecord => ({
  id: "key_1",
  name: "test",
  createdAt: 0,
  expiresAt: null,
  revokedAt: null,
  ...overrides
})

const time = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4_000_000_000_000 }))

describe("ApiKey.isUsable", () => {
  it.prop("a key that is neither revoked nor expiring is usable at any time", [time], ([now]) => {
    expect(isUsable(record({}), now)).toBe(true)
  })

  it.prop("a revoked key is never usable, whenever it was revoked", [time, time], ([revokedAt, now]) => {
    expect(isUsable(record({ revokedAt }), now)).toBe(false)
  })

  it.prop("an expiring key is usable strictly before its expiry only", [time, time], ([expiresAt, now]) => {
    expect(isUsable(record({ expiresAt }), now)).toBe(now < expiresAt)
  })
})
