import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as net from "node:net"
import { Ingest } from "@spot/application"
import { AdminKeys, ApiServer, ingestPath, ingestRoutesWith } from "../src/index.js"
import { admissionLayer, bearer, Contract, expiredKey, makeKeyStoreState, revokedKey, startServer, validKey } from "./support/TestServer.js"
import type { TestServer } from "./support/TestServer.js"

const get = (server: TestServer, path: string, headers: Record<string, string> = {}, method = "GET") =>
  fetch(server.url + path, { method, headers })

const json = (response: Response): Promise<any> => response.json()

const expectNoCors = (response: Response) => {
  const cors = [...response.headers.keys()].filter((name) => name.toLowerCase().startsWith("access-control-"))
  expect(cors).toEqual([])
}

describe("authentication", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("accepts `Bearer <key>` with the scheme word in any case", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER", "bEaReR"]) {
      const response = await get(server, "/v1/trades?identity=kol", { authorization: `${scheme} ${validKey}` })
      expect(response.status).toBe(200)
      expect(await json(response)).toEqual({ ok: true })
    }
  })

  it("answers every refused credential with the same 401 body and headers", async () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ["missing header", "/v1/trades?identity=kol", {}],
      ["wrong key", "/v1/trades?identity=kol", bearer("sk_live_wrongwrongwrongwrongwrongwrongwrongwro")],
      ["key with other letter case", "/v1/trades?identity=kol", bearer(validKey.toUpperCase())],
      ["revoked key", "/v1/trades?identity=kol", bearer(revokedKey)],
      ["expired key", "/v1/trades?identity=kol", bearer(expiredKey)],
      ["Basic scheme", "/v1/trades?identity=kol", { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` }],
      ["scheme without key", "/v1/trades?identity=kol", { authorization: "Bearer " }],
      ["no separator", "/v1/trades?identity=kol", { authorization: `Bearer${validKey}` }],
      ["bare key", "/v1/trades?identity=kol", { authorization: validKey }],
      ["key in query only", `/v1/trades?identity=kol&api_key=${validKey}`, {}],
      ["key in query beside a valid header", `/v1/trades?identity=kol&key=${validKey}`, bearer()],
      ["key in X-API-Key only", "/v1/trades?identity=kol", { "x-api-key": validKey }],
      ["key in X-API-Key beside a valid header", "/v1/trades?identity=kol", { "x-api-key": validKey, ...bearer() }],
      ["key in a cookie", "/v1/trades?identity=kol", { cookie: `api_key=${validKey}` }],
      ["key in a cookie beside a valid header", "/v1/trades?identity=kol", { cookie: `session=${validKey}`, ...bearer() }],
      ["unknown route without key", "/v1/nothing-here", {}]
    ]
    const bodies = new Set<string>()
    for (const [name, path, headers] of cases) {
      const response = await get(server, path, headers)
      expect(response.status, name).toBe(401)
      expect(response.headers.get("content-type"), name).toBe("application/json")
      expect(response.headers.get("www-authenticate"), name).toBe("Bearer")
      expect(response.headers.get("x-request-id"), name).toMatch(/^[0-9a-f-]{36}$/)
      expect(response.headers.get("x-ratelimit-remaining"), name).toMatch(/^\d+$/)
      expect(response.headers.has("retry-after"), name).toBe(false)
      expectNoCors(response)
      bodies.add(await response.text())
    }
    expect(bodies.size).toBe(1)
    const body = JSON.parse([...bodies][0]!)
    expect(Object.keys(body)).toEqual(["error"])
    expect(Object.keys(body.error)).toEqual(["code", "message"])
    expect(body.error.code).toBe("UNAUTHORIZED")
    expect(body.error.message).toContain("Authorization: Bearer <key>")
  })

  it("answers 503 SERVICE_UNAVAILABLE, never 401, when the key store is down", async () => {
    server.keyStoreState.failing = true
    try {
      const response = await get(server, "/v1/trades?identity=kol", bearer())
      expect(response.status).toBe(503)
      expect((await json(response)).error.code).toBe("SERVICE_UNAVAILABLE")
      expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
      expect(response.headers.get("x-request-id")).not.toBeNull()
    } finally {
      server.keyStoreState.failing = false
    }
    // A request without any key still gets its 401 (no lookup is needed to refuse it).
    server.keyStoreState.failing = true
    try {
      expect((await get(server, "/v1/trades?identity=kol")).status).toBe(401)
    } finally {
      server.keyStoreState.failing = false
    }
  })
})

describe("budgets", () => {
  it("reports the key's budget once accepted and the IP's budget on 401 and 503", async () => {
    const server = await startServer({ keyPerMinute: 5, ipPerMinute: 100 })
    try {
      const first = await get(server, "/v1/trades?identity=kol", bearer())
      const second = await get(server, "/v1/trades?identity=kol", bearer())
      expect(first.headers.get("x-ratelimit-remaining")).toBe("4")
      expect(second.headers.get("x-ratelimit-remaining")).toBe("3")
      // Two IP requests spent so far (100 - 2), this 401 is the third.
      const refused = await get(server, "/v1/trades?identity=kol")
      expect(refused.headers.get("x-ratelimit-remaining")).toBe("97")
      server.keyStoreState.failing = true
      const unavailable = await get(server, "/v1/trades?identity=kol", bearer())
      server.keyStoreState.failing = false
      expect(unavailable.status).toBe(503)
      expect(unavailable.headers.get("x-ratelimit-remaining")).toBe("96")
    } finally {
      await server.close()
    }
  })

  it("refuses past the key budget with 429 RATE_LIMITED, Retry-After in whole seconds, the key's budget", async () => {
    const server = await startServer({ keyPerMinute: 2, ipPerMinute: 100 })
    try {
      expect((await get(server, "/v1/trades?identity=kol", bearer())).status).toBe(200)
      expect((await get(server, "/v1/trades?identity=kol", bearer())).status).toBe(200)
      const limited = await get(server, "/v1/trades?identity=kol", bearer())
      expect(limited.status).toBe(429)
      const retryAfter = limited.headers.get("retry-after")!
      expect(retryAfter).toMatch(/^[1-9]\d*$/)
      expect(Number(retryAfter)).toBeLessThanOrEqual(30)
      expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
      expect(limited.headers.get("x-request-id")).not.toBeNull()
      const body = await json(limited)
      expect(body.error.code).toBe("RATE_LIMITED")
      expect(Object.keys(body.error)).toEqual(["code", "message"])
      // The IP budget was not the one refusing: a 401 still shows plenty of it.
      const refused = await get(server, "/v1/trades?identity=kol")
      expect(Number(refused.headers.get("x-ratelimit-remaining"))).toBeGreaterThan(90)
    } finally {
      await server.close()
    }
  })

  it("refuses past the IP budget before looking at the key, with the IP's budget", async () => {
    const server = await startServer({ keyPerMinute: 1_000, ipPerMinute: 3 })
    try {
      expect((await get(server, "/v1/trades?identity=kol", bearer())).headers.get("x-ratelimit-remaining")).toBe("999")
      expect((await get(server, "/v1/trades?identity=kol")).headers.get("x-ratelimit-remaining")).toBe("1")
      expect((await get(server, "/v1/trades?identity=kol", bearer())).status).toBe(200)
      for (const headers of [bearer(), {}]) {
        const limited = await get(server, "/v1/trades?identity=kol", headers)
        expect(limited.status).toBe(429)
        expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
        expect((await json(limited)).error.code).toBe("RATE_LIMITED")
      }
      // The OpenAPI document is outside every budget.
      const openapi = await get(server, "/openapi.json")
      expect(openapi.status).toBe(200)
    } finally {
      await server.close()
    }
  })
})

describe("every response", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("echoes a sane X-Request-ID and replaces an insane one with a UUID", async () => {
    const echoed = await get(server, "/v1/trades?identity=kol", { ...bearer(), "x-request-id": "trace-abc.123_XYZ" })
    expect(echoed.headers.get("x-request-id")).toBe("trace-abc.123_XYZ")
    for (const insane of ["a".repeat(129), "has space", "tab\there"]) {
      const response = await get(server, "/v1/trades?identity=kol", { ...bearer(), "x-request-id": insane })
      expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    }
    const refused = await get(server, "/v1/trades?identity=kol", { "x-request-id": "mine-1" })
    expect(refused.headers.get("x-request-id")).toBe("mine-1")
  })

  it("carries X-Request-ID and no CORS header on every kind of answer, OPTIONS preflight included", async () => {
    const preflight = { origin: "https://example.com", "access-control-request-method": "GET" }
    const requests: Array<[string, string, Record<string, string>, string?, string?]> = [
      ["GET", "/v1/trades?identity=kol", bearer()],
      ["GET", "/v1/trades?identity=nope", bearer()],
      ["GET", "/v1/nothing", bearer()],
      ["GET", "/nothing", {}],
      ["GET", "/openapi.json", { origin: "https://example.com" }],
      ["OPTIONS", "/v1/trades", preflight],
      ["OPTIONS", "/v1/trades", { ...preflight, ...bearer() }],
      ["OPTIONS", "/openapi.json", preflight],
      ["POST", "/v1/echo", { ...bearer(), "content-type": "application/json" }, "{not json"],
      ["GET", "/v1/tokens/solana/boom", bearer()]
    ]
    for (const [method, path, headers, body] of requests) {
      const response = await fetch(server.url + path, { method, headers, ...(body === undefined ? {} : { body }) })
      expect(response.headers.get("x-request-id"), `${method} ${path}`).not.toBeNull()
      expectNoCors(response)
      await response.arrayBuffer()
    }
  })

  it("serves /openapi.json without a key, without budget header, from the contract", async () => {
    const response = await get(server, "/openapi.json")
    expect(response.status).toBe(200)
    expect(response.headers.has("x-ratelimit-remaining")).toBe(false)
    const document = await json(response)
    expect(document.openapi).toMatch(/^3\.1/)
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(["/v1/trades", "/v1/tokens/{chain}/{address}", "/v1/echo"])
    )
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "Bearer" })
    expect(document.paths["/v1/trades"].get.security).toEqual([{ bearer: [] }])
    const unauthorized = document.paths["/v1/trades"].get.responses["401"]
    expect(JSON.stringify(unauthorized)).not.toContain("_tag")
    // A wrong key on the keyless document changes nothing.
    const withBadKey = await get(server, "/openapi.json", bearer("sk_live_nope"))
    expect(withBadKey.status).toBe(200)
    // Every spelling the router serves the document at is keyless too, not only the literal one.
    for (const spelling of ["/OPENAPI.JSON", "//openapi.json", "/openapi.json/", "/%6fpenapi.json"]) {
      const other = await get(server, spelling)
      expect([spelling, other.status]).toEqual([spelling, 200])
      expect((await json(other)).openapi).toMatch(/^3\.1/)
    }
  })
})

describe("errors", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("answers an unknown route, once authenticated, with 404 NOT_FOUND and the key's budget", async () => {
    const response = await get(server, "/v1/nothing-here?x=1", bearer())
    expect(response.status).toBe(404)
    expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
    const body = await json(response)
    expect(body.error.code).toBe("NOT_FOUND")
    expect(body.error.message).toContain("/v1/nothing-here")
    expect(body.error.message).not.toContain("x=1")
  })

  it("lists every bad query field, unknown parameters included, in VALIDATION_ERROR details", async () => {
    const response = await get(server, "/v1/trades?identity=whale&limit=ten&foo=1&bar=2", bearer())
    expect(response.status).toBe(400)
    expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
    const body = await json(response)
    expect(body.error.code).toBe("VALIDATION_ERROR")
    const fields = (body.error.details as Array<{ field: string; message: string }>).map((d) => d.field).sort()
    expect(fields).toEqual(["bar", "foo", "identity", "limit"])
    for (const detail of body.error.details) {
      expect(Object.keys(detail).sort()).toEqual(["field", "message"])
    }
    const missing = await json(await get(server, "/v1/trades", bearer()))
    expect(missing.error.details).toEqual([{ field: "identity", message: "is required" }])
    const repeated = await json(await get(server, "/v1/trades?identity=kol&identity=kol", bearer()))
    expect(repeated.error.details.map((d: { field: string }) => d.field)).toEqual(["identity"])
  })

  it("answers a malformed JSON body with 400 VALIDATION_ERROR on field body", async () => {
    const response = await fetch(server.url + "/v1/echo", {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: "{\"chains\": [\"solana\""
    })
    expect(response.status).toBe(400)
    expect(await json(response)).toEqual({
      error: {
        code: "VALIDATION_ERROR",
        message: "Invalid request: body. Fix the listed fields and retry.",
        details: [{ field: "body", message: "is not valid JSON" }]
      }
    })
    const invalid = await fetch(server.url + "/v1/echo", {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: JSON.stringify({ chains: [], extra: 1 })
    })
    const fields = (await json(invalid)).error.details.map((d: { field: string }) => d.field).sort()
    expect(fields).toEqual(["body.chains", "body.extra"])
    const valid = await fetch(server.url + "/v1/echo", {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: JSON.stringify({ chains: ["solana"] })
    })
    expect(await json(valid)).toEqual({ chains: ["solana"] })
  })

  it("serves handlers that use services provided to the server layer", async () => {
    const response = await get(server, "/v1/greeting", bearer())
    expect(await json(response)).toEqual({ greeting: "hello" })
    expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
  })

  it("maps application errors to their codes and hides unexpected failures behind INTERNAL_ERROR", async () => {
    const cases: Array<[string, number, string]> = [
      ["/v1/tokens/solana/missing", 404, "NOT_FOUND"],
      ["/v1/tokens/solana/invalid", 400, "VALIDATION_ERROR"],
      ["/v1/tokens/doge/abc", 400, "UNSUPPORTED_CHAIN"],
      ["/v1/tokens/solana/boom", 500, "INTERNAL_ERROR"]
    ]
    for (const [path, status, code] of cases) {
      const response = await get(server, path, bearer())
      expect(response.status, path).toBe(status)
      const text = await response.text()
      const body = JSON.parse(text)
      expect(Object.keys(body), path).toEqual(["error"])
      expect(body.error.code, path).toBe(code)
      expect(text, path).not.toContain("_tag")
      expect(text, path).not.toContain("secret internal detail")
    }
  })
})

/**
 * Request bodies are read within a limit (RequestBody): a larger one is refused as 400
 * VALIDATION_ERROR on field `body`, closing the connection, whether its size is declared
 * (Content-Length: refused before reading) or not (chunked: refused once the limit is passed).
 */
describe("request body limits", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  const post = (path: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
    fetch(server.url + path, {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json", ...headers },
      body,
      ...(body instanceof ReadableStream ? { duplex: "half" } : {})
    } as RequestInit)

  /** A body in chunks with no Content-Length (Transfer-Encoding: chunked). */
  const chunked = (text: string, chunkSize = 16) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(text)
        for (let at = 0; at < bytes.length; at += chunkSize) controller.enqueue(bytes.subarray(at, at + chunkSize))
        controller.close()
      }
    })

  const expectTooLarge = async (response: Response, limit: number) => {
    expect(response.status).toBe(400)
    expect(response.headers.get("connection")).toBe("close")
    expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
    expect(response.headers.get("x-request-id")).not.toBeNull()
    const body = await json(response)
    expect(body.error.code).toBe("VALIDATION_ERROR")
    expect(body.error.message).toBe(`Request body larger than ${limit} bytes, the most this endpoint accepts. Send a smaller body.`)
    expect(body.error.details).toEqual([{ field: "body", message: `is larger than ${limit} bytes` }])
  }

  it("refuses a body over the default 1 MiB declared by Content-Length, and keeps serving", async () => {
    // Valid JSON the route would accept, padded past the limit with whitespace.
    const body = `{"chains":["solana"]}${" ".repeat(1_048_576)}`
    await expectTooLarge(await post("/v1/echo", body), 1_048_576)
    const next = await post("/v1/echo", JSON.stringify({ chains: ["solana"] }))
    expect(next.status).toBe(200)
    expect(await json(next)).toEqual({ chains: ["solana"] })
  })

  it("accepts a body of exactly the limit and refuses one byte more", async () => {
    const exact = `{"chains":["solana"]}`.padEnd(64, " ")
    const accepted = await post("/v1/echo-small", exact)
    expect(accepted.status).toBe(200)
    expect(await json(accepted)).toEqual({ chains: ["solana"] })
    await expectTooLarge(await post("/v1/echo-small", `${exact} `), 64)
  })

  it("refuses a body that has not all arrived within the route's time, 400 on field body, and closes; a body sent at once is read", async () => {
    const { port } = new URL(server.url)
    const answer = await new Promise<{ text: string; ms: number }>((resolve, reject) => {
      const started = Date.now()
      let text = ""
      const socket = net.connect(Number(port), "127.0.0.1", () => {
        // 40 bytes announced, 10 sent, the rest never
        socket.write(`POST /v1/echo-quick HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${validKey}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"chains":`)
      })
      socket.setEncoding("utf8")
      socket.on("data", (chunk) => (text += chunk))
      socket.on("close", () => resolve({ text, ms: Date.now() - started }))
      socket.on("error", reject)
      setTimeout(() => socket.destroy(), 5_000)
    })
    expect(answer.text).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer.text.toLowerCase()).toContain("connection: close")
    expect(answer.text.toLowerCase()).toContain("x-request-id: ")
    const body = JSON.parse(answer.text.slice(answer.text.indexOf("\r\n\r\n") + 4).replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, ""))
    expect(body.error.code).toBe("VALIDATION_ERROR")
    expect(body.error.details).toEqual([{ field: "body", message: "did not arrive within 0.3 s" }])
    expect(answer.ms).toBeLessThan(4_000) // answered at the deadline, not at the socket's end
    const atOnce = await post("/v1/echo-quick", JSON.stringify({ chains: ["arc"] }))
    expect(atOnce.status).toBe(200)
  })

  it("refuses a body that is not UTF-8 (400 on body), rather than reading its bytes as U+FFFD; UTF-8 and a BOM are read", async () => {
    const utf8 = (text: string) => new TextEncoder().encode(text)
    for (const bad of [[0xed, 0xa0, 0x80], [0xff], [0xc0, 0xaf], [0x80]]) {
      const body = new Uint8Array([...utf8(`{"chains":["a`), ...bad, ...utf8(`"]}`)])
      const response = await post("/v1/echo", body as unknown as string)
      expect(response.status).toBe(400)
      expect((await json(response)).error.details).toEqual([{ field: "body", message: "is not valid UTF-8" }])
    }
    const good = await post("/v1/echo", new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(`{"chains":["ré"]}`)]) as unknown as string)
    expect(good.status).toBe(200)
    expect(await json(good)).toEqual({ chains: ["ré"] })
  })

  it("refuses a compressed body (Content-Encoding) unread, saying so; identity is a plain body", async () => {
    const { gzipSync } = await import("node:zlib")
    const body = gzipSync(`{"chains":["solana"]}`)
    for (const encoding of ["gzip", "br", "GZIP, identity"]) {
      const response = await post("/v1/echo", body as unknown as string, { "content-encoding": encoding })
      expect(response.status).toBe(400)
      expect(response.headers.get("connection")).toBe("close")
      const refusal = await json(response)
      expect(refusal.error.code).toBe("VALIDATION_ERROR")
      expect(refusal.error.details).toEqual([{ field: "body", message: `is encoded (${encoding}); send it uncompressed` }])
    }
    const plain = await post("/v1/echo", `{"chains":["base"]}`, { "content-encoding": "identity" })
    expect(plain.status).toBe(200)
    expect(await json(plain)).toEqual({ chains: ["base"] })
  })

  it("refuses a chunked body (no Content-Length) once it passes the limit; a small chunked body is read", async () => {
    await expectTooLarge(await post("/v1/echo-small", chunked(`{"chains":["solana"]}${" ".repeat(200)}`)), 64)
    const small = await post("/v1/echo-small", chunked(`{"chains":["base"]}`))
    expect(small.status).toBe(200)
    expect(await json(small)).toEqual({ chains: ["base"] })
    // Not JSON, within the limit: still the malformed-body answer.
    const broken = await post("/v1/echo-small", chunked(`{"chains":`))
    expect(broken.status).toBe(400)
    expect((await json(broken)).error.details).toEqual([{ field: "body", message: "is not valid JSON" }])
  })
})

/** The ingest route reads its JSON and NDJSON bodies within its own (larger) limit the same way. */
describe("ingest body limit", () => {
  const adminKey = "adm_test_limitlimitlimitlimitlimitlimit"
  let url: string
  let close: () => Promise<void>
  const received: Array<number> = []
  beforeAll(async () => {
    const ingest = Layer.succeed(Ingest.Ingest)({
      ingest: (batch: ReadonlyArray<unknown>) => {
        received.push(batch.length)
        return Effect.succeed({ accepted: batch.length, duplicates: 0 })
      }
    } as unknown as Ingest.IngestShape)
    const serverLayer = ApiServer.layer({
      routes: ingestRoutesWith({ maxBodyBytes: 100 }),
      contract: Contract,
      platform: { admin: { pathPrefix: "/admin/", keys: AdminKeys.make([Redacted.make(adminKey)]) } }
    }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 })),
      Layer.provide(admissionLayer(makeKeyStoreState(), { keyPerMinute: 1_000, ipPerMinute: 10_000 })),
      Layer.provide(ingest)
    )
    const scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(serverLayer, scope))
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
    url = `http://127.0.0.1:${address.port}${ingestPath}`
    close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  })
  afterAll(() => close())

  const send = (body: string, contentType: string) =>
    fetch(url, { method: "POST", headers: { authorization: `Bearer ${adminKey}`, "content-type": contentType }, body })

  it("refuses a JSON array or an NDJSON body over the limit whole, without handing any event on", async () => {
    const event = JSON.stringify({ type: "nativePrice" })
    for (const [contentType, body] of [
      ["application/json", `[${Array(8).fill(event).join(",")}]`],
      ["application/x-ndjson", `${Array(8).fill(event).join("\n")}\n`]
    ] as const) {
      expect(body.length).toBeGreaterThan(100)
      const response = await send(body, contentType)
      expect(response.status, contentType).toBe(400)
      expect(response.headers.get("connection")).toBe("close")
      const refusal = await json(response)
      expect(refusal.error.details).toEqual([{ field: "body", message: "is larger than 100 bytes" }])
      expect(refusal.error.message).toContain("Split the batch")
    }
    expect(received).toEqual([])
    // Within the limit, both forms reach ingest.
    expect((await send(`[${event},${event}]`, "application/json")).status).toBe(200)
    expect((await send(`${event}\n${event}\n`, "application/x-ndjson")).status).toBe(200)
    expect(received).toEqual([2, 2])
  })
})
