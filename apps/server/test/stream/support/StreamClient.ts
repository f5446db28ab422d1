/**
 * The stream as a client meets it: the real server composition on port 0 (simulator off, a
 * market the test feeds), raw `ws` clients, frames collected in arrival order, and handshake
 * refusals read as the HTTP responses they are.
 */
import { Context, Layer, Redacted } from "effect"
import { WebSocket } from "ws"
import { EventStore, Market } from "@spot/application"
import type { KeyStoreShape, MarketShape, RateLimits } from "@spot/application"
import { KeyStore } from "@spot/application"
import { RateLimiterLive } from "@spot/adapters-http"
import { MemoryKeyStore } from "@spot/adapters-storage"
import type { StreamLimits, StreamServer } from "@spot/adapters-ws"
import { StreamLayer } from "@spot/adapters-ws"
import { apiKey, otherApiKey } from "../../http/support/ReadApi.js"
import { startTestServer, testServerConfig } from "../../support/TestServer.js"

export { apiKey, otherApiKey }

export interface StreamApi {
  readonly url: string
  readonly wsUrl: string
  readonly market: MarketShape
  readonly stream: StreamServer
  readonly keyStore: KeyStoreShape
  readonly get: (path: string) => Promise<any>
  readonly close: () => Promise<void>
}

export interface StreamServerOptions {
  readonly market: MarketShape
  readonly limits?: RateLimits
  readonly streamLimits?: Partial<StreamLimits>
  /** Replaces the key store (e.g. one that fails). */
  readonly keyStore?: Layer.Layer<KeyStore>
}

export const startStreamApi = async (options: StreamServerOptions): Promise<StreamApi> => {
  const { url, port, context, close } = await startTestServer(testServerConfig(), {
    market: Layer.succeed(Market.Market, options.market),
    eventStore: EventStore.layerMemory,
    keyStore: options.keyStore ?? MemoryKeyStore.layer({ seedKeys: [Redacted.make(apiKey), Redacted.make(otherApiKey)] }),
    rateLimiter: RateLimiterLive.layer(options.limits ?? { keyPerMinute: 1_000_000, ipPerMinute: 1_000_000 }),
    ...(options.streamLimits === undefined ? {} : { streamLimits: options.streamLimits })
  })
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}/v1/stream`,
    market: options.market,
    stream: Context.get(context, StreamLayer.Stream),
    keyStore: Context.get(context, KeyStore),
    get: async (path) => {
      const response = await fetch(url + path, { headers: { authorization: `Bearer ${apiKey}` } })
      const text = await response.text()
      if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${text}`)
      return JSON.parse(text)
    },
    close
  }
}

export interface HttpRefusal {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: any
}

/** Opens a socket, or resolves with the HTTP refusal of the handshake. */
export const connect = (
  wsUrl: string,
  headers: Record<string, string> = { authorization: `Bearer ${apiKey}` }
): Promise<StreamClient | HttpRefusal> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl, { headers, perMessageDeflate: false })
    const client = new StreamClient(ws)
    ws.once("open", () => resolve(client))
    ws.once("unexpected-response", (_request, response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () => {
        ws.terminate()
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text.length > 0 ? JSON.parse(text) : undefined })
      })
    })
    ws.once("error", (error) => reject(error))
  })

export const open = async (wsUrl: string, headers?: Record<string, string>): Promise<StreamClient> => {
  const result = await connect(wsUrl, headers)
  if (!(result instanceof StreamClient)) throw new Error(`handshake refused: ${result.status} ${JSON.stringify(result.body)}`)
  return result
}

/** A connected client: every text frame parsed and kept in order. */
export class StreamClient {
  readonly frames: Array<any> = []
  readonly raw: Array<string> = []
  closeCode: number | undefined
  closeReason = ""
  private waiters: Array<() => void> = []
  readonly closed: Promise<number>

  constructor(readonly ws: WebSocket) {
    ws.on("message", (data, isBinary) => {
      const text = isBinary ? "<binary>" : data.toString()
      this.raw.push(text)
      this.frames.push(JSON.parse(text))
      this.wake()
    })
    this.closed = new Promise((resolve) => {
      ws.on("close", (code, reason) => {
        this.closeCode = code
        this.closeReason = reason.toString()
        this.wake()
        resolve(code)
      })
    })
    ws.on("error", () => {})
  }

  private wake() {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame))
  }

  /** The first frame (from `from` on) matching `predicate`. */
  async waitFor(predicate: (frame: any) => boolean, timeoutMs = 5_000, from = 0): Promise<any> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      for (let i = from; i < this.frames.length; i++) if (predicate(this.frames[i])) return this.frames[i]
      if (this.closeCode !== undefined) throw new Error(`socket closed (${this.closeCode} ${this.closeReason}) while waiting`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no matching frame in ${timeoutMs} ms; got ${JSON.stringify(this.frames.slice(-3))}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  /** Sends a subscribe with a fresh id; resolves with the subscribed or error frame answering it. */
  async subscribe(channel: string, filters: unknown, id = `c${Math.random().toString(36).slice(2)}`): Promise<any> {
    const from = this.frames.length
    this.send({ action: "subscribe", channel, filters, id })
    return this.waitFor((f) => f.id === id && (f.type === "subscribed" || f.type === "error"), 5_000, from)
  }

  /** Updates of one subscription received so far. */
  updates(subscriptionId: string): Array<any> {
    return this.frames.filter((f) => f.type === "update" && f.subscriptionId === subscriptionId).map((f) => f.data)
  }

  close(): void {
    this.ws.close()
  }
}
