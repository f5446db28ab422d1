/**
 * Requests Node's HTTP parser refuses before any handler runs (ClientErrors) and paths the router
 * cannot match: each is answered in the spec's envelope with the headers every response carries,
 * never Node's bare status line. Sent over a raw socket, since fetch will not send most of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { connect } from "node:net"
import { maxHeaderSize } from "node:http"
import type { ReadApi, Reply } from "./support/ReadApi.js"
import { apiKey, bearer, expectError, simulatedMarket, startReadApi } from "./support/ReadApi.js"

const solanaAddress = "So11111111111111111111111111111111111111112"

/** Sends `raw` bytes and reads until the server closes the connection (or `timeoutMs`). */
const exchange = (port: number, raw: string | Buffer, timeoutMs = 5_000): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    const socket = connect({ port, host: "127.0.0.1" }, () => socket.write(raw))
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no close within ${timeoutMs} ms; got: ${Buffer.concat(chunks).toString("latin1").slice(0, 300)}`))
    }, timeoutMs)
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", () => {}) // a reset after the answer: what was read is the answer
    socket.on("close", () => {
      clearTimeout(timer)
      resolve(Buffer.concat(chunks).toString("utf8"))
    })
  })

/** A raw HTTP/1.1 response as a Reply (headers, JSON body). */
const parseResponse = (text: string): Reply => {
  const end = text.indexOf("\r\n\r\n")
  expect(end, `a complete response: ${JSON.stringify(text.slice(0, 200))}`).toBeGreaterThan(0)
  const [statusLine, ...headerLines] = text.slice(0, end).split("\r\n")
  const headers = new Headers()
  for (const line of headerLines) {
    const colon = line.indexOf(":")
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim())
  }
  const body = text.slice(end + 4)
  expect(Buffer.byteLength(body)).toBe(Number(headers.get("content-length")))
  return { status: Number(statusLine!.split(" ")[1]), headers, text: body, body: JSON.parse(body) }
}

const expectEveryResponseHeaders = (reply: Reply) => {
  expect(reply.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  expect(reply.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
  expect(reply.headers.get("connection")).toBe("close")
}

describe("requests Node's parser refuses", () => {
  let api: ReadApi
  let port: number
  beforeAll(async () => {
    api = await startReadApi({
      market: simulatedMarket({ minutes: 1, seed: 3, tradesPerSecond: 5, launchesPerMinute: 5 }).market,
      limits: { keyPerMinute: 100_000, ipPerMinute: 1_000 }
    })
    port = Number(new URL(api.url).port)
  })
  afterAll(() => api.close())

  const read = `/v1/tokens/solana/${solanaAddress}/ohlcv?timeframe=1m`

  it("headers over Node's limit: 400 VALIDATION_ERROR on headers, with the IP's budget spent", async () => {
    const big = "x".repeat(maxHeaderSize + 100)
    const first = parseResponse(await exchange(port, `GET ${read} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${apiKey}\r\nX-Big: ${big}\r\n\r\n`))
    const details = expectError(first, 400, "VALIDATION_ERROR", ["headers"], true)
    expect(details[0]!.message).toContain(maxHeaderSize.toLocaleString("en-US"))
    expectEveryResponseHeaders(first)
    // A query string that long is the same refusal (the budget it spends: the 429 test below).
    const second = parseResponse(await exchange(port, `GET ${read}&x=${big} HTTP/1.1\r\nHost: a\r\n\r\n`))
    expectError(second, 400, "VALIDATION_ERROR", ["headers"], true)
    expectEveryResponseHeaders(second)
  })

  it("bytes that are not HTTP/1.1: 400 VALIDATION_ERROR on request", async () => {
    const malformed = [
      `FOO ${read} HTTP/1.1\r\nHost: a\r\n\r\n`, // unknown method
      `GET ${read} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer a\u0000b\r\n\r\n`, // NUL in a header value
      `GET ${read} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc`, // both framings
      `GET ${read} HTTP/1.1\r\nHost: a\r\nBad Header: 1\r\n\r\n` // a space in a header name
    ]
    for (const raw of malformed) {
      const reply = parseResponse(await exchange(port, raw))
      const details = expectError(reply, 400, "VALIDATION_ERROR", ["request"], true)
      expect(details[0]!.message).toMatch(/^is not a valid HTTP\/1\.1 request \(HPE_[A-Z_]+\)$/)
      expectEveryResponseHeaders(reply)
    }
  })

  it("CONNECT: 400 VALIDATION_ERROR on request in the envelope, not a socket closed without a word", async () => {
    for (const target of ["localhost:443", read]) {
      const reply = parseResponse(await exchange(port, `CONNECT ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`))
      const details = expectError(reply, 400, "VALIDATION_ERROR", ["request"], true)
      expect(details[0]!.message).toBe("CONNECT is not served: this is an API, not a proxy")
      expectEveryResponseHeaders(reply)
    }
  })

  it("a request without Host, or with an Expect other than 100-continue, is served as any other", async () => {
    for (const extra of ["", "Host: x\r\nExpect: 200-ok\r\n"]) {
      const served = await exchange(port, `GET ${read} HTTP/1.1\r\n${extra}Authorization: Bearer ${apiKey}\r\nConnection: close\r\n\r\n`)
      expect(served, extra).toMatch(/^HTTP\/1\.1 (200|404) /)
      expect(served.toLowerCase()).toContain("x-request-id: ")
      // and refused in the envelope without a key
      const refused = await exchange(port, `GET ${read} HTTP/1.1\r\n${extra}Connection: close\r\n\r\n`)
      expect(refused, extra).toMatch(/^HTTP\/1\.1 401 /)
      expect(refused).toContain('"code":"UNAUTHORIZED"')
    }
  })

  it("a kept-alive connection idle for 6 s still takes the next request (Node's 5 s default would have closed it)", async () => {
    const request = `GET ${read} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`
    const answers = await new Promise<Array<string>>((resolve, reject) => {
      const seen: Array<string> = []
      let text = ""
      const socket = connect({ port, host: "127.0.0.1" }, () => socket.write(request))
      socket.setEncoding("utf8")
      socket.on("data", (chunk) => {
        text += chunk
        const end = text.indexOf("\r\n\r\n")
        const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN)
        if (end < 0 || Number.isNaN(length) || text.length < end + 4 + length) return
        seen.push(text.slice(0, 12))
        text = ""
        if (seen.length === 1) setTimeout(() => socket.write(request), 6_000)
        else {
          socket.destroy()
          resolve(seen)
        }
      })
      socket.on("close", () => resolve(seen))
      socket.on("error", reject)
    })
    expect(answers).toHaveLength(2)
    expect(answers[1]).toBe(answers[0])
  }, 15_000)

  it("on a kept-alive connection, a malformed request after an answered one gets the envelope", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const chunks: Array<Buffer> = []
      const socket = connect({ port, host: "127.0.0.1" }, () =>
        socket.write(`GET ${read} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`))
      let sentSecond = false
      socket.on("data", (chunk) => {
        chunks.push(chunk)
        // the first response is complete once its body (Content-Length) has arrived
        const text = Buffer.concat(chunks).toString("latin1")
        const end = text.indexOf("\r\n\r\n")
        const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN)
        if (!sentSecond && end > 0 && text.length >= end + 4 + length) {
          sentSecond = true
          chunks.length = 0
          socket.write("FOO / HTTP/1.1\r\nHost: a\r\n\r\n")
        }
      })
      socket.on("error", reject)
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")))
    })
    const reply = parseResponse(answer)
    expectError(reply, 400, "VALIDATION_ERROR", ["request"], true)
    expectEveryResponseHeaders(reply)
  })

  it("a well-formed request after a refused one on another connection is served as usual", async () => {
    await exchange(port, "FOO / HTTP/1.1\r\n\r\n")
    const reply = await api.get(read)
    expect(reply.status).toBe(200)
  })

  it("once the IP's budget is spent: 429 RATE_LIMITED with Retry-After", async () => {
    const limited = await startReadApi({
      market: simulatedMarket({ minutes: 1, seed: 3, tradesPerSecond: 5, launchesPerMinute: 5 }).market,
      limits: { keyPerMinute: 100_000, ipPerMinute: 2 }
    })
    try {
      const limitedPort = Number(new URL(limited.url).port)
      const replies = []
      for (let i = 0; i < 3; i++) replies.push(parseResponse(await exchange(limitedPort, "FOO / HTTP/1.1\r\n\r\n")))
      expect(replies.map((r) => r.status)).toEqual([400, 400, 429])
      expectError(replies[2]!, 429, "RATE_LIMITED")
      expect(Number(replies[2]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect(replies[2]!.headers.get("x-ratelimit-remaining")).toBe("0")
    } finally {
      await limited.close()
    }
  })
})

describe("paths the router cannot match", () => {
  let api: ReadApi
  beforeAll(async () => {
    api = await startReadApi({ market: simulatedMarket({ minutes: 1, seed: 3, tradesPerSecond: 5, launchesPerMinute: 5 }).market })
  })
  afterAll(() => api.close())

  it("a path that is not valid percent-encoded UTF-8: 400 VALIDATION_ERROR on path, not 'no endpoint'", async () => {
    for (const path of ["/v1/tokens/solana/%E0%A4%A", "/v1/tokens/solana/%C3%28", "/v1/tokens/%ZZ/" + solanaAddress, "/v1/tokens/solana/%ZZ/trades"]) {
      const reply = await api.get(path)
      expectError(reply, 400, "VALIDATION_ERROR", ["path"], true)
    }
  })

  it("GET /v1/stream without Upgrade: 400 VALIDATION_ERROR on Upgrade, after the key check", async () => {
    const reply = await api.get("/v1/stream")
    const details = expectError(reply, 400, "VALIDATION_ERROR", ["Upgrade"], true)
    expect(details[0]!.message).toContain("Upgrade: websocket")
    expectError(await api.get("/v1/stream", {}), 401, "UNAUTHORIZED")
  })

  it("a path that names no endpoint is still 404 NOT_FOUND", async () => {
    const reply = await api.get("/v1/nothing-here", bearer())
    expectError(reply, 404, "NOT_FOUND")
    expect(reply.body.error.message).toContain("/v1/nothing-here")
  })
})
