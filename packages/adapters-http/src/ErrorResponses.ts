/**
 * The one place that turns failures into the wire error (spec "Errors"): the body is exactly
 * `{error: {code, message, details?}}`, the status follows the code, and nothing else (no `_tag`,
 * no stack) reaches the client.
 */
import { Cause, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiSchema } from "effect/http-api"
import type { Admission } from "@spot/application"
import { ErrorEnvelope } from "@spot/domain"
import type { ErrorCode, FieldError } from "@spot/domain"
import { ApiError } from "./ApiError.js"
import * as HttpText from "./HttpText.js"

export interface WireError {
  readonly status: number
  readonly code: ErrorCode
  readonly message: string
  readonly details?: unknown
  /** Headers the refusal itself carries (added to the per-request ones). */
  readonly headers?: Readonly<Record<string, string>>
}

const json = "application/json"

/** Encodes the envelope once: callers on hot paths keep the resulting string. */
export const encodeEnvelope = (error: WireError): string =>
  JSON.stringify({
    error: error.details === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, details: error.details }
  })

/** A JSON response with no header of its own yet (`content-type` and `content-length` only). */
const plain = (status: number, body: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, { status, contentType: json })

/**
 * Adds headers one `setHeader` at a time. In effect 4.1, `setHeaders` and the `headers` option of
 * the response constructors cost several µs per response (a record spread and a prototype change
 * on every call); one `setHeader` is a small copy. Never mutates `response` (it may be shared).
 */
export const addHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  headers: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse => {
  let out = response
  for (const name in headers) out = HttpServerResponse.setHeader(out, name, headers[name]!)
  return out
}

/** The response for a wire error; `headers` are added as given (request id, budget, Retry-After). */
export const toResponse = (
  error: WireError,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse => {
  const response = addHeaders(plain(error.status, encodeEnvelope(error)), headers)
  return error.headers === undefined ? response : addHeaders(response, error.headers)
}

/**
 * A response from an already encoded envelope (constant refusals are encoded once at start-up).
 * The result holds no per-request state: keep it and add the per-request headers to it.
 */
export const fromEncoded = (
  status: number,
  body: string,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse => addHeaders(plain(status, body), headers)

export const unauthorized: WireError = {
  status: 401,
  code: "UNAUTHORIZED",
  message: "Missing or invalid API key. Send it as the header `Authorization: Bearer <key>`; " +
    "keys in other headers, the query string or cookies are refused."
}

export const keyCheckUnavailable: WireError = {
  status: 503,
  code: "SERVICE_UNAVAILABLE",
  message: "The API key could not be checked right now. Retry with backoff, with the same key."
}

export const rateLimited = (scope: "key" | "ip"): WireError => ({
  status: 429,
  code: "RATE_LIMITED",
  message: scope === "key"
    ? "Request budget of this API key exhausted. Wait the Retry-After seconds, then retry."
    : "Request budget of this IP address exhausted. Wait the Retry-After seconds, then retry."
})

/**
 * The wire error of an admission refusal (Admission), for the REST pipeline and the stream's
 * handshake alike; a 401 names the scheme to use (`WWW-Authenticate`).
 */
export const admissionRefusal = (refusal: Admission.Refusal["_tag"]): WireError => {
  switch (refusal) {
    case "IpBudgetSpent":
      return rateLimited("ip")
    case "KeyRefused":
      return { ...unauthorized, headers: { "www-authenticate": "Bearer" } }
    case "KeyCheckUnavailable":
      return keyCheckUnavailable
    case "KeyBudgetSpent":
      return rateLimited("key")
  }
}

export const stopping: WireError = {
  status: 503,
  code: "SERVICE_UNAVAILABLE",
  message: "The service is stopping. Retry with backoff: another instance, or this one once it is back, will answer."
}

export const internalError: WireError = {
  status: 500,
  code: "INTERNAL_ERROR",
  message: "Unexpected server failure. Retry later; if it persists, report the X-Request-ID."
}

/** The stream's path (spec "Endpoints": `GET /v1/stream (WebSocket)`), served by adapters-ws. */
const streamPath = "/v1/stream"

/** Whether every `%` escape of `path` is well formed and the bytes they spell are UTF-8. */
const isPercentEncoded = (path: string): boolean => {
  if (!path.includes("%")) return true
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

export const notFound = (method: string, path: string): WireError => ({
  status: 404,
  code: "NOT_FOUND",
  message: `No endpoint ${method} ${path}. See /openapi.json for the endpoints.`
})

const validation = (details: ReadonlyArray<FieldError>): WireError => ApiError.validation(details)

const hasTag = (u: unknown): u is { readonly _tag: string } =>
  typeof u === "object" && u !== null && typeof (u as { _tag?: unknown })._tag === "string"

/**
 * Maps one typed failure to its wire error, or undefined when it is not one we know (the caller
 * then answers 500 and logs it). Application errors are matched by tag so this module needs no
 * runtime import of every use case.
 */
export const fromFailure = (failure: unknown): WireError | undefined => {
  if (failure instanceof ApiError) return failure
  if (!hasTag(failure)) return undefined
  const f = failure as any
  switch (failure._tag) {
    case "ValidationFailed":
      return validation(f.issues)
    case "UnsupportedChain":
      return {
        status: 400,
        code: "UNSUPPORTED_CHAIN",
        message: `Chain "${f.value}" in ${f.field} is not supported. Use one of: solana, base, bsc, robinhood, arc.`,
        details: [{ field: f.field, message: `unsupported chain "${f.value}"` }]
      }
    case "NotFound":
      return { status: 404, code: "NOT_FOUND", message: f.message }
    case "Unavailable":
      return { status: 503, code: "SERVICE_UNAVAILABLE", message: `${f.message} Retry with backoff.` }
    case "KeyStoreUnavailable":
      return keyCheckUnavailable
    case "HttpServerError": {
      const reason = f.reason
      if (reason?._tag === "RouteNotFound") {
        const url: string = reason.request.url
        const q = url.indexOf("?")
        const path = q < 0 ? url : url.slice(0, q)
        // Not "no such endpoint" when the path names one but cannot be read, or is the stream's.
        if (!isPercentEncoded(path)) return validation([{ field: "path", message: "is not valid percent-encoded UTF-8" }])
        if (path === streamPath) {
          return validation([{ field: "Upgrade", message: `${streamPath} is a WebSocket endpoint: open it with the headers Connection: Upgrade and Upgrade: websocket` }])
        }
        return notFound(reason.request.method, path)
      }
      if (reason?._tag === "RequestParseError") {
        return validation([{ field: "body", message: "is not valid JSON" }])
      }
      return undefined
    }
    default:
      return undefined
  }
}

/** The wire error for a whole cause: the first known failure, else 500. */
export const fromCause = (cause: Cause.Cause<unknown>): { readonly wire: WireError; readonly expected: boolean } => {
  for (const reason of cause.reasons) {
    if (reason._tag === "Fail") {
      const wire = fromFailure(reason.error)
      if (wire !== undefined) return { wire, expected: true }
    }
  }
  return { wire: internalError, expected: false }
}

/**
 * Response headers as PlatformMiddleware sends them (spec "Limits", response headers), for the
 * contract: every response carries `X-Request-ID`, every `/v1` response (every operation of the
 * contract) `X-RateLimit-Remaining`, every 429 `Retry-After`, every 401 `WWW-Authenticate`.
 */
export const responseHeaders = {
  requestId: Schema.String.annotate({
    description: "Trace ID: the request's own X-Request-ID when it sent 1-128 visible ASCII characters, else a generated UUID"
  }),
  rateLimitRemaining: HttpText.documentedAs({ type: "integer", minimum: 0 }).annotate({
    description:
      "Requests left in the current window: the key's budget once the key is accepted; the IP's budget for a 401, an IP-limit 429, or a 503 where the key could not be checked"
  }),
  retryAfter: HttpText.documentedAs({ type: "integer", minimum: 1 }).annotate({ description: "Whole seconds to wait; never 0" }),
  wwwAuthenticate: HttpText.documentedAs({ type: "string", enum: ["Bearer"] }).annotate({ description: "The accepted scheme" })
}

/** The headers of every response of the contract (all of it is under `/v1`). */
export const everyResponseHeaders = {
  "X-Request-ID": responseHeaders.requestId,
  "X-RateLimit-Remaining": responseHeaders.rateLimitRemaining
}

/** A success body of the contract with the headers every response carries. */
export const withResponseHeaders = <S extends Schema.Top>(body: S) => HttpApiSchema.WithHeaders(body, everyResponseHeaders)

/** The envelope answered with `status`, its headers, and what the status means here. */
const errorResponse = (status: number, description: string, headers: Schema.Struct.Fields = {}) =>
  HttpApiSchema.WithHeaders(ErrorEnvelope.pipe(HttpApiSchema.status(status)), { ...everyResponseHeaders, ...headers })
    .annotate({ description })

/**
 * Error schemas for the HttpApi contract (OpenAPI only): the envelope itself, with the status the
 * code is sent with and the headers. The served bodies come from `toResponse`, which produces
 * exactly this shape.
 */
export const contractErrors = {
  badRequest: errorResponse(
    400,
    "VALIDATION_ERROR (details: [{field, message}], one per invalid field) or UNSUPPORTED_CHAIN (details: [{field, message}] naming the field with the slug)"
  ),
  unauthorized: errorResponse(401, "UNAUTHORIZED: key missing, malformed, unknown, revoked or expired", {
    "WWW-Authenticate": responseHeaders.wwwAuthenticate
  }),
  notFound: errorResponse(404, "NOT_FOUND"),
  rateLimited: errorResponse(429, "RATE_LIMITED: the key's or the IP's request budget is spent; wait Retry-After seconds", {
    "Retry-After": responseHeaders.retryAfter
  }),
  internal: errorResponse(500, "INTERNAL_ERROR"),
  unavailable: errorResponse(503, "SERVICE_UNAVAILABLE: a dependency is down or the key could not be checked; retry with backoff")
} satisfies Record<string, Schema.Top>

/** The errors every `/v1` endpoint can answer with. */
export const commonContractErrors = [
  contractErrors.badRequest,
  contractErrors.unauthorized,
  contractErrors.rateLimited,
  contractErrors.internal,
  contractErrors.unavailable
] as const
