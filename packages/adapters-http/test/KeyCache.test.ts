import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import type { ApiKeyRecord } from "@spot/application"
import * as KeyCache from "../src/KeyCache.js"
import { bearer, expiringKey, expiringKeyExpiresAt, startServer, validKey } from "./support/TestServer.js"
import type { TestServer } from "./support/TestServer.js"

const record = (id: string): ApiKeyRecord => ({ id, name: id, createdAt: 0, expiresAt: null, revokedAt: null })

describe("KeyCache", () => {
  it("keys entries by the SHA-256 of the presented key, never the key", () => {
    const digest = KeyCache.digestOf(validKey)
    expect(digest).toBe(createHash("sha256").update(validKey).digest("base64url"))
    expect(digest).not.toContain(validKey.slice(8, 20))
  })

  it("answers for ttl ms after the store answered, then forgets", () => {
    const cache = new KeyCache.KeyCache({ ttlMs: 100 })
    cache.remember("a", record("a"), 1_000)
    expect(cache.lookup("a", 1_000)?.id).toBe("a")
    expect(cache.lookup("a", 1_099)?.id).toBe("a")
    expect(cache.lookup("a", 1_100)).toBeUndefined()
    // Forgotten, not merely hidden: an earlier time does not bring it back.
    expect(cache.lookup("a", 1_050)).toBeUndefined()
    expect(cache.size).toBe(0)
    expect(cache.lookup("b", 1_000)).toBeUndefined()
  })

  it("does not trust an entry when the clock went backwards", () => {
    const cache = new KeyCache.KeyCache({ ttlMs: 100 })
    cache.remember("a", record("a"), 1_000)
    expect(cache.lookup("a", 999)).toBeUndefined()
  })

  it("stays within maxEntries, dropping the oldest first", () => {
    const cache = new KeyCache.KeyCache({ ttlMs: 1_000, maxEntries: 3 })
    for (const id of ["a", "b", "c"]) cache.remember(id, record(id), 0)
    cache.remember("a", record("a"), 1) // refreshed: now the newest
    cache.remember("d", record("d"), 2)
    expect(cache.size).toBe(3)
    expect(cache.lookup("b", 2)).toBeUndefined()
    expect(["a", "c", "d"].map((id) => cache.lookup(id, 2)?.id)).toEqual(["a", "c", "d"])
    for (let i = 0; i < 100; i++) cache.remember(`k${i}`, record(`k${i}`), 3)
    expect(cache.size).toBe(3)
  })
})

describe("the platform middleware with the key cache on", () => {
  const ttlMs = 500
  let server: TestServer
  let now = 1_000_000
  const get = (headers: Record<string, string>) => fetch(`${server.url}/v1/trades?identity=kol`, { headers })

  beforeAll(async () => {
    server = await startServer({ keyPerMinute: 1_000_000, ipPerMinute: 1_000_000 }, { keyCacheTtlMs: ttlMs, now: () => now })
  })
  afterAll(() => server.close())

  it("asks the store once per key and ttl, not once per request", async () => {
    const state = server.keyStoreState
    now = 1_000_000
    const before = state.verifyCalls
    for (let i = 0; i < 5; i++) expect((await get(bearer())).status).toBe(200)
    expect(state.verifyCalls - before).toBe(1)
    now += ttlMs
    expect((await get(bearer())).status).toBe(200)
    expect(state.verifyCalls - before).toBe(2)
  })

  it("never remembers an unknown key or a store failure", async () => {
    const state = server.keyStoreState
    now = 2_000_000
    const unknown = bearer("sk_live_unknownunknownunknownunknownunknownunk")
    const before = state.verifyCalls
    expect((await get(unknown)).status).toBe(401)
    expect((await get(unknown)).status).toBe(401)
    expect(state.verifyCalls - before).toBe(2)

    state.failing = true
    try {
      expect((await get(bearer())).status).toBe(503)
      expect((await get(bearer())).status).toBe(503)
    } finally {
      state.failing = false
    }
    expect((await get(bearer())).status).toBe(200)
    expect(state.verifyCalls - before).toBe(5)
  })

  it("lets a revocation seen by the store through once the remembered answer is ttl old", async () => {
    const state = server.keyStoreState
    now = 3_000_000
    expect((await get(bearer())).status).toBe(200)
    state.revoked.add("key_valid")
    try {
      // Within the ttl the remembered record still vouches (the documented delay)...
      now += ttlMs - 1
      expect((await get(bearer())).status).toBe(200)
      // ...and no longer after it: the store is asked and its revoked record refused.
      now += 1
      const refused = await get(bearer())
      expect(refused.status).toBe(401)
      expect(refused.headers.get("www-authenticate")).toBe("Bearer")
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED")
      // A remembered revoked record is refused as well, without asking the store again.
      const calls = state.verifyCalls
      expect((await get(bearer())).status).toBe(401)
      expect(state.verifyCalls).toBe(calls)
    } finally {
      state.revoked.delete("key_valid")
    }
  })

  it("refuses a remembered key from its expiry instant on", async () => {
    const state = server.keyStoreState
    now = expiringKeyExpiresAt - 10
    expect((await get(bearer(expiringKey))).status).toBe(200)
    const calls = state.verifyCalls
    now = expiringKeyExpiresAt - 1
    expect((await get(bearer(expiringKey))).status).toBe(200)
    now = expiringKeyExpiresAt
    expect((await get(bearer(expiringKey))).status).toBe(401)
    expect(state.verifyCalls).toBe(calls)
  })
})

describe("the platform middleware without the key cache (the default)", () => {
  it("asks the store on every request", async () => {
    const server = await startServer()
    try {
      const before = server.keyStoreState.verifyCalls
      for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/v1/trades?identity=kol`, { headers: bearer() })).status).toBe(200)
      expect(server.keyStoreState.verifyCalls - before).toBe(3)
    } finally {
      await server.close()
    }
  })
})
