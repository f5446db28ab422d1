/**
 * What every request goes through before and after its handler, as one global router middleware
 * (so it also wraps unknown routes). In order (spec "Authentication" and "Limits"):
 *
 *   1. request id: echo a sane `X-Request-ID`, else a new UUID; set on every response;
 *   2. `GET /openapi.json` stops here: no key, no budget, no `X-RateLimit-Remaining`;
 *   3. admission (the application's Admission: IP budget, key, key budget), given the client's
 *      address and the key as Credentials reads it. Its refusals are answered here: the IP's
 *      budget spent → 429 with the IP's budget and Retry-After; no usable key (missing,
 *      malformed, misplaced, unknown, revoked or expired) → the same 401 (IP budget in
 *      `X-RateLimit-Remaining`); key store unavailable → 503 (IP budget), never 401; the key's
 *      budget spent → 429 with the key's budget and Retry-After. Paths under
 *      `options.admin.pathPrefix` (`/admin/`) take an operator key instead (AdminKeys), with the
 *      same 401, and skip the key budget;
 *   4. handler (or the 404 of an unknown route), with the key's remaining budget; any failure
 *      becomes the error envelope (ErrorResponses), unexpected ones a logged 500.
 *
 * Measured choices (bench/compare.ts, docs/http-platform.md): no per-request `provideService` of
 * the key, failures caught by a wrapper built once rather than a per-request `matchCauseEffect`,
 * admission decided in plain code (`Admission.decide`: no continuation unless the key store must
 * really wait), response headers added with `setHeader` (effect 4.1's `setHeaders` and `headers`
 * options cost several µs a response), refusals built once, and Node's own header record read
 * instead of a per-request copy (RequestHeaders).
 *
 * Every request other than the OpenAPI document needs a key, unknown paths included: there is no
 * other keyless endpoint (rule 7), and answering 404 before authenticating would let anyone map
 * the routes. It is written as plain code over the request instead of nested Effect combinators
 * because it runs on every request: only a waiting key lookup and the handler are effects.
 */
import { Cause, Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Admission } from "@spot/application"
import type { RateDecision } from "@spot/application"
import type { IncomingMessage } from "node:http"
import * as AdminKeys from "./AdminKeys.js"
import * as ClientErrors from "./ClientErrors.js"
import * as Credentials from "./Credentials.js"
import * as DirectReads from "./DirectReads.js"
import * as ErrorResponses from "./ErrorResponses.js"
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
}

type HttpEffect = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>

/**
 * A request's path as the router matches it (effect's FindMyWay: a full URL's origin dropped, cut
 * at `?`, `;` or `#`, percent-decoded, duplicate slashes merged, a trailing slash dropped,
 * lower-cased), so that the key a
 * path takes is decided on the path its route is found by. The router reaches the ingest route at
 * `/ADMIN/v1/events`, `//admin/v1/events` and `/%61dmin/v1/events`: a key check comparing the
 * literal prefix would accept a customer key there.
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
    const admission = yield* Admission.Admission
    // as the router matches it (lower-case): `/OPENAPI.JSON` and `/openapi.json/` are the document too
    const openApiPath = (options.openApiPath ?? "/openapi.json").toLowerCase()
    const clientIpHeader = options.clientIpHeader?.toLowerCase()
    const admin = options.admin

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
    const refusalResponse = (tag: Admission.Refusal["_tag"]) => {
      const wire = ErrorResponses.admissionRefusal(tag)
      return ErrorResponses.fromEncoded(wire.status, ErrorResponses.encodeEnvelope(wire), wire.headers)
    }
    const unauthorized = refusalResponse("KeyRefused")
    const unavailable = refusalResponse("KeyCheckUnavailable")
    const ipLimited = refusalResponse("IpBudgetSpent")
    const keyLimited = refusalResponse("KeyBudgetSpent")

    /** The request's own headers: `setHeader` twice (`setHeaders` costs µs: ErrorResponses.addHeaders). */
    const stamp = (response: HttpServerResponse.HttpServerResponse, requestId: string, remaining: number) =>
      HttpServerResponse.setHeader(
        HttpServerResponse.setHeader(response, "x-request-id", requestId),
        "x-ratelimit-remaining",
        String(remaining)
      )

    /** 429: the request id, the exhausted budget and Retry-After. */
    const limited = (base: HttpServerResponse.HttpServerResponse, requestId: string, budget: RateDecision): HttpEffect =>
      Effect.succeed(HttpServerResponse.setHeader(stamp(base, requestId, budget.remaining), "retry-after", String(budget.retryAfterSeconds)))

    /** A refusal's response: the request id and the budget it reports (401 and 503: the IP's, spent). */
    const refused = (refusal: Admission.Refusal, requestId: string): HttpEffect => {
      switch (refusal._tag) {
        case "IpBudgetSpent":
          return limited(ipLimited, requestId, refusal.budget)
        case "KeyBudgetSpent":
          return limited(keyLimited, requestId, refusal.budget)
        case "KeyRefused":
          return Effect.succeed(stamp(unauthorized, requestId, refusal.budget.remaining))
        case "KeyCheckUnavailable":
          return Cause.hasInterruptsOnly(refusal.cause)
            ? Effect.failCause(refusal.cause as Cause.Cause<never>)
            : Effect.andThen(
              Effect.annotateLogs(Effect.logWarning("API key check unavailable", refusal.cause), "requestId", requestId),
              Effect.succeed(stamp(unavailable, requestId, refusal.budget.remaining))
            )
      }
    }

    /** The handler's response with the request id and the budget left (the key's; an operator's: the IP's). */
    const served = (httpEffect: HttpEffect, requestId: string, remaining: number): HttpEffect =>
      Effect.map(httpEffect, (response) => stamp(response, requestId, remaining))

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

    /**
     * A direct read's admission (DirectReads): admitted only when Admission needs no one's answer
     * (`admitCached`: both budgets spent as the steps above spend them); the request's id and the
     * key's remaining budget are returned. Otherwise nothing is spent and the request goes through
     * the steps above (which answer it, refusal or not).
     */
    const admitDirect = (request: IncomingMessage, url: string): DirectReads.Admitted | undefined => {
      if (admin !== undefined && isUnder(admin.pathPrefix, url)) return undefined
      const headers = request.headers
      const key = Credentials.presentedKey(url, headers, request.rawHeaders)
      if (key === undefined) return undefined
      const admitted = admission.admitCached({ clientIp: clientIp(headers, request.socket.remoteAddress), key })
      if (admitted === undefined) return undefined
      return { requestId: RequestId.fromHeader(RequestHeaders.get(headers, "x-request-id")), remaining: admitted.budget.remaining }
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
      const clientErrors = ClientErrors.handler((peer) => admission.spendIpBudget(peer ?? "unknown"))
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
        const presented: Admission.AdmissionRequest = {
          clientIp: clientIp(headers, request.remoteAddress._tag === "Some" ? request.remoteAddress.value : undefined),
          key: Credentials.presentedKey(url, headers, RequestHeaders.raw(request))
        }
        if (admin !== undefined && isUnder(admin.pathPrefix, url)) {
          const operator = admission.admitOperator(presented, admin.keys.accepts)
          return operator._tag === "OperatorAdmitted"
            ? served(httpEffect, requestId, operator.budget.remaining)
            : refused(operator, requestId)
        }
        const decided = admission.decide(presented)
        switch (decided._tag) {
          case "Admitted":
            return served(httpEffect, requestId, decided.budget.remaining)
          case "KeyLookup":
            return Effect.matchEffect(decided.answer, {
              onFailure: (refusal) => refused(refusal, requestId),
              onSuccess: (admitted) => served(httpEffect, requestId, admitted.budget.remaining)
            })
          default:
            return refused(decided, requestId)
        }
      })
    }
  })

/** The middleware as a global router layer: it wraps every route and the unknown-route 404. */
export const layer = <R = never>(
  options: PlatformOptions = {},
  directRoutes?: Effect.Effect<ReadonlyArray<DirectReads.DirectRoute>, never, R>
): Layer.Layer<never, never, HttpRouter.HttpRouter | Admission.Admission | R> =>
  HttpRouter.middleware(make(options, directRoutes), { global: true }) as any
