/**
 * GET /v1/stream handshake: the key is checked before the upgrade (401 exactly as REST, never a
 * socket), 503 when the key store is down, 429 at 100 open connections per key, the handshake
 * spends one request of budget and frames spend none, a revoked key's connections close with
 * 4001, and 100 sockets on one key all receive uncorrupted frames.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { connect as netConnect } from "node:net"
import { WebSocket } from "ws"
import { KeyStore, KeyStoreUnavailable } from "@spot/application"
import { simulatedMarket } from "../http/support/ReadApi.js"
import type { HttpRefusal, StreamApi } from "./support/StreamClient.js"
import { apiKey, connect, open, otherApiKey, startStreamApi, StreamClient } from "./support/StreamClient.js"

const refusal = (result: StreamClient | HttpRefusal): HttpRefusal => {
  if (result instanceof StreamClient) {
    result.ws.terminate()
    throw new Error("expected the handshake to be refused, got a socket")
  }
  return result
}

describe("stream handshake", () => {
  let api: StreamApi
  const sim = simulatedMarket({ minutes: 2, seed: 11 })
  beforeAll(async () => {
    api = await startStreamApi({ market: sim.market, streamLimits: { keyRecheckMs: 100 } })
  })
  afterAll(async () => {
    await api.close()
  })

  it("without a valid key: the REST 401 (same body and headers), never a socket", async () => {
    const rest = await fetch(`${api.url}/v1/tokens/solana/So11111111111111111111111111111111111111112`)
    const restBody = await rest.json()
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer sk_test_notAKeyWeKnow0123456789abcdefghijkl" },
      { authorization: "Basic abc" },
      { authorization: `Bearer ${apiKey}`, "x-api-key": apiKey }
    ]
    for (const headers of cases) {
      const refused = refusal(await connect(api.wsUrl, headers))
      expect(refused.status).toBe(401)
      expect(refused.body).toEqual(restBody)
      expect(refused.headers["x-request-id"]).toMatch(/^[\x21-\x7e]{1,128}$/)
      expect(refused.headers["x-ratelimit-remaining"]).toMatch(/^\d+$/)
      expect(refused.headers["www-authenticate"]).toBe("Bearer")
      expect(refused.headers["content-type"]).toBe("application/json")
    }
    // A key in the query string is refused even next to a valid header.
    const inQuery = refusal(await connect(`${api.wsUrl}?api_key=${apiKey}`))
    expect(inQuery.status).toBe(401)
    // The client's request id is echoed on a refusal and on the 101.
    const echoed = refusal(await connect(api.wsUrl, { "x-request-id": "trace-401" }))
    expect(echoed.headers["x-request-id"]).toBe("trace-401")
    const upgraded = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const ws = new WebSocket(api.wsUrl, { headers: { authorization: `Bearer ${apiKey}`, "x-request-id": "trace-101" } })
      ws.once("upgrade", (response) => resolve(response.headers))
      ws.once("open", () => ws.close())
      ws.once("error", reject)
    })
    expect(upgraded["x-request-id"]).toBe("trace-101")
    expect(upgraded["x-ratelimit-remaining"]).toMatch(/^\d+$/)
  })

  it("other upgrade paths go through the REST pipeline (401 without a key, 404 with one)", async () => {
    const base = api.wsUrl.replace("/v1/stream", "")
    expect(refusal(await connect(`${base}/v1/streams`, {})).status).toBe(401)
    expect(refusal(await connect(`${base}/v1/streams`)).status).toBe(404)
  })

  it("100 connections per key; the 101st gets 429 RATE_LIMITED with Retry-After; frames arrive intact on all", async () => {
    const clients = await Promise.all(Array.from({ length: 100 }, () => open(api.wsUrl)))
    const refused = refusal(await connect(api.wsUrl))
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe("RATE_LIMITED")
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
    expect(refused.headers["x-request-id"]).toBeDefined()
    expect(refused.headers["x-ratelimit-remaining"]).toMatch(/^\d+$/)
    // Another key is not affected.
    const other = await open(api.wsUrl, { authorization: `Bearer ${otherApiKey}` })

    // Every socket subscribes to the busiest tokens; the market moves; every frame must parse
    // and every socket must see the same sequence of updates.
    const tokens = [...sim.market.engine.allTokens()].filter((t) => t.chain === "solana").slice(0, 100).map((t) => t.address)
    const acks = await Promise.all(clients.map((c) => c.subscribe("spot.tokens", { chain: "solana", tokens })))
    for (const ack of acks) expect(ack.type).toBe("subscribed")
    sim.market.apply(sim.simulator.advance(sim.endTime + 20_000))
    const first = clients[0]!
    // every update queued before a ping arrives before its pong: no waiting on the clock
    await Promise.all(clients.map((c, i) => {
      c.send({ action: "ping", id: `after-${i}` })
      return c.waitFor((f) => f.id === `after-${i}`, 10_000)
    }))
    const expected = first.updates(acks[0].subscriptionId).map((d) => `${d.chain}:${d.address}:${d.updatedAt}`)
    expect(expected.length).toBeGreaterThan(0)
    for (let i = 0; i < clients.length; i++) {
      const got = clients[i]!.updates(acks[i].subscriptionId).map((d) => `${d.chain}:${d.address}:${d.updatedAt}`)
      expect(got).toEqual(expected)
    }
    // Closing one frees its slot.
    clients[0]!.close()
    await clients[0]!.closed
    await new Promise((resolve) => setTimeout(resolve, 50))
    const again = await open(api.wsUrl)
    for (const c of [...clients.slice(1), other, again]) c.ws.terminate()
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(api.stream.connectionCount).toBe(0)
  })

  it("a revoked key's open connections close with 4001", async () => {
    const created = await Effect.runPromise(api.keyStore.create({ name: "to revoke" }))
    const client = await open(api.wsUrl, { authorization: `Bearer ${Redacted.value(created.key)}` })
    await Effect.runPromise(api.keyStore.revoke(created.record.id))
    expect(await client.closed).toBe(4001)
  })
})

describe("stream handshake budgets", () => {
  it("the handshake spends one request of the key budget; frames over the socket spend none", async () => {
    const sim = simulatedMarket({ minutes: 1, seed: 3 })
    const api = await startStreamApi({ market: sim.market, limits: { keyPerMinute: 3, ipPerMinute: 1_000 } })
    try {
      const client = await open(api.wsUrl)
      for (let i = 0; i < 50; i++) client.send({ action: "ping", id: `p${i}` })
      await client.waitFor((f) => f.id === "p49")
      const rest = await fetch(`${api.url}/v1/tokens/solana/So11111111111111111111111111111111111111112`, {
        headers: { authorization: `Bearer ${apiKey}` }
      })
      expect(rest.headers.get("x-ratelimit-remaining")).toBe("1")
      await open(api.wsUrl).then((c) => c.ws.terminate())
      const limited = refusal(await connect(api.wsUrl))
      expect(limited.status).toBe(429)
      expect(limited.body.error.code).toBe("RATE_LIMITED")
      expect(limited.headers["x-ratelimit-remaining"]).toBe("0")
      client.ws.terminate()
    } finally {
      await api.close()
    }
  })

  it("a malformed WebSocket handshake with a valid key: 400 VALIDATION_ERROR in the envelope, with the request id and the budget it spent", async () => {
    const sim = simulatedMarket({ minutes: 1, seed: 5 })
    const api = await startStreamApi({ market: sim.market, limits: { keyPerMinute: 5, ipPerMinute: 1_000 } })
    /** One raw handshake; the answer as status, lower-case headers and parsed body (the server closes). */
    const handshake = (headers: Record<string, string>) =>
      new Promise<{ status: number; headers: Record<string, string>; body: any }>((resolve, reject) => {
        const { hostname, port } = new URL(api.url)
        const socket = netConnect(Number(port), hostname)
        let text = ""
        socket.setEncoding("utf8")
        socket.on("data", (chunk: string) => (text += chunk))
        socket.on("error", reject)
        socket.on("close", () => {
          const [head, body] = text.split("\r\n\r\n")
          const [statusLine, ...lines] = head!.split("\r\n")
          resolve({
            status: Number(statusLine!.split(" ")[1]),
            headers: Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()])),
            body: JSON.parse(body!)
          })
        })
        const all = { Host: "test", Connection: "Upgrade", Upgrade: "websocket", Authorization: `Bearer ${apiKey}`, ...headers }
        socket.write(`GET /v1/stream HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`)
      })
    try {
      const noKey = await handshake({ "Sec-WebSocket-Version": "13", "X-Request-ID": "bad-upgrade" })
      expect(noKey.status).toBe(400)
      expect(noKey.headers["content-type"]).toBe("application/json")
      expect(noKey.headers["x-request-id"]).toBe("bad-upgrade")
      expect(noKey.headers["x-ratelimit-remaining"]).toBe("4")
      expect(noKey.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: [{ field: "Sec-WebSocket-Key" }] })
      const badVersion = await handshake({ "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "99" })
      expect(badVersion.status).toBe(400)
      expect(badVersion.headers["sec-websocket-version"]).toBe("13, 8")
      expect(badVersion.headers["x-ratelimit-remaining"]).toBe("3")
      expect(badVersion.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: [{ field: "Sec-WebSocket-Version" }] })
      const client = await open(api.wsUrl)
      client.ws.terminate()
    } finally {
      await api.close()
    }
  })

  it("speaks no subprotocol: an offered one is not agreed to (RFC 6455 4.2.2)", async () => {
    const sim = simulatedMarket({ minutes: 1, seed: 5 })
    const api = await startStreamApi({ market: sim.market })
    try {
      const { hostname, port } = new URL(api.url)
      const head = await new Promise<string>((resolve, reject) => {
        const socket = netConnect(Number(port), hostname)
        let text = ""
        socket.setEncoding("utf8")
        socket.on("error", reject)
        socket.on("data", (chunk: string) => {
          text += chunk
          if (text.includes("\r\n\r\n")) {
            socket.destroy()
            resolve(text.slice(0, text.indexOf("\r\n\r\n")))
          }
        })
        socket.write(
          "GET /v1/stream HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" +
            `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: graphql-ws, foo\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`
        )
      })
      expect(head.split("\r\n")[0]).toBe("HTTP/1.1 101 Switching Protocols")
      expect(head.toLowerCase()).not.toContain("sec-websocket-protocol")
    } finally {
      await api.close()
    }
  })

  it("key store down: 503 SERVICE_UNAVAILABLE, never 401", async () => {
    const sim = simulatedMarket({ minutes: 1, seed: 3 })
    const down = Layer.succeed(KeyStore, {
      verify: () => Effect.fail(new KeyStoreUnavailable({ message: "down" })),
      create: () => Effect.fail(new KeyStoreUnavailable({ message: "down" })),
      list: Effect.fail(new KeyStoreUnavailable({ message: "down" })),
      revoke: () => Effect.fail(new KeyStoreUnavailable({ message: "down" }))
    })
    const api = await startStreamApi({ market: sim.market, keyStore: down })
    try {
      const refused = refusal(await connect(api.wsUrl))
      expect(refused.status).toBe(503)
      expect(refused.body.error.code).toBe("SERVICE_UNAVAILABLE")
      expect(refused.headers["x-ratelimit-remaining"]).toMatch(/^\d+$/)
    } finally {
      await api.close()
    }
  })
})
