/**
 * The stream handshake's gate: the REST platform's rules (PlatformMiddleware) applied to the raw
 * upgrade request, before any socket exists — request id, IP budget, the bearer key (same 401 body
 * and headers as REST), key store down → 503, key budget. The handshake is one `/v1` request and
 * spends one request of each budget; frames over the socket spend none.
 *
 * It lives in the composition root because it joins two adapters (the HTTP platform's credential
 * rules and envelopes, the stream's gate interface) that must not import each other.
 */
import { Effect, Exit, Redacted } from "effect"
import type { IncomingMessage } from "node:http"
import { ApiKey, KeyStore, RateLimiter } from "@spot/application"
import type { ApiKeyRecord, RateDecision } from "@spot/application"
import { Credentials, ErrorResponses, RequestId } from "@spot/adapters-http"
import type { HandshakeGate, Verdict } from "@spot/adapters-ws"

export interface StreamGateOptions {
  /** As `PlatformOptions.clientIpHeader`: only behind a proxy that sets it. */
  readonly clientIpHeader?: string
}

export const make = (options: StreamGateOptions = {}) =>
  Effect.gen(function*() {
    const keyStore = yield* KeyStore
    const limiter = yield* RateLimiter
    const clientIpHeader = options.clientIpHeader?.toLowerCase()
    const unauthorizedBody = ErrorResponses.encodeEnvelope(ErrorResponses.unauthorized)
    const unavailableBody = ErrorResponses.encodeEnvelope(ErrorResponses.keyCheckUnavailable)
    const ipLimitedBody = ErrorResponses.encodeEnvelope(ErrorResponses.rateLimited("ip"))
    const keyLimitedBody = ErrorResponses.encodeEnvelope(ErrorResponses.rateLimited("key"))

    const clientIp = (request: IncomingMessage): string => {
      if (clientIpHeader !== undefined) {
        const forwarded = request.headers[clientIpHeader]
        if (typeof forwarded === "string" && forwarded.length > 0) {
          const comma = forwarded.indexOf(",")
          return (comma < 0 ? forwarded : forwarded.slice(0, comma)).trim()
        }
      }
      return request.socket.remoteAddress ?? "unknown"
    }

    const refused = (status: number, body: string, requestId: string, decision: RateDecision): Verdict => ({
      admitted: false,
      status,
      body,
      headers: status === 429
        ? { "X-Request-ID": requestId, "X-RateLimit-Remaining": String(decision.remaining), "Retry-After": String(decision.retryAfterSeconds) }
        : status === 401
        ? { "X-Request-ID": requestId, "X-RateLimit-Remaining": String(decision.remaining), "WWW-Authenticate": "Bearer" }
        : { "X-Request-ID": requestId, "X-RateLimit-Remaining": String(decision.remaining) }
    })

    const verify = (key: Redacted.Redacted<string>): Promise<Exit.Exit<ApiKeyRecord | null, unknown>> => {
      const checked = keyStore.verify(key)
      return Exit.isExit(checked) ? Promise.resolve(checked as Exit.Exit<ApiKeyRecord | null, unknown>) : Effect.runPromiseExit(checked)
    }

    const decide = (
      exit: Exit.Exit<ApiKeyRecord | null, unknown>,
      key: Redacted.Redacted<string>,
      requestId: string,
      ip: RateDecision,
      now: number
    ): Verdict => {
      if (Exit.isFailure(exit)) return refused(503, unavailableBody, requestId, ip)
      const record = exit.value
      if (record === null || !ApiKey.isUsable(record, now)) return refused(401, unauthorizedBody, requestId, ip)
      const budget = limiter.takeKey(record.id, now)
      if (!budget.allowed) return refused(429, keyLimitedBody, requestId, budget)
      return {
        admitted: true,
        keyId: record.id,
        requestId,
        remaining: budget.remaining,
        recheck: () =>
          verify(key).then((again) =>
            Exit.isFailure(again) ? undefined : again.value !== null && ApiKey.isUsable(again.value, Date.now())
          )
      }
    }

    const gate: HandshakeGate = (request) => {
      const headers = request.headers as Record<string, string | undefined>
      const requestId = RequestId.fromHeader(headers["x-request-id"])
      const now = Date.now()
      const ip = limiter.takeIp(clientIp(request), now)
      if (!ip.allowed) return refused(429, ipLimitedBody, requestId, ip)
      // Node's header record has the shape Credentials reads (lower-case names, string values).
      const presented = Credentials.presentedKey(request.url ?? "/", headers as unknown as Parameters<typeof Credentials.presentedKey>[1], request.rawHeaders)
      if (presented === undefined) return refused(401, unauthorizedBody, requestId, ip)
      const key = Redacted.make(presented)
      const checked = keyStore.verify(key)
      if (Exit.isExit(checked)) return decide(checked as Exit.Exit<ApiKeyRecord | null, unknown>, key, requestId, ip, now)
      return Effect.runPromiseExit(checked).then((exit) => decide(exit, key, requestId, ip, now))
    }
    return gate
  })
