/**
 * The stream handshake's admission, before any upgrade (spec "Authentication" rule 4): the
 * composition root supplies the gate that applies the REST platform's rules (request id, IP
 * budget, bearer key, key budget: the handshake is one `/v1` request), and this adapter adds the
 * stream's own (open connections per key). A refusal is plain HTTP on the raw socket: the client
 * never gets a WebSocket.
 */
import type { IncomingMessage } from "node:http"
import { STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"

/** Whether a key is still usable: true, false (revoked or expired), undefined (cannot tell now). */
export type KeyRecheck = () => Promise<boolean | undefined>

export interface Admitted {
  readonly admitted: true
  /** Identifies the key for the per-key connection count (never the key itself). */
  readonly keyId: string
  /** `X-Request-ID` of the handshake (echoed or generated). */
  readonly requestId: string
  /** The key's request budget left after this handshake: `X-RateLimit-Remaining`. */
  readonly remaining: number
  /** Re-checks the key while connections are open (a revoked key's connections close with 4001). */
  readonly recheck?: KeyRecheck
}

export interface Refused {
  readonly admitted: false
  readonly status: number
  /** Headers besides Content-Type/Content-Length (request id, budget, Retry-After, ...). */
  readonly headers: Readonly<Record<string, string>>
  /** The error envelope, already encoded. */
  readonly body: string
}

export type Verdict = Admitted | Refused

/** Decides a handshake from its HTTP request. May answer at once or later (a key-store lookup). */
export type HandshakeGate = (request: IncomingMessage) => Verdict | Promise<Verdict>

/** Writes a refusal as a complete HTTP/1.1 response and closes the connection. */
export const refuse = (socket: Duplex, verdict: Refused): void => {
  if (socket.destroyed) return
  let head = `HTTP/1.1 ${verdict.status} ${STATUS_CODES[verdict.status] ?? ""}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(verdict.body)}\r\nConnection: close\r\n`
  for (const name in verdict.headers) head += `${name}: ${verdict.headers[name]}\r\n`
  socket.end(`${head}\r\n${verdict.body}`)
}

/** The envelope body, exactly `{error:{code,message,details?}}` (spec "Errors"). */
export const envelope = (code: string, message: string, details?: unknown): string =>
  JSON.stringify({ error: details === undefined ? { code, message } : { code, message, details } })

/** A `Sec-WebSocket-Key`: 16 bytes, base64 (RFC 6455 §4.1), as `ws` checks it. */
const webSocketKey = /^[+/0-9A-Za-z]{22}==$/

/** The WebSocket versions `ws` speaks (13 is RFC 6455's; 8 an earlier draft it still takes). */
export const webSocketVersions = "13, 8"

/**
 * What is wrong with an upgrade request as a WebSocket opening handshake, checked as `ws`
 * checks it, or undefined. Checked after admission, so the refusal is the API's 400
 * `VALIDATION_ERROR` (request id, budget, envelope) instead of `ws`'s bare text answer.
 */
export const malformedUpgrade = (request: IncomingMessage): { readonly field: string; readonly message: string } | undefined => {
  if (request.method !== "GET") return { field: "method", message: `a WebSocket handshake is a GET, not ${request.method}` }
  const upgrade = request.headers.upgrade
  if (upgrade === undefined || upgrade.toLowerCase() !== "websocket") {
    return { field: "Upgrade", message: "the Upgrade header must be websocket" }
  }
  const key = request.headers["sec-websocket-key"]
  if (key === undefined || !webSocketKey.test(key)) {
    return { field: "Sec-WebSocket-Key", message: "Sec-WebSocket-Key must be 16 random bytes in base64 (RFC 6455)" }
  }
  const version = request.headers["sec-websocket-version"]
  if (version !== "13" && version !== "8") {
    return { field: "Sec-WebSocket-Version", message: `Sec-WebSocket-Version must be one of ${webSocketVersions}` }
  }
  return undefined
}
