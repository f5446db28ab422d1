/**
 * A small HTTP/1.1 load generator: N keep-alive connections, each sending one request, waiting for
 * the whole response, then sending the next (no pipelining, like `wrk -cN`).
 *
 * It writes pre-built request bytes on raw sockets and parses only what it needs of each response
 * (status, Content-Length or chunked end), so that on a small machine the client costs far less
 * CPU than the server it measures; `http.request` costs several times more per request.
 *
 *   node --import tsx bench/loadgen.ts --url http://127.0.0.1:3000/v1/x --connections 50 --seconds 10 \
 *     --header "Authorization: Bearer sk_..." [--body '{"json":1}'] [--method POST]
 */
import * as net from "node:net"

export interface LoadOptions {
  readonly url: string
  /** Default GET; with a `body`, POST. */
  readonly method?: string
  /** Sent as `Content-Type: application/json` with its `Content-Length`. */
  readonly body?: string
  readonly connections: number
  readonly seconds: number
  readonly headers?: ReadonlyArray<string>
  readonly warmupSeconds?: number
  /** Called when counting starts and when it stops (e.g. to read the server's CPU time). */
  readonly onMeasureStart?: () => void
  readonly onMeasureEnd?: () => void
}

export interface LoadResult {
  readonly requests: number
  readonly seconds: number
  readonly requestsPerSecond: number
  readonly statusCounts: Record<number, number>
  readonly errors: number
  readonly latency: LatencySummary
}

export interface LatencySummary {
  readonly p50Ms: number
  readonly p90Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

const BUCKET_US = 10
/** 10 µs buckets up to 2 s; slower responses land in the last one. */
const BUCKETS = 200_000

/** The upper bound of the bucket holding the q-quantile, in ms (never under-reports). */
const quantileMs = (histogram: Uint32Array, total: number, q: number): number => {
  if (total === 0) return 0
  const rank = Math.ceil(total * q)
  let seen = 0
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!
    if (seen >= rank) return ((i + 1) * BUCKET_US) / 1000
  }
  return (histogram.length * BUCKET_US) / 1000
}

const CRLFCRLF = Buffer.from("\r\n\r\n")
const CHUNKED_END = Buffer.from("0\r\n\r\n")

const EMPTY = Buffer.alloc(0)

/**
 * Parses responses off one socket; calls `onResponse(status)` for each complete one. Only heads
 * are buffered: a Content-Length body is skipped by counting bytes (large bodies would otherwise
 * be concatenated chunk by chunk and make the client the bottleneck). `push` may be handed a view
 * of a read buffer that is reused afterwards, so whatever is kept is copied.
 */
class ResponseReader {
  private pending: Buffer = EMPTY
  /** Bytes of the current Content-Length body still to come. */
  private bodyLeft = 0
  private status = 0
  constructor(private readonly onResponse: (status: number) => void) {}

  push(chunk: Buffer): void {
    let data = chunk
    if (this.bodyLeft > 0) {
      if (chunk.length < this.bodyLeft) {
        this.bodyLeft -= chunk.length
        return
      }
      data = chunk.subarray(this.bodyLeft)
      this.bodyLeft = 0
      this.onResponse(this.status)
    }
    this.pending = this.pending.length === 0 ? data : Buffer.concat([this.pending, data])
    for (;;) {
      const headerEnd = this.pending.indexOf(CRLFCRLF)
      if (headerEnd < 0) return this.keepPending()
      const head = this.pending.toString("latin1", 0, headerEnd)
      const status = Number(head.slice(9, 12))
      const lengthMatch = /\r\ncontent-length:\s*(\d+)/i.exec(head)
      const bodyStart = headerEnd + 4
      let end: number
      if (lengthMatch !== null) {
        end = bodyStart + Number(lengthMatch[1])
        if (this.pending.length < end) {
          this.bodyLeft = end - this.pending.length
          this.status = status
          this.pending = EMPTY
          return
        }
      } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const chunkedEnd = this.pending.indexOf(CHUNKED_END, bodyStart)
        if (chunkedEnd < 0) return this.keepPending()
        end = chunkedEnd + CHUNKED_END.length
      } else {
        end = bodyStart
      }
      this.pending = this.pending.subarray(end)
      this.onResponse(status)
    }
  }

  private keepPending(): void {
    if (this.pending.length > 0) this.pending = Buffer.from(this.pending)
  }
}

export const runLoad = (options: LoadOptions): Promise<LoadResult> => {
  const url = new URL(options.url)
  const extraHeaders = (options.headers ?? []).map((header) => `${header}\r\n`).join("")
  const method = options.method ?? (options.body === undefined ? "GET" : "POST")
  const bodyHeaders = options.body === undefined
    ? ""
    : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(options.body)}\r\n`
  const requestBytes = Buffer.from(
    `${method} ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${extraHeaders}${bodyHeaders}\r\n${options.body ?? ""}`,
    "utf8"
  )
  const histogram = new Uint32Array(BUCKETS)
  let maxUs = 0
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
      // One read buffer per socket, reused for every read (no 64 KB allocation per chunk).
      const readBuffer = Buffer.allocUnsafe(256 * 1024)
      const socket = net.connect({
        host: url.hostname,
        port: Number(url.port),
        noDelay: true,
        onread: {
          buffer: readBuffer,
          callback: (bytes) => {
            reader.push(readBuffer.subarray(0, bytes))
            return true // keep reading
          }
        }
      })
      let sentAt = 0
      const send = () => {
        sentAt = performance.now()
        socket.write(requestBytes)
      }
      const reader = new ResponseReader((status) => {
        if (measuring) {
          counted++
          statusCounts[status] = (statusCounts[status] ?? 0) + 1
          const us = (performance.now() - sentAt) * 1000
          if (us > maxUs) maxUs = us
          const bucket = Math.floor(us / BUCKET_US)
          histogram[bucket < BUCKETS ? bucket : BUCKETS - 1]!++
        }
        if (!stopped) send()
      })
      socket.on("connect", send)
      socket.on("error", () => {
        errors++
      })
      sockets.push(socket)
    }
    setTimeout(() => {
      options.onMeasureStart?.()
      measuring = true
      measureStart = performance.now()
      setTimeout(() => {
        measuring = false
        stopped = true
        const seconds = (performance.now() - measureStart) / 1000
        options.onMeasureEnd?.()
        for (const socket of sockets) socket.destroy()
        const latency: LatencySummary = {
          p50Ms: quantileMs(histogram, counted, 0.5),
          p90Ms: quantileMs(histogram, counted, 0.9),
          p99Ms: quantileMs(histogram, counted, 0.99),
          maxMs: maxUs / 1000
        }
        resolve({ requests: counted, seconds, requestsPerSecond: counted / seconds, statusCounts, errors, latency })
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
    headers,
    ...(valueOf("method") === undefined ? {} : { method: valueOf("method")! }),
    ...(valueOf("body") === undefined ? {} : { body: valueOf("body")! })
  })
  console.log(JSON.stringify(result))
}
