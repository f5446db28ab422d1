/**
 * Requests Node's HTTP parser refuses before any handler sees them (its `clientError` event): a
 * request line and headers over Node's 16 KB limit (a long query string, a big cookie), headers
 * that never finish arriving, bytes that are not HTTP/1.1 (a NUL in a header, an unknown method,
 * bad chunked framing). Node's own answer is a bare status line with no body and none of the
 * headers every response carries (spec "Errors", "Limits"); here it is the spec's envelope:
 *
 * - 400 VALIDATION_ERROR with one `{field, message}` saying what was wrong (`headers` for the size
 *   limit, `request` otherwise: the spec has no code for a malformed or late request, and
 *   VALIDATION_ERROR's status is what a client falls back on);
 * - `X-Request-ID` (generated: the request's own header could not be read) and
 *   `X-RateLimit-Remaining`, the IP's budget, which such a request spends like any refused one
 *   (429 RATE_LIMITED with `Retry-After` when it is spent);
 * - `Connection: close`: the parser cannot find the next request's start after a refused one.
 *
 * Nothing is written to a socket that is gone or still owes a response (a malformed request
 * pipelined behind one being answered): that socket is closed.
 */
import { maxHeaderSize } from "node:http"
import type { Duplex } from "node:stream"
import { ApiError } from "./ApiError.js"
import * as ErrorResponses from "./ErrorResponses.js"
import * as RequestId from "./RequestId.js"

/** What Node hands the `clientError` listener. */
export type ClientError = Error & { readonly code?: string }

const CONNECT_METHOD = "SPOT_CONNECT_METHOD"
/** A CONNECT request (Node's `connect` event hands over its socket), answered like a refused request. */
export const connectMethod = (): ClientError => Object.assign(new Error("CONNECT is not served"), { code: CONNECT_METHOD })

/** Answers (or closes) the socket of a request Node's parser refused. */
export type ClientErrorHandler = (error: ClientError, socket: Duplex) => void

/** The IP's budget decision for a refused request (the platform's rate limiter). */
export interface Budget {
  readonly allowed: boolean
  /** Requests left; undefined when no budget applies (no `X-RateLimit-Remaining` then). */
  readonly remaining: number | undefined
  readonly retryAfterSeconds: number
}

/** The one `{field, message}` that says why the parser refused the request. */
export const issueOf = (error: ClientError): { readonly field: string; readonly message: string } => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        field: "headers",
        message: `the request line and headers exceed ${maxHeaderSize.toLocaleString("en-US")} bytes (a query string that long, or a header or cookie that big, is not accepted)`
      }
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "HPE_HEADERS_TIMEOUT":
      return { field: "request", message: "the request did not arrive in full in time" }
    case CONNECT_METHOD:
      return { field: "request", message: "CONNECT is not served: this is an API, not a proxy" }
    default:
      return { field: "request", message: `is not a valid HTTP/1.1 request (${error.code ?? "unreadable"})` }
  }
}

/** The raw HTTP response for a refused request, given the IP budget it spent. */
export const responseText = (error: ClientError, budget: Budget, requestId: string): string => {
  const wire = budget.allowed
    ? ApiError.validation([issueOf(error)])
    : ErrorResponses.rateLimited("ip")
  const body = ErrorResponses.encodeEnvelope(wire)
  const reason = budget.allowed ? "Bad Request" : "Too Many Requests"
  return (
    `HTTP/1.1 ${wire.status} ${reason}\r\n` +
    "Content-Type: application/json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-ID: ${requestId}\r\n` +
    (budget.remaining === undefined ? "" : `X-RateLimit-Remaining: ${budget.remaining}\r\n`) +
    (budget.allowed ? "" : `Retry-After: ${budget.retryAfterSeconds}\r\n`) +
    "Connection: close\r\n\r\n" +
    body
  )
}

/** A handler that spends the peer's IP budget (`takeIp`) and answers with the envelope. */
export const handler = (takeIp: (peer: string | undefined) => Budget): ClientErrorHandler => (error, socket) => {
  // A response still owed on this socket (a malformed request pipelined behind one being
  // answered): a second response would come before it, so the socket is closed instead.
  const owesResponse = (socket as { _httpMessage?: unknown })._httpMessage != null
  if (error.code === "ECONNRESET" || !socket.writable || owesResponse) {
    socket.destroy()
    return
  }
  const peer = (socket as { remoteAddress?: string }).remoteAddress
  socket.end(responseText(error, takeIp(peer), RequestId.fromHeader(undefined)))
}

/** Before the platform installs its handler: the same envelope, no budget spent or reported. */
export const unmetered: ClientErrorHandler = handler(() => ({ allowed: true, remaining: undefined, retryAfterSeconds: 0 }))
