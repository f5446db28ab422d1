/**
 * Direct reads (DirectReads, docs/http-platform.md "Direct reads"): a successful token GET is
 * answered before Effect's server, every other request by the request pipeline. Two servers over
 * one market, one with direct reads and one without, get the same requests on raw sockets: each
 * answer must be the same bytes (status line, headers in order, body; only Date differs), and the
 * direct server's count of direct answers says which path answered. Budgets are counted as the
 * pipeline counts them, on both paths.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context } from "effect"
import { connect } from "node:net"
import { DirectReads } from "@spot/adapters-http"
import type { MarketShape } from "@spot/application"
import type { ReadApi } from "./support/ReadApi.js"
import { apiKey, otherApiKey, simulatedMarket, startReadApi } from "./support/ReadApi.js"

/** One HTTP/1.1 exchange on a fresh connection: the response's bytes, Date header removed. */
const exchange = (url: string, request: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk) => {
      chunks.push(chunk)
      const text = Buffer.concat(chunks).toString("utf8")
      const end = text.indexOf("\r\n\r\n")
      if (end < 0) return
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text.slice(0, end + 2))
      // A HEAD answer announces a length it does not send.
      const bodyLength = request.startsWith("HEAD") || length === null ? 0 : Number(length[1])
      if (Buffer.byteLength(text.slice(end + 4)) < bodyLength) return
      socket.destroy()
      resolve(text.replace(/\r\nDate: [^\r]*/, ""))
    })
    socket.on("error", reject)
    socket.write(request)
  })

const get = (path: string, headers: Record<string, string> = {}) =>
  `GET ${path} HTTP/1.1\r\nHost: test\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`

const withKey = (requestId: string, key = apiKey, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  "x-request-id": requestId,
  ...extra
})

const answeredDirectly = (api: ReadApi) => Context.get(api.context, DirectReads.DirectRequestsService).answered()

const statusOf = (response: string) => Number(response.slice(9, 12))
const headerOf = (response: string, name: string) => new RegExp(`\r\n${name}: ([^\r]*)`, "i").exec(response)?.[1]

describe("direct token reads", () => {
  let market: MarketShape
  let direct: ReadApi
  let pipeline: ReadApi
  let solanaToken: string
  let baseToken: string

  beforeAll(async () => {
    market = simulatedMarket({ minutes: 3 }).market
    const limits = { keyPerMinute: 100_000, ipPerMinute: 100_000 }
    // A key cache that outlives the test: each key is asked of the store once, on its first request.
    direct = await startReadApi({ market, limits, keyCacheTtlMs: 600_000 })
    pipeline = await startReadApi({ market, limits, keyCacheTtlMs: 600_000, directReads: false })
    const tokens = [...market.engine.allTokens()]
    solanaToken = tokens.find((t) => t.chain === "solana")!.address
    baseToken = tokens.find((t) => t.chain === "base")!.address
    // The key cache learns the keys from the store on their first request (pipeline).
    for (const key of [apiKey, otherApiKey]) {
      await exchange(direct.url, get(`/v1/tokens/solana/${solanaToken}`, withKey("warm", key)))
    }
  })
  afterAll(async () => {
    await direct?.close()
    await pipeline?.close()
  })

  /** Sends the request to both servers; returns both answers and whether the direct path took it. */
  const both = async (request: string) => {
    const before = answeredDirectly(direct)
    const viaDirect = await exchange(direct.url, request)
    const tookDirect = answeredDirectly(direct) - before === 1
    const viaPipeline = await exchange(pipeline.url, request)
    return { viaDirect, viaPipeline, tookDirect }
  }

  /** The budget header differs between two servers by what each has spent; the rest must not. */
  const sameBut = (response: string) => response.replace(/\r\nx-ratelimit-remaining: \d+/, "\r\nx-ratelimit-remaining: N")

  it("answers a token GET directly, with the pipeline's bytes", async () => {
    const cases = [
      `/v1/tokens/solana/${solanaToken}`,
      `/v1/tokens/base/${baseToken}`,
      // An EVM address in another letter case names the same token (canonical form).
      `/v1/tokens/base/${baseToken.toUpperCase().replace(/^0X/, "0x")}`
    ]
    for (const [i, path] of cases.entries()) {
      const { viaDirect, viaPipeline, tookDirect } = await both(get(path, withKey(`same-${i}`)))
      expect(tookDirect, path).toBe(true)
      expect(statusOf(viaDirect), path).toBe(200)
      expect(sameBut(viaDirect), path).toBe(sameBut(viaPipeline))
    }
  })

  it("leaves every other request to the pipeline, which answers it as without direct reads", async () => {
    const token = `/v1/tokens/solana/${solanaToken}`
    const cases: Array<[string, string, number]> = [
      ["unknown token", get("/v1/tokens/solana/So11111111111111111111111111111111111111112", withKey("a")), 404],
      ["unsupported chain", get(`/v1/tokens/tron/${solanaToken}`, withKey("b")), 400],
      ["malformed address", get("/v1/tokens/base/0x1234", withKey("c")), 400],
      ["any query parameter", get(`${token}?x=1`, withKey("d")), 400],
      ["an empty query", get(`${token}?`, withKey("e")), 200],
      ["a percent-encoded address", get(`/v1/tokens/solana/%${solanaToken.charCodeAt(0).toString(16)}${solanaToken.slice(1)}`, withKey("f")), 200],
      ["a trailing slash (the router ignores it)", get(`${token}/`, withKey("g")), 200],
      ["no key", get(token, { "x-request-id": "h" }), 401],
      ["an unknown key", get(token, withKey("i", "sk_test_unknownKeyUnknownKeyUnknownKey0123456789")), 401],
      ["a key in another header too", get(token, withKey("j", apiKey, { "x-api-key": apiKey })), 401],
      ["a key in the query too", get(`${token}?api_key=${apiKey}`, withKey("k")), 401],
      ["a second Authorization header", `GET ${token} HTTP/1.1\r\nHost: test\r\nauthorization: Bearer ${apiKey}\r\nAuthorization: Bearer ${otherApiKey}\r\nx-request-id: k2\r\n\r\n`, 401],
      ["a percent-encoded key in a cookie", get(token, withKey("k3", apiKey, { cookie: `pref=${encodeURIComponent(apiKey).replace(/_/g, "%5F")}` })), 401],
      ["a body", `GET ${token} HTTP/1.1\r\nHost: test\r\nauthorization: Bearer ${apiKey}\r\nx-request-id: l\r\ncontent-length: 2\r\n\r\n{}`, 200],
      ["HEAD", `HEAD ${token} HTTP/1.1\r\nHost: test\r\nauthorization: Bearer ${apiKey}\r\nx-request-id: m\r\n\r\n`, 200],
      ["another path", get(`${token}/trades?limit=1`, withKey("n")), 200]
    ]
    for (const [name, request, status] of cases) {
      const { viaDirect, viaPipeline, tookDirect } = await both(request)
      expect(tookDirect, name).toBe(false)
      expect(statusOf(viaDirect), name).toBe(status)
      if (!name.startsWith("HEAD") && !name.startsWith("another")) expect(sameBut(viaDirect), name).toBe(sameBut(viaPipeline))
    }
  })

  it("echoes a sane X-Request-ID and makes one up otherwise, like the pipeline", async () => {
    const path = `/v1/tokens/solana/${solanaToken}`
    const before = answeredDirectly(direct)
    const echoed = await exchange(direct.url, get(path, withKey("client-id-42")))
    const made = await exchange(direct.url, get(path, { authorization: `Bearer ${apiKey}` }))
    const tooLong = await exchange(direct.url, get(path, withKey("x".repeat(129))))
    expect(answeredDirectly(direct) - before).toBe(3)
    expect(headerOf(echoed, "x-request-id")).toBe("client-id-42")
    expect(headerOf(made, "x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(headerOf(tooLong, "x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe("direct token reads spend the budgets as the pipeline does", () => {
  let budgeted: ReadApi
  let token: string

  const read = async (key = apiKey) => {
    const before = answeredDirectly(budgeted)
    const response = await exchange(budgeted.url, get(`/v1/tokens/solana/${token}`, withKey("budget", key)))
    return { status: statusOf(response), remaining: headerOf(response, "x-ratelimit-remaining"), direct: answeredDirectly(budgeted) - before === 1, response }
  }

  beforeAll(async () => {
    const market = simulatedMarket({ minutes: 1 }).market
    token = [...market.engine.allTokens()].find((t) => t.chain === "solana")!.address
    // Budgets that refill slowly (one key request per 6 s, one IP request per 4 s): a test's
    // requests count down without refilling in between.
    budgeted = await startReadApi({ market, limits: { keyPerMinute: 10, ipPerMinute: 15 }, keyCacheTtlMs: 600_000 })
  })
  afterAll(async () => {
    await budgeted?.close()
  })

  it("counts the key's budget down across both paths, then refuses with the pipeline's 429", async () => {
    const first = await read()
    expect(first).toMatchObject({ status: 200, remaining: "9", direct: false }) // the store is asked once
    const seen = [first.remaining]
    for (let i = 0; i < 9; i++) {
      const next = await read()
      expect(next.status).toBe(200)
      expect(next.direct).toBe(true)
      seen.push(next.remaining)
    }
    expect(seen).toEqual(["9", "8", "7", "6", "5", "4", "3", "2", "1", "0"])
    const refused = await read()
    expect(refused).toMatchObject({ status: 429, remaining: "0", direct: false })
    expect(headerOf(refused.response, "retry-after")).toMatch(/^[1-6]$/)
    // The IP's budget: 11 requests of 15 spent so far (the refusal by the key budget spent one too).
    const other = [await read(otherApiKey), await read(otherApiKey), await read(otherApiKey), await read(otherApiKey)]
    expect(other.map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect(other.map((r) => r.direct)).toEqual([false, true, true, true])
    expect(other.map((r) => r.remaining)).toEqual(["9", "8", "7", "6"])
    // 15 of the IP's 15 spent: the next request is refused by the IP budget, through the pipeline.
    const ipRefused = await read(otherApiKey)
    expect(ipRefused).toMatchObject({ status: 429, remaining: "0", direct: false })
    expect(headerOf(ipRefused.response, "retry-after")).toMatch(/^[1-4]$/)
  })
})
