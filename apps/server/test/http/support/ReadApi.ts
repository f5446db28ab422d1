/**
 * The read API as a client meets it: the real server composition as the tests start it
 * (TestServer), seeded keys, chosen budgets and a market fed deterministically from the
 * simulator, called with global fetch (NodeHttpClient.layerUndici crashes on Node 20). Every
 * response is checked for what every response must carry.
 */
import { Context, Layer, Redacted, Schema } from "effect"
import { expect } from "@effect/vitest"
import type { MarketEvent } from "@spot/domain"
import { ErrorEnvelope } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { EventStore, Market } from "@spot/application"
import type { MarketShape, RateLimits, TradeStore } from "@spot/application"
import { RateLimiterLive } from "@spot/adapters-http"
import { MemoryKeyStore } from "@spot/adapters-storage"
import { startTestServer, testServerConfig } from "../../support/TestServer.js"

/** Keys the store is seeded with (as `SPOT_API_KEYS` would). */
export const apiKey = "sk_test_readApiTestKeyNumberOne0123456789abcdef"
export const otherApiKey = "sk_test_readApiTestKeyNumberTwo0123456789abcdef"

export interface SimulatedMarket {
  readonly market: MarketShape
  readonly simulator: Simulator.MarketSimulator
  readonly startTime: number
  /** Time the market has been simulated up to. */
  readonly endTime: number
}

export interface MarketOptions {
  readonly seed?: number
  readonly minutes?: number
  readonly tradesPerSecond?: number
  readonly launchesPerMinute?: number
  /** Events folded before the simulated ones (hand-made tokens). */
  readonly before?: ReadonlyArray<MarketEvent>
}

/**
 * A market holding `minutes` of simulated activity that ends now (so use cases reading the clock,
 * such as discovery's ageMinutes or positions' asOf, see a market of the present).
 */
export const simulatedMarket = (options: MarketOptions = {}): SimulatedMarket => {
  const minutes = options.minutes ?? 4
  const endTime = Date.now()
  const startTime = endTime - minutes * 60_000
  const simulator = new Simulator.MarketSimulator({
    seed: options.seed ?? 7,
    startTime,
    tradesPerSecond: options.tradesPerSecond ?? 40,
    launchesPerMinute: options.launchesPerMinute ?? 30
  })
  const market = Market.makeMarket()
  if (options.before !== undefined) expectAllApplied(market.apply(options.before))
  expectAllApplied(market.apply(simulator.runFor(minutes * 60_000)))
  market.advanceTo(endTime)
  return { market, simulator, startTime, endTime }
}

const expectAllApplied = (outcome: { readonly rejected: ReadonlyArray<{ readonly reason: unknown }> }) =>
  expect(outcome.rejected.map((r) => r.reason)).toEqual([])

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly body: any
}

export interface ReadApi {
  readonly url: string
  /** The running server's services. */
  readonly context: Context.Context<any>
  readonly market: MarketShape
  /** GET with the test key unless `headers` says otherwise (pass `{}` for no key). */
  readonly get: (path: string, headers?: Record<string, string>) => Promise<Reply>
  readonly post: (path: string, body: unknown, headers?: Record<string, string>) => Promise<Reply>
  readonly request: (path: string, init: RequestInit) => Promise<Reply>
  readonly close: () => Promise<void>
}

export const bearer = (key = apiKey): Record<string, string> => ({ authorization: `Bearer ${key}` })

/** Checks what every response carries: a request id, no CORS header; `/v1` ones a budget header. */
const expectPlatformHeaders = (path: string, reply: Reply) => {
  expect(reply.headers.get("x-request-id"), `${path}: X-Request-ID`).toMatch(/^[\x21-\x7e]{1,128}$/)
  const cors = [...reply.headers.keys()].filter((name) => name.toLowerCase().startsWith("access-control-"))
  expect(cors, `${path}: CORS headers`).toEqual([])
  if (path.startsWith("/v1")) {
    expect(reply.headers.get("x-ratelimit-remaining"), `${path}: X-RateLimit-Remaining`).toMatch(/^\d+$/)
  }
}

export interface ServerOptions {
  readonly market: MarketShape
  readonly limits?: RateLimits
  /** The trade archive; default a fresh in-memory one. */
  readonly tradeStore?: Layer.Layer<TradeStore>
  /** Successful token reads answered before Effect's server (DirectReads); default on, as served. */
  readonly directReads?: boolean
  /** How long the key store's answer is reused; default the server's. */
  readonly keyCacheTtlMs?: number
}

/** Starts the server once (per test file); `close` in `afterAll`. */
export const startReadApi = async (options: ServerOptions): Promise<ReadApi> => {
  const { url, context, close } = await startTestServer(testServerConfig(), {
    market: Layer.succeed(Market.Market, options.market),
    eventStore: EventStore.layerMemory,
    keyStore: MemoryKeyStore.layer({ seedKeys: [Redacted.make(apiKey), Redacted.make(otherApiKey)] }),
    rateLimiter: RateLimiterLive.layer(options.limits ?? { keyPerMinute: 100_000, ipPerMinute: 100_000 }),
    ...(options.directReads === undefined ? {} : { directReads: options.directReads }),
    ...(options.keyCacheTtlMs === undefined ? {} : { keyCacheTtlMs: options.keyCacheTtlMs }),
    ...(options.tradeStore === undefined ? {} : { tradeStore: options.tradeStore })
  })

  const request = async (path: string, init: RequestInit): Promise<Reply> => {
    const response = await fetch(url + path, init)
    const text = await response.text()
    let body: unknown = undefined
    try {
      body = text.length === 0 ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    const reply: Reply = { status: response.status, headers: response.headers, text, body }
    expectPlatformHeaders(path, reply)
    return reply
  }
  return {
    url,
    context,
    market: options.market,
    request,
    get: (path, headers = bearer()) => request(path, { headers }),
    post: (path, body, headers = bearer()) =>
      request(path, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body)
      }),
    close
  }
}

/**
 * Decodes a success body with the domain's wire schema, refusing any field the schema does not
 * name, and returns the decoded value.
 */
export const expectWire = <S extends Schema.Decoder<unknown, never>>(schema: S, reply: Reply): S["Type"] => {
  expect(reply.status, reply.text.slice(0, 500)).toBe(200)
  expect(reply.headers.get("content-type")).toBe("application/json")
  return Schema.decodeUnknownSync(schema)(reply.body, { onExcessProperty: "error" }) as S["Type"]
}

const decodeEnvelope = Schema.decodeUnknownSync(ErrorEnvelope)

/**
 * Checks the exact error envelope `{error: {code, message, details?}}`: status, code, and for
 * VALIDATION_ERROR (and UNSUPPORTED_CHAIN) `details` as `[{field, message}]` naming `fields`
 * (each at least once; other fields may be named too when `exactFields` is false).
 */
export const expectError = (
  reply: Reply,
  status: number,
  code: string,
  fields?: ReadonlyArray<string>,
  exactFields = false
): ReadonlyArray<{ readonly field: string; readonly message: string }> => {
  expect(reply.status, reply.text.slice(0, 500)).toBe(status)
  expect(reply.headers.get("content-type")).toBe("application/json")
  decodeEnvelope(reply.body, { onExcessProperty: "error" })
  expect(Object.keys(reply.body)).toEqual(["error"])
  expect(reply.body.error.code).toBe(code)
  expect(reply.body.error.message.length).toBeGreaterThan(0)
  const details = reply.body.error.details
  if (code === "VALIDATION_ERROR") {
    expect(Array.isArray(details), "details is an array").toBe(true)
    expect(details.length).toBeGreaterThan(0)
    for (const detail of details) {
      expect(Object.keys(detail).sort()).toEqual(["field", "message"])
      expect(typeof detail.field).toBe("string")
      expect(typeof detail.message).toBe("string")
      expect(detail.message.length).toBeGreaterThan(0)
    }
  }
  if (fields !== undefined) {
    const named = (details ?? []).map((d: { field: string }) => d.field)
    if (exactFields) expect([...new Set(named)].sort()).toEqual([...new Set(fields)].sort())
    else for (const field of fields) expect(named, `details name ${field}`).toContain(field)
  }
  return details ?? []
}

/** Query string from a record (values encoded). */
export const query = (params: Readonly<Record<string, string | number | boolean>>): string => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) search.set(name, String(value))
  const text = search.toString()
  return text.length === 0 ? "" : `?${text}`
}
