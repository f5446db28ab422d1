/**
 * A small HTTP/1.1 load generator: N keep-alive connections, each sending one request, waiting for
 * the whole response, then sending the next (no pipelining, like `wrk -cN`).
 *
 * It writes pre-built request bytes on raw sockets and parses only what it needs of each response
 * (status, Content-Length or chunked end), so that on a small machine the client costs far less
 * CPU than the server it measures; `http.request` costs several times more per request.
 *
 *   node --import tsx bench/loadgen.ts --url http://127.0.0.1:3000/v1/x --connections 50 --seconds 10 \
 *     --header "Authorization: Bearer sk_..."
 */
import * as net from "node:net"

export interface LoadOptions {
  readonly url: string
  readonly connections: number
  readonly seconds: number
  readonly headers?: ReadonlyArray<string>
  readonly warmupSeconds?: number
}

export interface LoadResult {
  readonly requests: number
  readonly seconds: number
  readonly requestsPerSecond: number
  readonly statusCounts: Record<number, number>
  readonly errors: number
}

const CRLFCRLF = Buffer.from("\r\n\r\n")
const CHUNKED_END = Buffer.from("0\r\n\r\n")

/** Parses responses off one socket; calls `onResponse(status)` for each complete one. */
class ResponseReader {
  private buffer: Buffer = Buffer.alloc(0)
  constructor(private readonly onResponse: (status: number) => void) {}

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    for (;;) {
      const headerEnd = this.buffer.indexOf(CRLFCRLF)
      if (headerEnd < 0) return
      const head = this.buffer.toString("latin1", 0, headerEnd)
      const status = Number(head.slice(9, 12))
      const lengthMatch = /\r\ncontent-length:\s*(\d+)/i.exec(head)
      const bodyStart = headerEnd + 4
      let end: number
      if (lengthMatch !== null) {
        end = bodyStart + Number(lengthMatch[1])
        if (this.buffer.length < end) return
      } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const chunkedEnd = this.buffer.indexOf(CHUNKED_END, bodyStart)
        if (chunkedEnd < 0) return
        end = chunkedEnd + CHUNKED_END.length
      } else {
        end = bodyStart
      }
      this.buffer = this.buffer.subarray(end)
      this.onResponse(status)
    }
  }
}

export const runLoad = (options: LoadOptions): Promise<LoadResult> => {
  const url = new URL(options.url)
  const extraHeaders = (options.headers ?? []).map((header) => `${header}\r\n`).join("")
  const requestBytes = Buffer.from(
    `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${extraHeaders}\r\n`,
    "latin1"
  )
  const warmupMs = (options.warmupSeconds ?? 1) * 1000
  const durationMs = options.seconds * 1000
  const statusCounts: Record<number, number> = {}
  let counted = 0
  let errors = 0
  let measuring = false
  let stopped = false
  let measureStart = 0

  return new Promise((resolve) => {
    const sockets: Array<net.Socket> = []
    for (let i = 0; i < options.connections; i++) {
      const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true })
      const reader = new ResponseReader((status) => {
        if (measuring) {
          counted++
          statusCounts[status] = (statusCounts[status] ?? 0) + 1
        }
        if (!stopped) socket.write(requestBytes)
      })
      socket.on("connect", () => socket.write(requestBytes))
      socket.on("data", (chunk) => reader.push(chunk))
      socket.on("error", () => {
        errors++
      })
      sockets.push(socket)
    }
    setTimeout(() => {
      measuring = true
      measureStart = performance.now()
      setTimeout(() => {
        measuring = false
        stopped = true
        const seconds = (performance.now() - measureStart) / 1000
        for (const socket of sockets) socket.destroy()
        resolve({ requests: counted, seconds, requestsPerSecond: counted / seconds, statusCounts, errors })
      }, durationMs)
    }, warmupMs)
  })
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/"))
if (isMain) {
  const args = process.argv.slice(2)
  const valueOf = (name: string) => {
    const index = args.indexOf(`--${name}`)
    return index >= 0 ? args[index + 1] : undefined
  }
  const headers: Array<string> = []
  args.forEach((arg, index) => {
    if (arg === "--header" && args[index + 1] !== undefined) headers.push(args[index + 1]!)
  })
  const result = await runLoad({
    url: valueOf("url") ?? "http://127.0.0.1:3000/",
    connections: Number(valueOf("connections") ?? 50),
    seconds: Number(valueOf("seconds") ?? 10),
    headers
  })
  console.log(JSON.stringify(result))
}
