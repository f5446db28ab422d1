/**
 * What every request goes through before and after its handler, as one global router middleware
 * (so it also wraps unknown routes). In order (spec "Authentication" and "Limits"):
 *
 *   1. request id: echo a sane `X-Request-ID`, else a new UUID; set on every response;
 *   2. `GET /openapi.json` stops here: no key, no budget, no `X-RateLimit-Remaining`;
 *   3. IP budget: refused → 429 with the IP's remaining budget and Retry-After;
 *   4. key: missing, malformed, misplaced, unknown, revoked or expired → the same 401 (IP budget
 *      in `X-RateLimit-Remaining`); key store unavailable → 503 (IP budget), never 401;
 *   5. key budget: refused → 429 with the key's budget and Retry-After;
 *   6. handler (or the 404 of an unknown route), with the key's remaining budget; any failure
 *      becomes the error envelope (ErrorResponses), unexpected ones a logged 500.
 *
 * Every request other than the OpenAPI document needs a key, unknown paths included: there is no
 * other keyless endpoint (rule 7), and answering 404 before authenticating would let anyone map
 * the routes. It is written as plain code over the request instead of nested Effect combinators
 * because it runs on every request: only the key lookup and the handler are effects.
 */
import { Cause, Clock, Context, Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { ApiKey, KeyStore, RateLimiter } from "@spot/application"
import type { ApiKeyRecord, RateDecision } from "@spot/application"
import * as Credentials from "./Credentials.js"
import * as ErrorResponses from "./ErrorResponses.js"
import * as RequestId from "./RequestId.js"

/** The key that authenticated the current request, for handlers that need it. */
export class CurrentApiKey extends Context.Service<CurrentApiKey, ApiKeyRecord>()("@spot/adapters-http/CurrentApiKey") {}

export interface PlatformOptions {
  /** Path of the keyless OpenAPI document; default `/openapi.json`. */
  readonly openApiPath?: string
  /**
   * Header carrying the client address when the server sits behind a proxy that sets it (first
   * entry of a comma list, e.g. `x-forwarded-for`). Unset: the socket's peer address, which is
   * the only safe choice when clients can reach the server directly (they could forge the header).
   */
  readonly clientIpHeader?: string
}

type HttpEffect = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>

const pathOf = (url: string): string => {
  const q = url.indexOf("?")
  return q < 0 ? url : url.slice(0, q)
}

export const make = (options: PlatformOptions = {}) =>
  Effect.gen(function*() {
    const keyStore = yield* KeyStore
    const limiter = yield* RateLimiter
    const openApiPath = options.openApiPath ?? "/openapi.json"
    const clientIpHeader = options.clientIpHeader?.toLowerCase()
    const unauthorizedBody = ErrorResponses.encodeEnvelope(ErrorResponses.unauthorized)
    const unavailableBody = ErrorResponses.encodeEnvelope(ErrorResponses.keyCheckUnavailable)
    const ipLimitedBody = ErrorResponses.encodeEnvelope(ErrorResponses.rateLimited("ip"))
    const keyLimitedBody = ErrorResponses.encodeEnvelope(ErrorResponses.rateLimited("key"))

    const clientIp = (request: HttpServerRequest.HttpServerRequest): string => {
      if (clientIpHeader !== undefined) {
        const forwarded = request.headers[clientIpHeader]
        if (forwarded !== undefined && forwarded.length > 0) {
          const comma = forwarded.indexOf(",")
          return (comma < 0 ? forwarded : forwarded.slice(0, comma)).trim()
        }
      }
      return request.remoteAddress._tag === "Some" ? request.remoteAddress.value : "unknown"
    }

    const refused = (status: number, body: string, requestId: string, decision: RateDecision) =>
      Effect.succeed(
        ErrorResponses.fromEncoded(
          status,
          body,
          status === 429
            ? {
              "x-request-id": requestId,
              "x-ratelimit-remaining": String(decision.remaining),
              "retry-after": String(decision.retryAfterSeconds)
            }
            : status === 401
            ? {
              "x-request-id": requestId,
              "x-ratelimit-remaining": String(decision.remaining),
              "www-authenticate": "Bearer"
            }
            : { "x-request-id": requestId, "x-ratelimit-remaining": String(decision.remaining) }
        )
      )

    /** Runs the handler and stamps the response, turning any failure into the envelope. */
    const respond = (httpEffect: HttpEffect, requestId: string, remaining: number | undefined) =>
      Effect.matchCauseEffect(httpEffect, {
        onSuccess: (response) =>
          Effect.succeed(
            HttpServerResponse.setHeaders(
              response,
              remaining === undefined
                ? { "x-request-id": requestId }
                : { "x-request-id": requestId, "x-ratelimit-remaining": String(remaining) }
            )
          ),
        onFailure: (cause) => {
          if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
          const { expected, wire } = ErrorResponses.fromCause(cause)
          const response = ErrorResponses.toResponse(
            wire,
            remaining === undefined
              ? { "x-request-id": requestId }
              : { "x-request-id": requestId, "x-ratelimit-remaining": String(remaining) }
          )
          if (expected) return Effect.succeed(response)
          return Effect.as(
            Effect.annotateLogs(Effect.logError("request failed unexpectedly", cause), "requestId", requestId),
            response
          )
        }
      })

    return (httpEffect: HttpEffect): HttpEffect =>
      Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const requestId = RequestId.fromHeader(request.headers["x-request-id"])
        const url = request.url
        if ((request.method === "GET" || request.method === "HEAD") && pathOf(url) === openApiPath) {
          return respond(httpEffect, requestId, undefined)
        }
        const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
        const ip = limiter.takeIp(clientIp(request), now)
        if (!ip.allowed) return refused(429, ipLimitedBody, requestId, ip)
        const key = Credentials.presentedKey(url, request.headers)
        if (key === undefined) return refused(401, unauthorizedBody, requestId, ip)
        return Effect.matchCauseEffect(keyStore.verify(Redacted.make(key)), {
          onFailure: (cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.failCause(cause)
              : Effect.andThen(
                Effect.annotateLogs(Effect.logWarning("API key check unavailable", cause), "requestId", requestId),
                refused(503, unavailableBody, requestId, ip)
              ),
          onSuccess: (record) => {
            if (record === null || !ApiKey.isUsable(record, now)) return refused(401, unauthorizedBody, requestId, ip)
            const budget = limiter.takeKey(record.id, now)
            if (!budget.allowed) return refused(429, keyLimitedBody, requestId, budget)
            return respond(Effect.provideService(httpEffect, CurrentApiKey, record), requestId, budget.remaining)
          }
        })
      })
  })

/** The middleware as a global router layer: it wraps every route and the unknown-route 404. */
export const layer = (options: PlatformOptions = {}): Layer.Layer<never, never, HttpRouter.HttpRouter | KeyStore | RateLimiter> =>
  HttpRouter.middleware(make(options), { global: true }) as any
