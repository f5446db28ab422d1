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
