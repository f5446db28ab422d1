/**
 * Reads answered on Node's `request` event, before Effect's HTTP server sees the request.
 *
 * A token's state is the read terminals and bots poll most, and its answer is bytes the engine's
 * change already encoded (Encoding.tokenBytes). Through Effect's server such a request costs a
 * fiber, its context, the router and an `HttpServerResponse` with its header copies: about as
 * much CPU again as Node's own HTTP work, and about 10 KB of garbage a request, whose scavenges
 * are most of the p99 under load (docs/http-platform.md, "Direct reads"). Here a request that is
 * certain to succeed is answered in plain code instead:
 *
 * - a `DirectRoute` recognises a URL it can answer and returns the body, or declines;
 * - the platform (PlatformMiddleware.admitDirect, through Admission.admitCached) admits it only
 *   when every check of the request pipeline passes without asking anyone (a key the key cache
 *   vouches for, both budgets left), and spends the budgets exactly as the pipeline would;
 * - the response has the pipeline's status, headers and body for the same request.
 *
 * Everything else — a refusal, an error, a key the cache does not hold, any request not of the
 * plain shape a route accepts — is declined before anything is spent and goes to Effect's handler
 * unchanged, so every answer other than the successful read comes from one place. A test sends the
 * same requests both ways and compares the answers (apps/server/test/http/direct-reads.test.ts).
 *
 * Owning the server's `request` event, it also answers for the stop: once the server stops
 * listening, every response closes its connection, and a request that arrives after Effect's
 * handler is gone gets the 503 envelope (packages/adapters-http/test/DirectReads.test.ts).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { Context } from "effect"
import * as ClientErrors from "./ClientErrors.js"
import * as ErrorResponses from "./ErrorResponses.js"
import * as RequestId from "./RequestId.js"

/** The body of a successful read of this URL (path and query as sent), or undefined to decline. */
export type DirectRoute = (url: string) => Uint8Array | undefined

/** Answers the request and returns true, or returns false having done nothing. */
export type DirectHandler = (request: IncomingMessage, response: ServerResponse) => boolean

/** Where the platform installs its direct handler, on the server Effect's handler serves. */
export interface DirectRequests {
  readonly install: (handler: DirectHandler) => void
  readonly uninstall: (handler: DirectHandler) => void
  /** Requests the direct handler has answered so far (the rest went to Effect's handler). */
  readonly answered: () => number
  /**
   * Where the platform installs its answer to requests Node's parser refused (ClientErrors); until
   * then they get the same envelope without a budget.
   */
  readonly installClientErrors: (handler: ClientErrors.ClientErrorHandler) => void
  readonly uninstallClientErrors: (handler: ClientErrors.ClientErrorHandler) => void
}

export class DirectRequestsService extends Context.Service<DirectRequestsService, DirectRequests>()(
  "@spot/adapters-http/DirectRequests"
) {}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void

/**
 * Takes over `server`'s `request` event: the listener Effect's server adds (NodeHttpServer's
 * `serve`) is kept as the fallback behind the installed direct handler. Also answers its
 * `clientError` event (ClientErrors). Other events are untouched.
 */
export const ownRequests = (server: Server): DirectRequests => {
  let direct: DirectHandler | undefined
  let clientErrors: ClientErrors.ClientErrorHandler = ClientErrors.unmetered
  let fallback: RequestListener | undefined
  let answeredCount = 0
  // Typed loosely: these forward any event name to EventEmitter's own methods.
  const on = server.on as (this: Server, event: string | symbol, listener: (...args: Array<any>) => void) => Server
  const off = server.off as (this: Server, event: string | symbol, listener: (...args: Array<any>) => void) => Server
  const intercept = function(this: Server, event: string | symbol, listener: (...args: Array<any>) => void) {
    if (event === "request") {
      fallback = listener as RequestListener
      return this
    }
    return on.call(this, event, listener)
  }
  const release = function(this: Server, event: string | symbol, listener: (...args: Array<any>) => void) {
    if (event === "request") {
      if (fallback === listener) fallback = undefined
      return this
    }
    return off.call(this, event, listener)
  }
  // Once the server stops (`close`), every response closes its connection: a client's kept-alive
  // connections must not carry new requests into the stop, which waits for every connection to
  // close (Node closes only the idle ones: otherwise a stop under load can take 25 s, accepting
  // ingest all along).
  // Responses still being worked on then (Effect's, answered later) are told too.
  let stopping = false
  const pending = new Set<ServerResponse>()
  const settled = function(this: ServerResponse) {
    pending.delete(this)
  }
  const close = server.close
  server.close = function(this: Server, callback?: (error?: Error) => void) {
    stopping = true
    for (const response of pending) if (!response.headersSent) response.shouldKeepAlive = false
    return close.call(this, callback)
  } as Server["close"]
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    if (stopping) {
      response.shouldKeepAlive = false
      // Pipelined behind a response that closes the connection: it could never be answered, so
      // it must not be carried out either (an ingest batch committed but never acknowledged).
      if ((request.socket as { _httpMessage?: unknown })._httpMessage !== response) return
    }
    if (direct !== undefined && answered(direct, request, response)) {
      answeredCount++
      return
    }
    if (fallback !== undefined) {
      fallback(request, response)
      if (!response.writableEnded) {
        pending.add(response)
        response.once("close", settled)
      }
      return
    }
    // The request pipeline is gone (the last moments of a stop): the envelope, not a bare 503.
    const body = ErrorResponses.encodeEnvelope(ErrorResponses.stopping)
    const sentId = request.headers["x-request-id"]
    response.shouldKeepAlive = false
    response.writeHead(503, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "x-request-id": RequestId.fromHeader(typeof sentId === "string" ? sentId : undefined),
      "retry-after": "1"
    })
    response.end(body)
  }
  on.call(server, "request", onRequest)
  // An `Expect` other than 100-continue: served as if it were not there (RFC 9110 lets a server
  // ignore it), not Node's bare 417 without the envelope or `X-Request-ID`.
  on.call(server, "checkExpectation", onRequest)
  // Requests Node could not parse: the envelope instead of Node's bare status line (ClientErrors).
  on.call(server, "clientError", (error: ClientErrors.ClientError, socket) => clientErrors(error, socket))
  // CONNECT (a proxy's method): the envelope, not a socket closed without a word.
  on.call(server, "connect", (_request: IncomingMessage, socket) => clientErrors(ClientErrors.connectMethod(), socket))
  server.on = intercept as Server["on"]
  server.addListener = intercept as Server["addListener"]
  server.off = release as Server["off"]
  server.removeListener = release as Server["removeListener"]
  return {
    install: (handler) => void (direct = handler),
    uninstall: (handler) => {
      if (direct === handler) direct = undefined
    },
    answered: () => answeredCount,
    installClientErrors: (handler) => void (clientErrors = handler),
    uninstallClientErrors: (handler) => {
      if (clientErrors === handler) clientErrors = ClientErrors.unmetered
    }
  }
}

/**
 * Runs the direct handler. A defect in it must not take the process down or lose the request:
 * when nothing was written yet, Effect's handler answers instead.
 */
const answered = (direct: DirectHandler, request: IncomingMessage, response: ServerResponse): boolean => {
  try {
    return direct(request, response)
  } catch (defect) {
    if (response.headersSent) {
      response.destroy()
      return true
    }
    console.error("direct read failed; answered by the request pipeline instead", defect)
    return false
  }
}

/** What the platform returns for an admitted request (PlatformMiddleware.admitDirect). */
export interface Admitted {
  readonly requestId: string
  /** The key's budget after this request: `X-RateLimit-Remaining`. */
  readonly remaining: number
}

/**
 * The direct handler of `routes`: a GET without a body that a route recognises, admitted by the
 * platform, gets the route's body with the headers the request pipeline sets (the same names in
 * the same order as Effect's server writes them; Node adds Date and the connection headers to
 * both). The route is asked first, so that a request no route answers spends no budget.
 */
export const handler = (
  routes: ReadonlyArray<DirectRoute>,
  admit: (request: IncomingMessage, url: string) => Admitted | undefined
): DirectHandler =>
(request, response) => {
  const url = request.url
  if (request.method !== "GET" || url === undefined) return false
  const headers = request.headers
  // A body (which the pipeline reads or drains) or a protocol upgrade: the pipeline's.
  if (headers["content-length"] !== undefined || headers["transfer-encoding"] !== undefined) return false
  let body: Uint8Array | undefined
  for (let i = 0; i < routes.length && body === undefined; i++) body = routes[i]!(url)
  if (body === undefined) return false
  const admitted = admit(request, url)
  if (admitted === undefined) return false
  response.writeHead(200, {
    "content-type": "application/json",
    "content-length": body.length,
    "x-request-id": admitted.requestId,
    "x-ratelimit-remaining": admitted.remaining
  })
  response.end(body)
  return true
}
