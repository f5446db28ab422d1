/**
 * What every read goes through, on the real server: authentication (spec "Authentication"),
 * the headers every response carries (spec "Limits", "Conventions"), no CORS, and the keyless
 * OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { ReadApi } from "./support/ReadApi.js"
import { apiKey, bearer, expectError, simulatedMarket, startReadApi } from "./support/ReadApi.js"

/** Every /v1 endpoint of the spec, as a request that succeeds with a valid key. */
const endpointRequests = (token: { chain: string; address: string }, wallet: string) => [
  { method: "GET", path: `/v1/tokens/${token.chain}/${token.address}` },
  { method: "GET", path: `/v1/tokens/${token.chain}/${token.address}/ohlcv` },
  { method: "GET", path: `/v1/tokens/${token.chain}/${token.address}/trades` },
  { method: "GET", path: "/v1/trades?identity=kol" },
  { method: "GET", path: `/v1/positions?wallets=${wallet}` },
  { method: "POST", path: "/v1/discovery", body: JSON.stringify({ chains: ["solana"], newPairs: {} }) }
]

describe("read API platform", () => {
  let api: ReadApi
  let token: { chain: string; address: string }
  let wallet: string
  beforeAll(async () => {
    const simulated = simulatedMarket({ minutes: 2, seed: 3 })
    const first = simulated.market.engine.allTokens().next().value!
    token = { chain: first.chain, address: first.address }
    // A trader of the token (a trade opens the trader's position in it).
    wallet = simulated.market.engine.tokenTradePage(first.chain, first.address, null, 1).records[0]!.trader
    api = await startReadApi({ market: simulated.market })
  })
  afterAll(() => api.close())

  const send = (request: { method: string; path: string; body?: string }, headers: Record<string, string>) =>
    api.request(request.path, {
      method: request.method,
      headers: request.body === undefined ? headers : { "content-type": "application/json", ...headers },
      ...(request.body === undefined ? {} : { body: request.body })
    })

  it("answers every endpoint with 200 for `Authorization: Bearer <key>`, with the budget and request id headers", async () => {
    for (const request of endpointRequests(token, wallet)) {
      const reply = await send(request, bearer())
      expect(reply.status, `${request.method} ${request.path}: ${reply.text.slice(0, 300)}`).toBe(200)
    }
  })

  it("refuses a missing, malformed, wrong or misplaced key on every endpoint with one identical 401", async () => {
    const refusals: Array<[string, Record<string, string>, string]> = [
      ["missing header", {}, ""],
      ["wrong key", bearer("sk_test_notAKeyWeIssuedAtAll0123456789abcdefghij"), ""],
      ["key in other letter case", bearer(apiKey.toUpperCase()), ""],
      ["Basic scheme", { authorization: `Basic ${Buffer.from(`x:${apiKey}`).toString("base64")}` }, ""],
      ["scheme word only", { authorization: "Bearer" }, ""],
      ["bare key", { authorization: apiKey }, ""],
      ["key in X-API-Key", { "x-api-key": apiKey }, ""],
      ["key in the query string", {}, `api_key=${apiKey}`],
      ["key in the query string beside a valid header", bearer(), `apikey=${apiKey}`],
      ["key in a cookie", { cookie: `api_key=${apiKey}` }, ""],
      // Any other header, whatever its name, even beside a valid bearer header.
      ["key in X-Key beside a valid header", { ...bearer(), "x-key": apiKey }, ""],
      ["key in Proxy-Authorization beside a valid header", { ...bearer(), "proxy-authorization": `Bearer ${apiKey}` }, ""],
      ["a key of ours in X-Foo beside a valid header", { ...bearer(), "x-foo": `note sk_live_${"a".repeat(40)}` }, ""]
    ]
    const bodies = new Set<string>()
    const headerShapes = new Set<string>()
    for (const request of endpointRequests(token, wallet)) {
      for (const [name, headers, extraQuery] of refusals) {
        const path = extraQuery === "" ? request.path : `${request.path}${request.path.includes("?") ? "&" : "?"}${extraQuery}`
        const reply = await send({ ...request, path }, headers)
        expect(reply.status, `${request.path} ${name}`).toBe(401)
        bodies.add(reply.text)
        headerShapes.add(
          [...reply.headers.keys()].filter((h) => !["date", "content-length", "connection", "keep-alive"].includes(h)).sort().join(",")
        )
      }
    }
    expect(bodies.size).toBe(1)
    expect(headerShapes.size).toBe(1)
    const [body] = [...bodies]
    expect(JSON.parse(body!)).toEqual({ error: { code: "UNAUTHORIZED", message: expect.stringContaining("Authorization: Bearer <key>") } })
  })

  it("accepts the scheme word `Bearer` in any letter case, with one or more spaces", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER", "bEaReR"]) {
      const reply = await api.get("/v1/trades?identity=kol", { authorization: `${scheme} ${apiKey}` })
      expect(reply.status, scheme).toBe(200)
    }
    expect((await api.get("/v1/trades?identity=kol", { authorization: `Bearer   ${apiKey}` })).status).toBe(200)
  })

  it("echoes a sent X-Request-ID and generates a UUID when none is sent, on successes and refusals alike", async () => {
    const echoed = await api.get("/v1/trades?identity=kol", { ...bearer(), "x-request-id": "client-trace-42" })
    expect(echoed.headers.get("x-request-id")).toBe("client-trace-42")
    const refusedEchoed = await api.get("/v1/trades?identity=nope", { ...bearer(), "x-request-id": "client-trace-43" })
    expect(refusedEchoed.status).toBe(400)
    expect(refusedEchoed.headers.get("x-request-id")).toBe("client-trace-43")
    const unauthorizedEchoed = await api.get("/v1/trades?identity=kol", { "x-request-id": "client-trace-44" })
    expect(unauthorizedEchoed.headers.get("x-request-id")).toBe("client-trace-44")

    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    const generated = await api.get("/v1/trades?identity=kol")
    const again = await api.get("/v1/trades?identity=kol")
    expect(generated.headers.get("x-request-id")).toMatch(uuid)
    expect(again.headers.get("x-request-id")).toMatch(uuid)
    expect(again.headers.get("x-request-id")).not.toBe(generated.headers.get("x-request-id"))
    expect((await api.get("/v1/trades?identity=kol", {})).headers.get("x-request-id")).toMatch(uuid)
  })

  it("replaces an X-Request-ID that is too long with a generated UUID", async () => {
    const reply = await api.get("/v1/trades?identity=kol", { ...bearer(), "x-request-id": "x".repeat(129) })
    expect(reply.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("sends no Access-Control-* header, not even to a CORS preflight or a request with an Origin", async () => {
    // The support's reply check refuses any access-control-* header on every response.
    for (const headers of [{}, bearer()]) {
      const preflight = await api.request("/v1/trades?identity=kol", {
        method: "OPTIONS",
        headers: { ...headers, origin: "https://example.com", "access-control-request-method": "GET" }
      })
      expect([401, 404]).toContain(preflight.status)
    }
    const withOrigin = await api.get("/v1/trades?identity=kol", { ...bearer(), origin: "https://example.com" })
    expect(withOrigin.status).toBe(200)
  })

  it("answers an unknown /v1 path with 401 without a key and 404 NOT_FOUND with one", async () => {
    expectError(await api.get("/v1/nothing-here", {}), 401, "UNAUTHORIZED")
    expectError(await api.get("/v1/nothing-here?limit=1"), 404, "NOT_FOUND")
  })

  it("serves /openapi.json with or without a key (even a bad one), with no X-RateLimit-Remaining", async () => {
    for (const headers of [{}, bearer(), { authorization: "Bearer not-a-key" }]) {
      const reply = await api.get("/openapi.json", headers)
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toBe("application/json")
      expect(reply.headers.has("x-ratelimit-remaining")).toBe(false)
      expect(reply.headers.get("x-request-id")).not.toBeNull()
    }
  })

  it("documents every REST endpoint of the spec, with its method and the bearer scheme, in /openapi.json", async () => {
    const document = (await api.get("/openapi.json", {})).body
    expect(document.openapi).toMatch(/^3\./)
    expect(document.info.version).toBe("1.0.0")
    const documented: Record<string, ReadonlyArray<string>> = {
      "/v1/tokens/{chain}/{address}": ["get"],
      "/v1/tokens/{chain}/{address}/ohlcv": ["get"],
      "/v1/tokens/{chain}/{address}/trades": ["get"],
      "/v1/trades": ["get"],
      "/v1/positions": ["get"],
      "/v1/discovery": ["post"]
    }
    for (const [path, methods] of Object.entries(documented)) {
      expect(document.paths[path], path).toBeDefined()
      for (const method of methods) {
        const operation = document.paths[path][method]
        expect(operation, `${method} ${path}`).toBeDefined()
        expect(operation.security, `${method} ${path} security`).toEqual([{ bearer: [] }])
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "429"]))
      }
    }
    expect(Object.values(document.components.securitySchemes)).toContainEqual({ type: "http", scheme: "Bearer" })
    // The stream is a WebSocket upgrade, not a REST operation: the description points to it.
    expect(document.info.description).toContain("/v1/stream")
  })
})
