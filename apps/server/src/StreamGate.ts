/**
 * The stream handshake's gate: the application's Admission applied to the raw upgrade request,
 * before any socket exists — request id, IP budget, the bearer key as the REST platform reads it
 * (Credentials; same 401 body and headers as REST), key store down → 503, key budget. The
 * handshake is one `/v1` request and spends one request of each budget; frames over the socket
 * spend none. The handshake asks the key store itself (`useKeyCache: false`): its connection holds
 * the key for long, and is re-checked against the store while it is open (`recheck`).
 *
 * It lives in the composition root because it joins two adapters (the HTTP platform's credential
 * rules and envelopes, the stream's gate interface) that must not import each other.
 */
import { Effect, Redacted } from "effect"
import type { IncomingMessage } from "node:http"
import { Admission } from "@spot/application"
import { Credentials, ErrorResponses, RequestId } from "@spot/adapters-http"
import type { HandshakeGate, Verdict } from "@spot/adapters-ws"

export interface StreamGateOptions {
  /** As `PlatformOptions.clientIpHeader`: only behind a proxy that sets it. */
  readonly clientIpHeader?: string
}

export const make = (options: StreamGateOptions = {}) =>
  Effect.gen(function*() {
    const admission = yield* Admission.Admission
    const clientIpHeader = options.clientIpHeader?.toLowerCase()
    const bodyOf = (refusal: Admission.Refusal["_tag"]) => ErrorResponses.encodeEnvelope(ErrorResponses.admissionRefusal(refusal))
    const bodies: Record<Admission.Refusal["_tag"], string> = {
      IpBudgetSpent: bodyOf("IpBudgetSpent"),
      KeyRefused: bodyOf("KeyRefused"),
      KeyCheckUnavailable: bodyOf("KeyCheckUnavailable"),
      KeyBudgetSpent: bodyOf("KeyBudgetSpent")
    }

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

    /** A refusal as plain HTTP: the request id, the budget it reports, and Retry-After or WWW-Authenticate. */
    const refused = (refusal: Admission.Refusal, requestId: string): Verdict => {
      const status = ErrorResponses.admissionRefusal(refusal._tag).status
      const remaining = String(refusal.budget.remaining)
      return {
        admitted: false,
        status,
        body: bodies[refusal._tag],
        headers: status === 429
          ? { "X-Request-ID": requestId, "X-RateLimit-Remaining": remaining, "Retry-After": String(refusal.budget.retryAfterSeconds) }
          : status === 401
          ? { "X-Request-ID": requestId, "X-RateLimit-Remaining": remaining, "WWW-Authenticate": "Bearer" }
          : { "X-Request-ID": requestId, "X-RateLimit-Remaining": remaining }
      }
    }

    /** Admitted: the key's id and budget, and its re-check against the store while connections are open. */
    const admitted = (decided: Admission.Admitted, key: Redacted.Redacted<string>, requestId: string): Verdict => ({
      admitted: true,
      keyId: decided.key.id,
      requestId,
      remaining: decided.budget.remaining,
      recheck: () => Effect.runPromise(admission.stillUsable(key))
    })

    const gate: HandshakeGate = (request) => {
      const headers = request.headers as Record<string, string | undefined>
      const requestId = RequestId.fromHeader(headers["x-request-id"])
      // Node's header record has the shape Credentials reads (lower-case names, string values).
      const key = Credentials.presentedKey(request.url ?? "/", headers as unknown as Parameters<typeof Credentials.presentedKey>[1], request.rawHeaders)
      const verdictOf = (decided: Admission.Admitted | Admission.Refusal): Verdict =>
        decided._tag === "Admitted" ? admitted(decided, Redacted.make(key!), requestId) : refused(decided, requestId)
      const decided = admission.decide({ clientIp: clientIp(request), key, useKeyCache: false })
      if (decided._tag !== "KeyLookup") return verdictOf(decided)
      return Effect.runPromise(Effect.match(decided.answer, { onFailure: verdictOf, onSuccess: verdictOf }))
    }
    return gate
  })
