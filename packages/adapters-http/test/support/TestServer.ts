/**
 * A real listening server (port 0) with the platform around test routes, called with global
 * fetch (NodeHttpClient.layerUndici crashes on Node 20).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Redacted, Schema, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import type { HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { createServer } from "node:http"
import { createHash } from "node:crypto"
import { Admission, KeyStore, KeyStoreUnavailable, NotFound, UnsupportedChain, ValidationFailed } from "@spot/application"
import type { ApiKeyRecord, RateLimits } from "@spot/application"
import { ApiRoute, ApiServer, BearerAuth, ErrorResponses, KeyCache, PlatformMiddleware, RateLimiterLive } from "../../src/index.js"

export const validKey = "sk_live_validvalidvalidvalidvalidvalidvalidval"
export const revokedKey = "sk_live_revokedrevokedrevokedrevokedrevokedre"
export const expiredKey = "sk_live_expiredexpiredexpiredexpiredexpiredex"
/** Expires at `expiringKeyExpiresAt` (a time only a test clock reaches: tests of the key cache). */
export const expiringKey = "sk_live_expiringexpiringexpiringexpiringexpir"
export const expiringKeyExpiresAt = 5_000_000

/**
 * What a test can do to the key store: make it fail, revoke a key by id, count the lookups.
 */
export interface KeyStoreState {
  failing: boolean
  /** Ids answered as revoked (at time 1) from now on. */
  readonly revoked: Set<string>
  /** `verify` calls so far. */
  verifyCalls: number
}

export const makeKeyStoreState = (): KeyStoreState => ({ failing: false, revoked: new Set(), verifyCalls: 0 })

const sha = (key: string) => createHash("sha256").update(key).digest("base64url")

/** A key store over fixed records; `failing` makes every check fail as if the database were down. */
export const makeKeyStore = (state: KeyStoreState) => {
  const records = new Map<string, ApiKeyRecord>([
    [sha(validKey), { id: "key_valid", name: "valid", createdAt: 0, expiresAt: null, revokedAt: null }],
    [sha(revokedKey), { id: "key_revoked", name: "revoked", createdAt: 0, expiresAt: null, revokedAt: 1 }],
    [sha(expiredKey), { id: "key_expired", name: "expired", createdAt: 0, expiresAt: 1_000, revokedAt: null }],
    [sha(expiringKey), { id: "key_expiring", name: "expiring", createdAt: 0, expiresAt: expiringKeyExpiresAt, revokedAt: null }]
  ])
  return Layer.succeed(KeyStore)({
    verify: (presented) =>
      Effect.suspend(() => {
        state.verifyCalls++
        if (state.failing) return Effect.fail(new KeyStoreUnavailable({ message: "database down" }))
        const record = records.get(sha(Redacted.value(presented)))
        if (record === undefined) return Effect.succeed(null)
        return Effect.succeed(state.revoked.has(record.id) ? { ...record, revokedAt: 1 } : record)
      }),
    create: () => Effect.die("not in tests"),
    list: Effect.sync(() => Array.from(records.values())),
    revoke: () => Effect.succeed(null)
  })
}

// The contract: what /openapi.json describes. Same schema objects as the served routes.
export class Greeting extends Context.Service<Greeting, { readonly text: string }>()("test/Greeting") {}

export const TradesQuery = Schema.Struct({
  identity: Schema.Literals(["kol", "partnerscan"]),
  limit: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt())),
  chains: Schema.optionalKey(Schema.String)
})
export const EchoBody = Schema.Struct({ chains: Schema.Array(Schema.String).check(Schema.isMinLength(1)) })
export const TokenParams = Schema.Struct({ chain: Schema.String, address: Schema.String })

export const Contract = HttpApi.make("spot-test").add(
  HttpApiGroup.make("reads")
    .add(
      HttpApiEndpoint.get("trades", "/v1/trades", {
        query: TradesQuery.fields,
        success: Schema.Struct({ ok: Schema.Boolean }),
        error: [...ErrorResponses.commonContractErrors]
      }),
      HttpApiEndpoint.get("token", "/v1/tokens/:chain/:address", {
        params: TokenParams.fields,
        success: Schema.Struct({ ok: Schema.Boolean }),
        error: [...ErrorResponses.commonContractErrors, ErrorResponses.contractErrors.notFound]
      }),
      HttpApiEndpoint.post("echo", "/v1/echo", {
        payload: EchoBody,
        success: EchoBody,
        error: [...ErrorResponses.commonContractErrors]
      })
    )
    .middleware(BearerAuth)
)

const ok = ApiRoute.preEncoded(JSON.stringify({ ok: true }))
const encodeEcho = ApiRoute.json(EchoBody)

export const routes = HttpRouter.addAll([
  ApiRoute.get("/v1/trades", { query: TradesQuery, handler: () => Effect.succeed(ok) }),
  ApiRoute.get("/v1/tokens/:chain/:address", {
    params: TokenParams,
    handler: ({ params }): Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      NotFound | ValidationFailed | UnsupportedChain
    > => {
      switch (params.address) {
        case "missing":
          return Effect.fail(new NotFound({ message: "No such token. Check the chain and address." }))
        case "invalid":
          return Effect.fail(new ValidationFailed({ issues: [{ field: "address", message: "not an address" }] }))
        case "boom":
          return Effect.die(new Error("secret internal detail"))
        default:
          return params.chain === "doge"
            ? Effect.fail(new UnsupportedChain({ field: "chain", value: "doge" }))
            : Effect.succeed(ok)
      }
    }
  }),
  ApiRoute.post("/v1/echo", { payload: EchoBody, handler: ({ payload }) => Effect.succeed(encodeEcho(payload)) }),
  // The same with a 64-byte body limit (RequestBody), to test the limit without large uploads.
  ApiRoute.post("/v1/echo-small", { payload: EchoBody, maxBodyBytes: 64, handler: ({ payload }) => Effect.succeed(encodeEcho(payload)) }),
  // The same with a body that must arrive within 0.3 s, to test the deadline without waiting long.
  ApiRoute.post("/v1/echo-quick", { payload: EchoBody, maxBodySeconds: 0.3, handler: ({ payload }) => Effect.succeed(encodeEcho(payload)) }),
  // A handler using a service: the service is provided to the server layer.
  ApiRoute.get("/v1/greeting", { handler: () => Greeting.useSync((g) => ApiRoute.preEncoded(JSON.stringify({ greeting: g.text }))) })
])

export interface TestServer {
  readonly url: string
  readonly keyStoreState: KeyStoreState
  readonly close: () => Promise<void>
}

/** The platform's options and the admission's: the key cache's time to live (none: ask the store every time) and clock. */
export interface TestPlatformOptions extends PlatformMiddleware.PlatformOptions {
  readonly keyCacheTtlMs?: number
  readonly now?: () => number
}

/** The Admission use case over the test key store and a limiter with `limits`. */
export const admissionLayer = (
  keyStoreState: KeyStoreState,
  limits: RateLimits,
  options: Pick<TestPlatformOptions, "keyCacheTtlMs" | "now"> = {}
) =>
  Admission.layer(options.now === undefined ? {} : { now: options.now }).pipe(
    Layer.provide(makeKeyStore(keyStoreState)),
    Layer.provide(RateLimiterLive.layer(limits)),
    Layer.provide(options.keyCacheTtlMs === undefined || options.keyCacheTtlMs <= 0 ? Layer.empty : KeyCache.layer({ ttlMs: options.keyCacheTtlMs }))
  )

export const startServer = async (
  limits: RateLimits = { keyPerMinute: 1_000, ipPerMinute: 10_000 },
  options?: TestPlatformOptions
): Promise<TestServer> => {
  const keyStoreState = makeKeyStoreState()
  const { keyCacheTtlMs, now, ...platform } = options ?? {}
  const serverLayer = ApiServer.layer(options === undefined ? { routes, contract: Contract } : { routes, contract: Contract, platform }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 })),
    Layer.provide(admissionLayer(keyStoreState, limits, { ...(keyCacheTtlMs === undefined ? {} : { keyCacheTtlMs }), ...(now === undefined ? {} : { now }) })),
    Layer.provide(Layer.succeed(Greeting)({ text: "hello" }))
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(serverLayer, scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    keyStoreState,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export const bearer = (key = validKey) => ({ authorization: `Bearer ${key}` })
