/**
 * The platform middleware reads Node's own header record when the request comes from
 * NodeHttpServer (the real-server tests in Platform.test.ts) and Effect's `request.headers`
 * otherwise: here a web handler, where there is no Node record at all.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { ApiServer, RequestHeaders } from "../src/index.js"
import { admissionLayer, bearer, Contract, Greeting, makeKeyStoreState, routes, validKey } from "./support/TestServer.js"

describe("RequestHeaders", () => {
  it("joins a repeated header's values and passes single values as they are", () => {
    expect(RequestHeaders.get({ a: "x", b: ["y", "z"] }, "a")).toBe("x")
    expect(RequestHeaders.get({ a: "x", b: ["y", "z"] }, "b")).toBe("y, z")
    expect(RequestHeaders.get({}, "a")).toBeUndefined()
  })

  it("lets the platform read the key, request id and misplaced keys of a request that is not Node's", async () => {
    const app = ApiServer.app({ routes, contract: Contract }).pipe(
      Layer.provide(admissionLayer(makeKeyStoreState(), { keyPerMinute: 100, ipPerMinute: 100 })),
      Layer.provide(Layer.succeed(Greeting)({ text: "hello" }))
    )
    const web = HttpRouter.toWebHandler(app, { disableLogger: true })
    const { dispose } = web
    // Everything the app needs is provided above: no per-request services.
    const handler = (request: Request) => web.handler(request, Context.empty() as never)
    try {
      const ok = await handler(new Request("http://localhost/v1/trades?identity=kol", { headers: { ...bearer(), "x-request-id": "web-1" } }))
      expect(ok.status).toBe(200)
      expect(ok.headers.get("x-request-id")).toBe("web-1")
      expect(ok.headers.get("x-ratelimit-remaining")).toBe("99")
      const misplaced = await handler(new Request("http://localhost/v1/trades?identity=kol", { headers: { ...bearer(), "x-api-key": validKey } }))
      expect(misplaced.status).toBe(401)
      const missing = await handler(new Request("http://localhost/v1/trades?identity=kol"))
      expect(missing.status).toBe(401)
    } finally {
      await dispose()
    }
  })
})
