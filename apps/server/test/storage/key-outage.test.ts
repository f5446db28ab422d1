/**
 * API key checks that need the database, through the real server with `PgKeyStore` behind a TCP
 * proxy the test cuts (support.ts): while the key table cannot be reloaded the in-memory snapshot
 * still answers for its grace period; after it, a key the snapshot cannot vouch for any more gets
 * 503 SERVICE_UNAVAILABLE (never 401: the key may well be valid) with the IP budget in
 * `X-RateLimit-Remaining`, keys from configuration keep working, and everything recovers by
 * itself once the database answers again (spec "Authentication"; docs/storage.md).
 *
 * The store reloads every 100 ms and goes stale after 1 s here (the defaults are 1 s and 10 s) so
 * the outage takes seconds, not tens of seconds; the rule under test is the same.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { KeyStore } from "@spot/application"
import type { ApiKeyRecord, CreatedApiKey } from "@spot/application"
import { RateLimiterLive } from "@spot/adapters-http"
import { PgDatabase, PgEventStore, PgKeyStore } from "@spot/adapters-storage"
import type { TestServer } from "../support/TestServer.js"
import { startTestServer, testServerConfig } from "../support/TestServer.js"
import type { CuttableProxy, TestDatabase } from "./support.js"
import { startDatabase, startProxy } from "./support.js"

const refreshMs = 100
const maxStaleMs = 1_000
/** Budgets far apart, so `X-RateLimit-Remaining` tells which one a response carries. */
const ipPerMinute = 1_000
const keyPerMinute = 1_000_000

/** A key of configuration (`SPOT_API_KEYS`): held in memory, not in the database. */
const configuredKey = "sk_test_keyOutageConfiguredKey_0123456789abcdef"

/** Any authenticated endpoint answering 200 on an empty market. */
const path = "/v1/trades?identity=kol&limit=1"

interface Reply {
  readonly status: number
  readonly remaining: number
  readonly wwwAuthenticate: string | null
  readonly body: any
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("API key checks while the key table cannot be read", () => {
  let database: TestDatabase
  let proxy: CuttableProxy
  let server: TestServer
  let tableKey: string
  let lasting: CreatedApiKey | undefined
  let listed: ReadonlyArray<ApiKeyRecord> | undefined

  const get = async (key: string): Promise<Reply> => {
    const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${key}` } })
    return {
      status: response.status,
      remaining: Number(response.headers.get("x-ratelimit-remaining")),
      wwwAuthenticate: response.headers.get("www-authenticate"),
      body: await response.json()
    }
  }

  beforeAll(async () => {
    database = await startDatabase()
    proxy = await startProxy(database.port)
    const databaseUrl = Redacted.make(`postgres://postgres@127.0.0.1:${proxy.port}/${database.database}`)
    const config = testServerConfig({ apiKeys: [Redacted.make(configuredKey)], databaseUrl: Option.some(databaseUrl), ingestKeys: [] })
    // One database layer (memoized by reference) for the key table and the event log, as in
    // Server.layer; only the store's timings differ from the default composition.
    const pg = Layer.orDie(PgDatabase.layerServer({ url: databaseUrl }))
    server = await startTestServer(config, {
      keyStore: Layer.orDie(PgKeyStore.layer({ seedKeys: config.apiKeys, refreshMs, maxStaleMs })).pipe(Layer.provide(pg)),
      eventStore: PgEventStore.layer().pipe(Layer.provide(pg)),
      rateLimiter: RateLimiterLive.layer({ keyPerMinute, ipPerMinute })
    })
    const context = server.context
    const created = await Effect.runPromise(Context.get(context, KeyStore).create({ name: "key-outage-test" }))
    tableKey = Redacted.value(created.key)
    lasting = await Effect.runPromise(Context.get(context, KeyStore).create({ name: "key-outage-lasting", lifetimeMs: 3_153_600_000_000 }))
    listed = await Effect.runPromise(Context.get(context, KeyStore).list)
  })
  afterAll(async () => {
    await server?.close()
    await proxy?.close()
    await database?.drop()
  })

  it("dates a key with a lifetime from its own creation time, exactly, as stored", () => {
    expect(lasting!.record.expiresAt).toBe(lasting!.record.createdAt + 3_153_600_000_000)
    expect(listed!.find((record) => record.id === lasting!.record.id)).toEqual(lasting!.record)
  })

  it("accepts a key of the table while the database answers (the key's budget in the header)", async () => {
    const reply = await get(tableKey)
    expect(reply.status).toBe(200)
    expect(reply.remaining).toBeGreaterThan(ipPerMinute) // the key's budget, not the IP's
  })

  it("answers 503 SERVICE_UNAVAILABLE, never 401, once the snapshot is older than the grace period; the IP budget in the header", async () => {
    proxy.cut()
    // Within the grace period the snapshot still vouches for the key.
    expect((await get(tableKey)).status).toBe(200)

    await sleep(maxStaleMs + 5 * refreshMs)
    for (const key of [tableKey, `sk_live_${randomBytes(32).toString("base64url")}`]) {
      // The table's key, and a key the snapshot never held (it may have been created since).
      const reply = await get(key)
      expect(reply.status).toBe(503)
      expect(reply.body.error.code).toBe("SERVICE_UNAVAILABLE")
      expect(reply.wwwAuthenticate).toBeNull()
      // The IP budget: below its per-minute size, far below the key budget's.
      expect(Number.isInteger(reply.remaining)).toBe(true)
      expect(reply.remaining).toBeGreaterThanOrEqual(0)
      expect(reply.remaining).toBeLessThan(ipPerMinute)
    }
    // Each refused request still spends the IP budget: it keeps counting down, not up.
    const first = await get(tableKey)
    const second = await get(tableKey)
    expect([first.status, second.status]).toEqual([503, 503])
    expect(second.remaining).toBeLessThanOrEqual(first.remaining)

    // Keys of configuration do not depend on the database.
    const configured = await get(configuredKey)
    expect(configured.status).toBe(200)
    expect(configured.remaining).toBeGreaterThan(ipPerMinute)
  }, 20_000)

  it("accepts the key again by itself once the database answers", async () => {
    proxy.restore()
    let reply = await get(tableKey)
    for (let attempt = 0; reply.status === 503 && attempt < 100; attempt++) {
      await sleep(refreshMs)
      reply = await get(tableKey)
    }
    expect(reply.status).toBe(200)
    expect(reply.remaining).toBeGreaterThan(ipPerMinute)
    // Unknown keys are unknown again: 401, not 503.
    const unknown = await get(`sk_live_${randomBytes(32).toString("base64url")}`)
    expect(unknown.status).toBe(401)
    expect(unknown.body.error.code).toBe("UNAUTHORIZED")
  }, 20_000)
})
