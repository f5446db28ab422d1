/**
 * What every request goes through before and after its handler, as one global router middleware
 * (so it also wraps unknown routes). In order (spec "Authentication" and "Limits"):
 *
 *   1. request id: echo a sane `X-Request-ID`, else a new UUID; set on every response;
 *   2. `GET /openapi.json` stops here: no key, no budget, no `X-RateLimit-Remaining`;
 *   3. IP budget: refused → 429 with the IP's remaining budget and Retry-After;
 *   4. key: missing, malformed, misplaced, unknown, revoked or expired → the same 401 (IP budget
 *      in `X-RateLimit-Remaining`); key store unavailable → 503 (IP budget), never 401;
 *      Paths under `options.admin.pathPrefix` (`/admin/`) take an operator key instead (AdminKeys),
 *      with the same 401, and skip the key budget;
 *   5. key budget: refused → 429 with the key's budget and Retry-After;
 *   6. handler (or the 404 of an unknown route), with the key's remaining budget; any failure
 *      becomes the error envelope (ErrorResponses), unexpected ones a logged 500.
 *
 * Measured choices (bench/compare.ts): no per-request `provideService` of the key, `Date.now()`
 * rather than the Clock service, failures caught by a wrapper built once rather than a
 * per-request `matchCauseEffect`, and an Exit from the key store handled without a continuation.
 * Together these took the middleware from about 0.50 to 0.6x of raw node:http's CPU efficiency.
 * Then (issue 3, docs/http-platform.md): response headers added with `setHeader` (effect 4.1's
 * `setHeaders` and `headers` options cost several µs a response), refusals built once, Node's
 * own header record read instead of a per-request copy (RequestHeaders), and, with
 * `keyCacheTtlMs`, a key's record reused for a short while instead of a `Redacted`, a store
 * lookup and a continuation on every request (KeyCache).
 *
 * Every request other than the OpenAPI document needs a key, unknown paths included: there is no
 * other keyless endpoint (rule 7), and answering 404 before authenticating would let anyone map
 * the routes. It is written as plain code over the request instead of nested Effect combinators
 * because it runs on every request: only the key lookup and the handler are effects.
 */
import { Cause, Context, Effect, Exit, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { ApiKey, KeyStore, RateLimiter } from "@spot/application"
import type { ApiKeyRecord, RateDecision } from "@spot/application"
import type { IncomingMessage } from "node:http"
import * as AdminKeys from "./AdminKeys.js"
import * as ClientErrors from "./ClientErrors.js"
import * as Credentials from "./Credentials.js"
import * as DirectReads from "./DirectReads.js"
import * as ErrorResponses from "./ErrorResponses.js"
import * as KeyCache from "./KeyCache.js"
import * as RequestHeaders from "./RequestHeaders.js"
import * as RequestId from "./RequestId.js"

export interface PlatformOptions {
  /** Path of the keyless OpenAPI document; default `/openapi.json`. */
  readonly openApiPath?: string
  /**
   * Header carrying the client address when the server sits behind a proxy that sets it (first
   * entry of a comma list, e.g. `x-forwarded-for`). Unset: the socket's peer address, which is
   * the only safe choice when clients can reach the server directly (they could forge the header).
   */
  readonly clientIpHeader?: string
  /**
   * Paths under `pathPrefix` (the administrative interface, lower-case, e.g. `/admin/`; as the router
   * matches paths, `routedPath`: `/ADMIN/v1/events` and `//admin/v1/events` are under it) are
   * authenticated with these operator keys instead of customer API keys: same bearer header,
   * same 401, IP budget only. With no keys configured every such request is refused (401).
   */
  readonly admin?: { readonly pathPrefix: string; readonly keys: AdminKeys.AdminKeys }
  /**
   * Reuse the key store's answer for a key for this many ms (KeyCache) instead of asking the store
   * on every request. Default 0: every request asks the store. With it, a revocation or a store
   * outage is noticed at most this much later than the store notices it; expiry stays exact
   * (decided per request from the record).
   */
  readonly keyCacheTtlMs?: number
  /** The clock of budgets, expiry and the key cache, in Unix ms; default `Date.now` (tests pass their own). */
  readonly now?: () => number
}

type HttpEffect = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>

/**
 * A request's path as the router matches it (effect's FindMyWay: a full URL's origin dropped, cut
 * at `?`, `;` or `#`, percent-decoded, duplicate slashes merged, a trailing slash dropped,
 * lower-cased), so that the key a
 * path takes is decided on the path its route is found by. A black-box check found a customer key
 * accepted by the ingest route at `/ADMIN/v1/events`, `//admin/v1/events` and `/%61dmin/v1/events`:
 * the router reached the route, while the key check compared the literal prefix.
 */
export const routedPath = (url: string): string => {
  let path = url.charCodeAt(0) === 47 ? url : url.replace(/^https?:\/\/.*?\//, "/")
  const end = path.search(/[?;#]/)
  if (end >= 0) path = path.slice(0, end)
  try {
    path = decodeURI(path)
  } catch {
    // a malformed escape: the router finds no route either (404)
  }
  return path.replace(/\/{2,}/g, "/").replace(/(?<=.)\/$/, "").toLowerCase()
}

/** Whether `url` reaches a route under `prefix` (a lower-case path ending in `/`, e.g. `/admin/`), its bare form included. */
export const isUnder = (prefix: string, url: string): boolean => {
  const path = routedPath(url)
  return path.startsWith(prefix) || path === prefix.slice(0, -1)
}

/**
 * The middleware. With `directRoutes`, and a server whose requests the platform may take first
 * (`DirectReads.DirectRequestsService`), successful reads those routes recognise are answered
 * without Effect's server (DirectReads); everything else takes the steps above.
 */
export const make = <R = never>(options: PlatformOptions = {}, directRoutes?: Effect.Effect<ReadonlyArray<DirectReads.DirectRoute>, never, R>) =>
  Effect.gen(function*() {
    const keyStore = yield* KeyStore
    const limiter = yield* RateLimiter
    // as the router matches it (lower-case): `/OPENAPI.JSON` and `/openapi.json/` are the document too
    const openApiPath = (options.openApiPath ?? "/openapi.json").toLowerCase()
    const clientIpHeader = options.clientIpHeader?.toLowerCase()
    const admin = options.admin
    const unauthorizedBody = ErrorResponses.encodeEnvelope(ErrorResponses.unauthorized)
    const unavailableBody = ErrorResponses.encodeEnvelope(ErrorResponses.keyCheckUnavailable)
    const ipLimitedBody = ErrorResponses.encodeEnvelope(ErrorResponses.rateLimited("ip"))
    const keyLimitedBody = ErrorResponses.encodeEnvelope(ErrorResponses.rateLimited("key"))

    /** The client's address: the proxy's header when configured and present, else the socket's peer. */
    const clientIp = (headers: RequestHeaders.RequestHeaders, peer: string | undefined): string => {
      if (clientIpHeader !== undefined) {
        const forwarded = RequestHeaders.get(headers, clientIpHeader)
        if (forwarded !== undefined && forwarded.length > 0) {
          const comma = forwarded.indexOf(",")
          return (comma < 0 ? forwarded : forwarded.slice(0, comma)).trim()
        }
      }
      return peer ?? "unknown"
    }

    // Refusals are built once; a request only adds its own id and budget (and Retry-After).
    const unauthorized = ErrorResponses.fromEncoded(401, unauthorizedBody, { "www-authenticate": "Bearer" })
    const unavailable = ErrorResponses.fromEncoded(503, unavailableBody)
    const ipLimited = ErrorResponses.fromEncoded(429, ipLimitedBody)
    const keyLimited = ErrorResponses.fromEncoded(429, keyLimitedBody)

    /** The request's own headers: `setHeader` twice (`setHeaders` costs µs: ErrorResponses.addHeaders). */
    const stamp = (response: HttpServerResponse.HttpServerResponse, requestId: string, remaining: number) =>
      HttpServerResponse.setHeader(
        HttpServerResponse.setHeader(response, "x-request-id", requestId),
        "x-ratelimit-remaining",
        String(remaining)
      )

    /** 401 or 503: the request id and the budget that was spent (the IP's). */
    const refused = (base: HttpServerResponse.HttpServerResponse, requestId: string, budget: RateDecision): HttpEffect =>
      Effect.succeed(stamp(base, requestId, budget.remaining))

    /** 429: the request id, the exhausted budget and Retry-After. */
    const limited = (base: HttpServerResponse.HttpServerResponse, requestId: string, budget: RateDecision): HttpEffect =>
      Effect.succeed(HttpServerResponse.setHeader(stamp(base, requestId, budget.remaining), "retry-after", String(budget.retryAfterSeconds)))

    const clock = options.now ?? Date.now
    const keyCache = options.keyCacheTtlMs !== undefined && options.keyCacheTtlMs > 0
      ? new KeyCache.KeyCache({ ttlMs: options.keyCacheTtlMs })
      : undefined

    /**
     * Turns any failure of the inner effect into the envelope response. Built once per wrapped
     * effect (not per request); the per-request part is only the header stamp.
     */
    const guard = (httpEffect: HttpEffect): HttpEffect =>
      Effect.catchCause(httpEffect, (cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
        const { expected, wire } = ErrorResponses.fromCause(cause)
        const response = ErrorResponses.toResponse(wire)
        if (expected) return Effect.succeed(response)
        // The generated request id is not known here (it is stamped on the way out); the client's
        // own X-Request-ID and the URL identify the request in the log.
        return Effect.withFiber((fiber) => {
          const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
          return Effect.as(
            Effect.annotateLogs(Effect.logError("request failed unexpectedly", cause), {
              method: request.method,
              url: request.url,
              clientRequestId: request.headers["x-request-id"] ?? ""
            }),
            response
          )
        })
      })

    const keyCheckFailed = (cause: Cause.Cause<unknown>, requestId: string, ip: RateDecision): HttpEffect =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.andThen(
          Effect.annotateLogs(Effect.logWarning("API key check unavailable", cause), "requestId", requestId),
          refused(unavailable, requestId, ip)
        )

    const afterKeyCheck = (
      record: ApiKeyRecord | null,
      httpEffect: HttpEffect,
      requestId: string,
      ip: RateDecision,
      now: number
    ): HttpEffect => {
      if (record === null || !ApiKey.isUsable(record, now)) return refused(unauthorized, requestId, ip)
      const budget = limiter.takeKey(record.id, now)
      if (!budget.allowed) return limited(keyLimited, requestId, budget)
      const remaining = budget.remaining
      return Effect.map(httpEffect, (response) => stamp(response, requestId, remaining))
    }

    /** A record the store returned, kept for the next requests with this key (not "no such key"). */
    const remember = (digest: string | undefined, record: ApiKeyRecord | null): void => {
      if (digest !== undefined && record !== null) keyCache!.remember(digest, record, clock())
    }

    /**
     * A direct read's admission (DirectReads): when every step above would pass for this request
     * without asking the key store — a key the key cache vouches for, usable now, with budget left,
     * and the IP's budget — both budgets are spent as the steps spend them and the request's id
     * and the key's remaining budget are returned. Otherwise nothing is spent and the request
     * goes through the steps above (which answer it, refusal or not).
     */
    const admitDirect = (request: IncomingMessage, url: string): DirectReads.Admitted | undefined => {
      if (keyCache === undefined || (admin !== undefined && isUnder(admin.pathPrefix, url))) return undefined
      const headers = request.headers
      const key = Credentials.presentedKey(url, headers, request.rawHeaders)
      if (key === undefined) return undefined
      const now = clock()
      const record = keyCache.lookup(KeyCache.digestOf(key), now)
      if (record === undefined || !ApiKey.isUsable(record, now) || !limiter.keyHasBudget(record.id, now)) return undefined
      if (!limiter.takeIp(clientIp(headers, request.socket.remoteAddress), now).allowed) return undefined
      const remaining = limiter.takeKey(record.id, now).remaining
      return { requestId: RequestId.fromHeader(RequestHeaders.get(headers, "x-request-id")), remaining }
    }

    const directRequests = yield* Effect.serviceOption(DirectReads.DirectRequestsService)
    if (directRequests._tag === "Some") {
      const server = directRequests.value
      if (directRoutes !== undefined) {
        const handler = DirectReads.handler(yield* directRoutes, admitDirect)
        server.install(handler)
        yield* Effect.addFinalizer(() => Effect.sync(() => server.uninstall(handler)))
      }
      // Requests Node's parser refused spend the peer's IP budget like any refused request.
      const clientErrors = ClientErrors.handler((peer) => limiter.takeIp(peer ?? "unknown", clock()))
      server.installClientErrors(clientErrors)
      yield* Effect.addFinalizer(() => Effect.sync(() => server.uninstallClientErrors(clientErrors)))
    }

    return (handler: HttpEffect): HttpEffect => {
      const httpEffect = guard(handler)
      return Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const headers = RequestHeaders.of(request)
        const requestId = RequestId.fromHeader(RequestHeaders.get(headers, "x-request-id"))
        const url = request.url
        if ((request.method === "GET" || request.method === "HEAD") && routedPath(url) === openApiPath) {
          return Effect.map(httpEffect, (response) => HttpServerResponse.setHeader(response, "x-request-id", requestId))
        }
        const now = clock()
        const ip = limiter.takeIp(clientIp(headers, request.remoteAddress._tag === "Some" ? request.remoteAddress.value : undefined), now)
        if (!ip.allowed) return limited(ipLimited, requestId, ip)
        const key = Credentials.presentedKey(url, headers, RequestHeaders.raw(request))
        if (key === undefined) return refused(unauthorized, requestId, ip)
        if (admin !== undefined && isUnder(admin.pathPrefix, url)) {
          if (!admin.keys.accepts(key)) return refused(unauthorized, requestId, ip)
          const remaining = ip.remaining
          return Effect.map(httpEffect, (response) => stamp(response, requestId, remaining))
        }
        let digest: string | undefined
        if (keyCache !== undefined) {
          digest = KeyCache.digestOf(key)
          const cached = keyCache.lookup(digest, now)
          if (cached !== undefined) return afterKeyCheck(cached, httpEffect, requestId, ip, now)
        }
        const checked = keyStore.verify(Redacted.make(key))
        // A store may answer with an Exit: branch on it now instead of scheduling a continuation.
        if (Exit.isExit(checked)) {
          if (Exit.isFailure(checked)) return keyCheckFailed(checked.cause, requestId, ip)
          const record = checked.value as ApiKeyRecord | null
          remember(digest, record)
          return afterKeyCheck(record, httpEffect, requestId, ip, now)
        }
        return Effect.matchCauseEffect(checked, {
          onFailure: (cause) => keyCheckFailed(cause, requestId, ip),
          onSuccess: (record) => {
            remember(digest, record)
            return afterKeyCheck(record, httpEffect, requestId, ip, now)
          }
        })
      })
    }
  })

/** The middleware as a global router layer: it wraps every route and the unknown-route 404. */
export const layer = <R = never>(
  options: PlatformOptions = {},
  directRoutes?: Effect.Effect<ReadonlyArray<DirectReads.DirectRoute>, never, R>
): Layer.Layer<never, never, HttpRouter.HttpRouter | KeyStore | RateLimiter | R> =>
  HttpRouter.middleware(make(options, directRoutes), { global: true }) as any
