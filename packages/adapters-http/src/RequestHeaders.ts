/**
 * The headers of a request as the platform middleware reads them, without a copy per request.
 *
 * `HttpServerRequest.headers` of @effect/platform-node builds a new `Headers` object from Node's
 * header record on first access (an `Object.entries` walk, a `toLowerCase` per name): about a
 * microsecond a request for what Node already holds with lower-case names. For a request served
 * by `NodeHttpServer` (HTTP/1.1) this reads Node's record itself; for anything else (HTTP/2, a web
 * handler) it falls back to `request.headers`. It assumes no middleware in front of the platform
 * middleware replaced the headers with `request.modify` (ApiServer installs none: the platform
 * middleware is the outermost, global one).
 *
 * Node joins repeated headers with ", " (`cookie` with "; ") and keeps only the first of a few
 * (e.g. `authorization`), as Effect's copy does; only `set-cookie`, not a request header, is an
 * array, which readers here must tolerate anyway.
 */
import type { HttpServerRequest } from "effect/http"
import { toIncomingMessage } from "@effect/platform-node/NodeHttpServerRequest"
import { IncomingMessage } from "node:http"

/** Lower-case header names to values. */
export type RequestHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export const of = (request: HttpServerRequest.HttpServerRequest): RequestHeaders => {
  const source = toIncomingMessage(request) as unknown
  return source instanceof IncomingMessage ? source.headers : request.headers
}

/** Node's list of the request's header names and values as sent (repeats included), when at hand. */
export const raw = (request: HttpServerRequest.HttpServerRequest): ReadonlyArray<string> | undefined => {
  const source = toIncomingMessage(request) as unknown
  return source instanceof IncomingMessage ? source.rawHeaders : undefined
}

/** One header as a string (repeated values joined), or undefined. */
export const get = (headers: RequestHeaders, name: string): string | undefined => {
  const value = headers[name]
  return value === undefined || typeof value === "string" ? value : value.join(", ")
}
