/**
 * Request budgets on the real server (spec "Limits"): tiny budgets (3 per minute per key, 6 per
 * minute per IP) so a handful of requests exhausts them. Requests run in order: each test
 * continues from the budgets the previous one left.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Market } from "@spot/application"
import type { ReadApi, Reply } from "./support/ReadApi.js"
import { bearer, expectError, otherApiKey, startReadApi } from "./support/ReadApi.js"

const remaining = (reply: Reply) => Number(reply.headers.get("x-ratelimit-remaining"))

const expectRetryAfter = (reply: Reply) => {
  const retryAfter = reply.headers.get("retry-after")
  expect(retryAfter).toMatch(/^\d+$/)
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
}

describe("request budgets", () => {
  let api: ReadApi
  beforeAll(async () => {
    api = await startReadApi({ market: Market.makeMarket(), limits: { keyPerMinute: 3, ipPerMinute: 6 } })
  })
  afterAll(() => api.close())

  it("serves /openapi.json without spending any budget", async () => {
    for (let i = 0; i < 10; i++) {
      const reply = await api.get("/openapi.json", {})
      expect(reply.status).toBe(200)
      expect(reply.headers.has("x-ratelimit-remaining")).toBe(false)
    }
  })

  it("counts the key's budget down by one per request, then answers 429 RATE_LIMITED with Retry-After >= 1", async () => {
    const replies: Array<Reply> = []
    for (let i = 0; i < 3; i++) replies.push(await api.get("/v1/trades?identity=kol"))
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200])
    expect(replies.map(remaining)).toEqual([2, 1, 0])
    const refused = await api.get("/v1/trades?identity=kol")
    expectError(refused, 429, "RATE_LIMITED")
    expectRetryAfter(refused)
    expect(remaining(refused)).toBe(0)
  })

  it("keeps another key's budget apart, then answers 429 RATE_LIMITED with Retry-After >= 1 when the IP's budget is spent", async () => {
    // The IP has spent 4 of 6 (the /openapi.json reads spent nothing).
    const first = await api.get("/v1/trades?identity=kol", bearer(otherApiKey))
    const second = await api.get("/v1/trades?identity=kol", bearer(otherApiKey))
    expect([first.status, second.status]).toEqual([200, 200])
    expect([remaining(first), remaining(second)]).toEqual([2, 1])
    const refused = await api.get("/v1/trades?identity=kol", bearer(otherApiKey))
    expectError(refused, 429, "RATE_LIMITED")
    expectRetryAfter(refused)
    expect(remaining(refused)).toBe(0)
  })

  it("answers a keyless request with 429 (not 401) once the IP's budget is spent, and still serves /openapi.json", async () => {
    const refused = await api.get("/v1/trades?identity=kol", {})
    expectError(refused, 429, "RATE_LIMITED")
    expectRetryAfter(refused)
    expect((await api.get("/openapi.json", {})).status).toBe(200)
  })
})
