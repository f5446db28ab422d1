/**
 * Architecture prototypes for the read API (issue 3): the same token GET served several ways, each
 * with request id, per-IP and per-key GCRA limits and bearer auth against SHA-256 hashed keys.
 *
 *   raw      node:http, everything hand-written (the baseline the issue measures against)
 *   router   effect/http HttpRouter route + one global middleware doing id/limits/auth
 *   httpapi  effect/http-api HttpApi endpoint + HttpApiMiddleware security (bearer); id and IP
 *            limit in a global router middleware
 *   bare     raw node:http with no auth/limits (how much the checks themselves cost)
 *   platform the chosen design as shipped: ApiServer.layer + ApiRoute.get (src/), with the
 *            in-process RateLimiterLive and a SHA-256 hashed in-memory key store
 *
 *   node --import tsx bench/prototypes.ts <mode> <port>
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Redacted, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSecurity
} from "effect/http-api"
import { createHash, randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { Admission, KeyStore } from "@spot/application"
import { ApiRoute, ApiServer, RateLimiterLive } from "../src/index.js"
import * as Gcra from "../src/Gcra.js"

const platformKey = { id: "key_1", name: "bench", createdAt: 0, expiresAt: null, revokedAt: null }

export const benchKey = "sk_live_benchbenchbenchbenchbenchbenchbenchbenchben"
const body = JSON.stringify({
  chain: "solana",
  address: "So11111111111111111111111111111111111111112",
  symbol: "BENCH",
  name: "Bench token",
  decimals: 9,
  priceUsd: "0.000123",
  priceNative: "0.00000081",
  marketCapUsd: "123456.78",
  liquidityUsd: "45678.9",
  volume24hUsd: "98765.4321",
  holdersCount: 1234,
  createdAt: 1763745882000,
  updatedAt: 1763745882000,
  annotations: [],
  socials: { twitter: null, website: null, telegram: null },
  bondingCurvePct: 42.5,
  padding: "x".repeat(180)
})
const bodyBytes = Buffer.from(body)

const sha256 = (key: string) => createHash("sha256").update(key).digest("base64url")
const keysByHash = new Map([[sha256(benchKey), { id: "key_1", revokedAt: null, expiresAt: null }]])
const keyLimit = { perMinute: 1e9 }
const ipLimit = { perMinute: 1e9 }
const keyBuckets = new Map<string, Gcra.Bucket>()
const ipBuckets = new Map<string, Gcra.Bucket>()
const takeFrom = (buckets: Map<string, Gcra.Bucket>, limit: Gcra.Limit, id: string, now: number) => {
  const decision = Gcra.take(limit, buckets.get(id) ?? Gcra.full(limit, now), now)
  buckets.set(id, decision.bucket)
  return decision
}
const bearerKey = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || authorization.length < 8 || authorization.charCodeAt(6) !== 32) return undefined
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return undefined
  return authorization.slice(7)
}
const requestIdOf = (sent: string | undefined) => (sent !== undefined && sent.length <= 128 ? sent : randomUUID())
const unauthorized = JSON.stringify({ error: { code: "UNAUTHORIZED", message: "Send Authorization: Bearer <key>" } })

const [mode = "raw", portArg = "3000"] = process.argv.slice(2)
const port = Number(portArg)

if (mode === "raw" || mode === "bare") {
  createServer((req, res) => {
    if (mode === "bare") {
      res.writeHead(200, { "content-type": "application/json", "content-length": bodyBytes.length })
      res.end(bodyBytes)
      return
    }
    const now = Date.now()
    const requestId = requestIdOf(req.headers["x-request-id"] as string | undefined)
    const ip = takeFrom(ipBuckets, ipLimit, req.socket.remoteAddress ?? "", now)
    const key = bearerKey(req.headers.authorization)
    const record = key === undefined ? undefined : keysByHash.get(sha256(key))
    if (record === undefined) {
      res.writeHead(401, {
        "content-type": "application/json",
        "x-request-id": requestId,
        "x-ratelimit-remaining": String(ip.remaining)
      })
      res.end(unauthorized)
      return
    }
    const decision = takeFrom(keyBuckets, keyLimit, record.id, now)
    const match = /^\/v1\/tokens\/([^/]+)\/([^/?]+)$/.exec(req.url ?? "")
    res.writeHead(match ? 200 : 404, {
      "content-type": "application/json",
      "content-length": bodyBytes.length,
      "x-request-id": requestId,
      "x-ratelimit-remaining": String(decision.remaining)
    })
    res.end(bodyBytes)
  }).listen(port, () => console.log(`listening ${mode} ${port}`))
} else {
  const params = Schema.Struct({ chain: Schema.Literals(["solana", "base", "bsc"]), address: Schema.String })
  const tokenResponse = () =>
    HttpServerResponse.text(body, { contentType: "application/json" })

  // One global middleware: request id, IP limit, auth, key limit (router mode) or id + IP only (httpapi mode).
  const platformMiddleware = (withAuth: boolean) =>
    HttpRouter.middleware(
      (httpEffect) =>
        Effect.withFiber((fiber) => {
          const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
          const now = Date.now()
          const requestId = requestIdOf(request.headers["x-request-id"])
          const ip = takeFrom(ipBuckets, ipLimit, request.remoteAddress._tag === "Some" ? request.remoteAddress.value : "", now)
          if (!withAuth) {
            return Effect.map(httpEffect, (response) =>
              HttpServerResponse.setHeader(response, "x-request-id", requestId))
          }
          const key = bearerKey(request.headers.authorization)
          const record = key === undefined ? undefined : keysByHash.get(sha256(key))
          if (record === undefined) {
            return Effect.succeed(
              HttpServerResponse.text(unauthorized, {
                status: 401,
                contentType: "application/json",
                headers: { "x-request-id": requestId, "x-ratelimit-remaining": String(ip.remaining) }
              })
            )
          }
          const decision = takeFrom(keyBuckets, keyLimit, record.id, now)
          return Effect.map(httpEffect, (response) =>
            HttpServerResponse.setHeaders(response, {
              "x-request-id": requestId,
              "x-ratelimit-remaining": String(decision.remaining)
            }))
        }),
      { global: true }
    )

  let app: Layer.Layer<never, never, any>
  if (mode === "platform") {
    const keyStore = Layer.succeed(KeyStore)({
      verify: (presented) => Exit.succeed(keysByHash.has(sha256(typeof presented === "string" ? presented : Redacted.value(presented))) ? platformKey : null),
      create: () => Effect.die("bench"),
      list: Effect.succeed([]),
      revoke: () => Effect.succeed(null)
    })
    const tokenBody = ApiRoute.preEncoded(body)
    const server = ApiServer.layer({
      routes: HttpRouter.addAll([ApiRoute.get("/v1/tokens/:chain/:address", { params, handler: () => Effect.succeed(tokenBody) })]),
      contract: HttpApi.make("bench").add(
        HttpApiGroup.make("tokens").add(HttpApiEndpoint.get("token", "/v1/tokens/:chain/:address", { params: params.fields }))
      )
    }).pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { port })),
      Layer.provide(Admission.layer()),
      Layer.provide(keyStore),
      Layer.provide(RateLimiterLive.layer({ keyPerMinute: 1e9, ipPerMinute: 1e9 }))
    )
    Effect.runFork(Effect.andThen(Effect.sync(() => console.log(`listening ${mode} ${port}`)), Layer.launch(server as Layer.Layer<never>)))
    app = Layer.empty
  } else if (mode === "router") {
    const decodeParams = Schema.decodeUnknownExit(params)
    app = Layer.mergeAll(
      HttpRouter.add(
        "GET",
        "/v1/tokens/:chain/:address",
        Effect.flatMap(HttpRouter.params, (raw) => {
          const decoded = decodeParams(raw)
          return decoded._tag === "Success"
            ? Effect.succeed(tokenResponse())
            : Effect.succeed(HttpServerResponse.text("{}", { status: 400 }))
        })
      ),
      platformMiddleware(true)
    )
  } else {
    class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")({ message: Schema.String }, {
      httpApiStatus: 401
    }) {}
    class CurrentKey extends Context.Service<CurrentKey, { readonly id: string }>()("bench/CurrentKey") {}
    class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: CurrentKey }>()(
      "bench/Authorization",
      { security: { bearer: HttpApiSecurity.bearer }, error: Unauthorized }
    ) {}
    const Api = HttpApi.make("bench").add(
      HttpApiGroup.make("tokens")
        .add(HttpApiEndpoint.get("token", "/v1/tokens/:chain/:address", { params: params.fields, success: Schema.Unknown }))
        .middleware(Authorization)
    )
    const AuthorizationLive = Layer.succeed(Authorization)({
      bearer: (httpEffect, { credential }) =>
        Effect.suspend((): Effect.Effect<HttpServerResponse.HttpServerResponse, any> => {
          const record = keysByHash.get(sha256(Redacted.value(credential)))
          if (record === undefined) return Effect.fail(new Unauthorized({ message: "Send Authorization: Bearer <key>" }))
          const decision = takeFrom(keyBuckets, keyLimit, record.id, Date.now())
          return Effect.map(
            Effect.provideService(httpEffect, CurrentKey, record),
            (response) => HttpServerResponse.setHeader(response, "x-ratelimit-remaining", String(decision.remaining))
          )
        })
    })
    const TokensLive = HttpApiBuilder.group(Api, "tokens", (handlers) =>
      handlers.handle("token", () => Effect.succeed(tokenResponse())))
    app = Layer.mergeAll(
      HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(
        Layer.provide(TokensLive),
        Layer.provide(AuthorizationLive)
      ),
      platformMiddleware(false)
    )
  }
  if (mode !== "platform") {
  const server = HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { port }))
  )
  Effect.runFork(Effect.andThen(Effect.sync(() => console.log(`listening ${mode} ${port}`)), Layer.launch(server as Layer.Layer<never>)))
  }
}
// Exit cleanly on Ctrl-C so that `node --cpu-prof` writes its profile.
process.on("SIGINT", () => process.exit(0))
