/**
 * Reading a request body within a size limit (docs/http-api.md, "Request bodies"). Without one,
 * Effect's server buffers whatever a client sends. A body is only read after the request passed
 * authentication and its budgets (PlatformMiddleware), and:
 *
 * - a `Content-Length` above the limit is refused before a byte of the body is read;
 * - a body without one (chunked) is read up to the limit, then refused (the rest is discarded);
 * - a compressed body (`Content-Encoding` other than `identity`) is refused unread;
 * - a body that has not all arrived within the route's time (`maxSeconds`) is refused: a client
 *   sending a few bytes now and then would otherwise hold its connection until Node's request
 *   timeout (300 s) closed it with no answer at all;
 *
 * both as 400 VALIDATION_ERROR on field `body` (the spec's code for a malformed body), with
 * `Connection: close` so that the rest of an oversized upload is not read to keep the connection.
 */
import { ByteSize, Duration, Effect, Fiber } from "effect"
import { HttpIncomingMessage } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { ApiError } from "./ApiError.js"
import * as RequestHeaders from "./RequestHeaders.js"

/** The public API's largest body (a discovery request is a few KB). */
export const DEFAULT_MAX_BYTES = 1_048_576
/** How long the public API waits for a body to arrive whole (1 MiB takes well under a second on any link a server has). */
export const DEFAULT_MAX_SECONDS = 10

/** A route's limit: its largest body, how long it may take to arrive, and what the refusal advises. */
export interface Limit {
  readonly maxBytes: number
  readonly maxSeconds?: number
  readonly advice?: string
}

/** The body as JSON, or the refusal: too large, not UTF-8, or not JSON. */
export const json = (request: HttpServerRequest.HttpServerRequest, limit: Limit): Effect.Effect<unknown, ApiError> =>
  Effect.flatMap(text(request, limit), (body) =>
    Effect.try({ try: (): unknown => (body === "" ? null : JSON.parse(body)), catch: () => notJson }))

/**
 * The body as text, or the refusal: too large, unreadable, or not UTF-8. Bytes that are not UTF-8
 * are refused, not read as U+FFFD: the text would no longer be what the client sent (a lone
 * surrogate's bytes would be stored as three replacement characters).
 */
export const text = (request: HttpServerRequest.HttpServerRequest, limit: Limit): Effect.Effect<string, ApiError> =>
  Effect.flatMap(within(request, limit), (bytes) =>
    Effect.try({ try: () => utf8.decode(bytes), catch: () => notUtf8 }))

const utf8 = new TextDecoder("utf-8", { fatal: true })
const notJson = ApiError.validation([{ field: "body", message: "is not valid JSON" }])
const notUtf8 = ApiError.validation([{ field: "body", message: "is not valid UTF-8" }])

/** The body's bytes within the limit's size and time, or the refusal. */
const within = (request: HttpServerRequest.HttpServerRequest, limit: Limit): Effect.Effect<ArrayBuffer, ApiError> => {
  const { advice, maxBytes } = limit
  const maxSeconds = limit.maxSeconds ?? DEFAULT_MAX_SECONDS
  // Node's own header record (RequestHeaders), not Effect's per-request copy of it.
  const declared = RequestHeaders.get(RequestHeaders.of(request), "content-length")
  if (declared !== undefined && Number(declared) > maxBytes) return Effect.fail(ApiError.bodyTooLarge(maxBytes, advice))
  const encoding = RequestHeaders.get(RequestHeaders.of(request), "content-encoding")?.trim()
  if (encoding !== undefined && encoding !== "" && encoding.toLowerCase() !== "identity") return Effect.fail(ApiError.bodyEncoded(encoding))
  const reading = request.arrayBuffer.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBytes)),
    Effect.catch((error) => Effect.fail(isOverflow(error) ? ApiError.bodyTooLarge(maxBytes, advice) : notJson))
  )
  // The read runs in a fiber of its own that the deadline does not interrupt: interrupting it
  // destroys the request, and with it the socket, before the refusal could be written. Left
  // alone, it ends when the connection closes after the refusal (`Connection: close`).
  return Effect.flatMap(Effect.forkDetach(reading), (fiber) =>
    Fiber.join(fiber).pipe(
      Effect.timeoutOrElse({ duration: Duration.seconds(maxSeconds), orElse: () => Effect.fail(ApiError.bodyTooSlow(maxSeconds)) })
    ))
}

/** Whether a body read failed because the body passed `MaxBodySize` (the server's `MaxBytesError`). */
const isOverflow = (error: unknown): boolean => {
  const cause = (error as { reason?: { cause?: { _tag?: unknown } } } | undefined)?.reason?.cause
  return cause?._tag === "MaxBytesError"
}
