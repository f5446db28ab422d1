import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  Candle,
  CandlesResponse,
  ClientFrame,
  compareDecimalStrings,
  DecimalString,
  DiscoveryRequest,
  DiscoveryResponse,
  ErrorEnvelope,
  IdentityProfile,
  Money,
  Position,
  PositionsPage,
  rangeViolations,
  ServerFrame,
  Token,
  Trade,
  TradePage,
  UnsignedDecimalString
} from "../../src/wire/index.js"

const money = (native: string, usd: string) => ({ native, usd })

const window = {
  priceChangePct: "-12.5",
  volume: money("10.5", "1575"),
  buyCount: 12,
  sellCount: 7,
  buyVolume: money("6", "900"),
  sellVolume: money("4.5", "675")
}

const token = {
  chain: "solana",
  address: "7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr",
  name: "Popcat",
  symbol: "POPCAT",
  decimals: 6,
  supply: "1000000000",
  creator: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
  devFunding: {
    status: "resolved",
    address: "5tzFkiKscXHK5ZXCGbXZxdw7gTjjD1mBwuoFbhUvuAi9",
    sourceKind: "cex",
    sourceLabel: "Binance"
  },
  createdAt: 1763745000000,
  launchpad: "pump.fun",
  bondingCurvePct: "42.17",
  graduatedAt: null,
  graduatedToPool: null,
  graduatedToDex: null,
  dexes: ["pump.fun"],
  anchorAddress: "So11111111111111111111111111111111111111112",
  anchorSymbol: "SOL",
  price: money("0.000000031", "0.0000046"),
  marketCap: money("31", "4650"),
  liquidity: money("20", "3000"),
  ath: {
    price: money("0.00000004", "0.000006"),
    priceAt: 1763745100000,
    marketCap: money("40", "6000"),
    marketCapAt: 1763745100000
  },
  stats: { "5m": window, "30m": window, "1h": window, "6h": window, "24h": window },
  totals: {
    volume: money("120", "18000"),
    fees: {
      transaction: money("0.1", "15"),
      validator: money("0.01", "1.5"),
      platform: money("1.2", "180"),
      dex: money("0.36", "54")
    }
  },
  holders: {
    count: 312,
    top10Pct: "101.2",
    devPct: "3.1",
    sniperPct: "1.5",
    sniperCount: 4,
    bundlerPct: "0",
    bundlerCount: 0,
    insiderPct: "2",
    insiderCount: 5,
    freshWalletPct: "7.25",
    freshWalletCount: 30,
    proTraderPct: "12",
    proTraderCount: 40,
    partnerPct: "1",
    partnerCount: 3,
    phishingPct: "0",
    phishingCount: 0,
    fundedByCexPct: "44.4"
  },
  security: {
    mintDisabled: true,
    transferBlockable: false,
    lpBurntPct: null,
    transferFeeBps: null,
    rugPct: "0"
  },
  metadata: {
    description: "cat",
    website: "https://popcat.example",
    twitter: null,
    telegram: null,
    discord: null,
    twitterReuseCount: 0
  },
  platforms: [{ platform: "listingService", isPaid: true, paidAt: 1763745200000 }],
  annotations: [{ kind: "mayhem_mode" }],
  updatedAt: 1763745882000
}

const identity = {
  source: "kolscan",
  handle: "ansem",
  displayName: "Ansem",
  avatar: null,
  twitter: "blknoiz06",
  telegram: null,
  farcaster: null
}

const trade = {
  id: "t_01",
  chain: "base",
  token: "0x4200000000000000000000000000000000000042",
  name: "",
  symbol: "",
  trader: "0x1111111111111111111111111111111111111111",
  transactionHash: "0xabc",
  side: "buy",
  amount: "1500.25",
  price: money("0.0001", "0.35"),
  volume: money("0.15", "525"),
  marketCap: money("100", "350000"),
  flags: ["sniper", "some_new_flag"],
  platforms: [{ platform: "partner" }],
  identities: [identity],
  timestamp: 1763745882000
}

const position = {
  walletAddress: "0x1111111111111111111111111111111111111111",
  chain: "bsc",
  product: "spot",
  status: "closed",
  token: {
    address: "0x2222222222222222222222222222222222222222",
    chain: "bsc",
    decimals: 18,
    image: null,
    name: "Thing",
    symbol: "THG",
    price: money("0.001", "0.6"),
    marketCap: money("1000", "600000")
  },
  holdings: "0",
  holdingsPctSupply: "0",
  avgCost: money("0.001", "0.6"),
  invested: money("1", "600"),
  received: money("1.5", "900"),
  fees: money("0.01", "6"),
  realizedPnl: money("-0.49", "-294"),
  buyCount: 2,
  sellCount: 1,
  tokensBought: "1000",
  tokensSold: "1000",
  isStablecoin: false,
  isTransfer: false,
  openedAt: 1763740000000,
  updatedAt: 1763745000000,
  version: 7,
  funding: {
    status: "unresolved",
    address: null,
    amount: null,
    asset: null,
    sourceKind: null,
    sourceLabel: null,
    symbol: null,
    timestamp: null,
    tx: null
  },
  lifetime: {
    buyCount: 2,
    cycleCount: 1,
    fees: money("0.01", "6"),
    invested: money("1", "600"),
    realizedPnl: money("0.49", "294"),
    received: money("1.5", "900"),
    sellCount: 1,
    tokensBought: "1000",
    tokensSold: "1000",
    winningCycleCount: 1
  },
  closedAt: 1763745000000,
  avgEntryMarketCap: money("1000", "600000"),
  avgExitMarketCap: money("1500", "900000"),
  identities: [identity],
  value: null,
  unrealizedPnl: null,
  totalPnl: money("0.49", "294"),
  pnlPct: "49"
}

const candle = { time: 1763745840000, open: 0.1, high: 0.12, low: 0.09, close: 0.11, volume: 1234.5 }

const decodes = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, input: unknown) =>
  Schema.decodeUnknownExit(schema)(input, { errors: "all" })

const refused = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, input: unknown) =>
  Exit.isFailure(decodes(schema, input))

const omit = <A extends Record<string, unknown>>(value: A, ...keys: Array<keyof A>): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...value }
  for (const key of keys) delete out[key as string]
  return out
}

describe("wire: complete samples decode", () => {
  it("Token (every field)", () => {
    expect(Schema.decodeUnknownSync(Token)(token)).toEqual(token)
  })
  it("Trade", () => {
    expect(Schema.decodeUnknownSync(Trade)(trade)).toEqual(trade)
  })
  it("TradePage", () => {
    const page = { trades: [trade], nextCursor: "abc", hasMore: true }
    expect(Schema.decodeUnknownSync(TradePage)(page)).toEqual(page)
    const last = { trades: [], nextCursor: null, hasMore: false }
    expect(Schema.decodeUnknownSync(TradePage)(last)).toEqual(last)
  })
  it("Position", () => {
    expect(Schema.decodeUnknownSync(Position)(position)).toEqual(position)
  })
  it("PositionsPage", () => {
    const page = { asOf: 1763745882000, counts: { spot: { open: 3, closed: 9 } }, hasMore: false, positions: [position], nextCursor: null }
    expect(Schema.decodeUnknownSync(PositionsPage)(page)).toEqual(page)
  })
  it("Candle and CandlesResponse", () => {
    expect(Schema.decodeUnknownSync(Candle)(candle)).toEqual(candle)
    expect(Schema.decodeUnknownSync(CandlesResponse)({ candles: [candle] })).toEqual({ candles: [candle] })
  })
  it("DiscoveryResponse", () => {
    const response = {
      columns: [
        { column: "newPairs", deltas: [{ chain: "solana", address: token.address, rank: 1, data: token }] },
        { column: "graduated", deltas: [] }
      ]
    }
    expect(Schema.decodeUnknownSync(DiscoveryResponse)(response)).toEqual(response)
  })
  it("stream frames and error envelope", () => {
    expect(Schema.decodeUnknownSync(ClientFrame)({ action: "subscribe", channel: "spot.trades", filters: { identity: "kol" }, id: "1" }))
      .toEqual({ action: "subscribe", channel: "spot.trades", filters: { identity: "kol" }, id: "1" })
    expect(Schema.decodeUnknownSync(ClientFrame)({ action: "ping" })).toEqual({ action: "ping" })
    const errorFrame = { type: "error", id: "1", error: { code: "VALIDATION_ERROR", message: "bad", details: [{ field: "chain", message: "missing" }] } }
    expect(Schema.decodeUnknownSync(ServerFrame)(errorFrame)).toEqual(errorFrame)
    const capFrame = { type: "error", id: "2", error: { code: "RATE_LIMITED", message: "cap", details: { limit: 100 } } }
    expect(Schema.decodeUnknownSync(ServerFrame)(capFrame)).toEqual(capFrame)
    const unsupported = { error: { code: "UNSUPPORTED_CHAIN", message: "x", details: [{ field: "chain", message: "unsupported chain \"eth\"" }] } }
    expect(Schema.decodeUnknownSync(ErrorEnvelope)(unsupported)).toEqual(unsupported)
    // Codes are append-only: a code added later still decodes (a client falls back on the HTTP
    // status); a REST body's details are always [{field, message}].
    expect(refused(ErrorEnvelope, { error: { code: "SOME_FUTURE_CODE", message: "x" } })).toBe(false)
    expect(refused(ErrorEnvelope, { error: { code: 42, message: "x" } })).toBe(true)
    expect(refused(ErrorEnvelope, { error: { code: "RATE_LIMITED", message: "x", details: { limit: 100 } } })).toBe(true)
  })
})

describe("wire: refusals", () => {
  it("exponent-form decimals", () => {
    expect(refused(DecimalString, "1e-7")).toBe(true)
    expect(refused(DecimalString, "1E7")).toBe(true)
    expect(refused(Money, money("1e-7", "1"))).toBe(true)
    expect(refused(Token, { ...token, price: money("0.0000001", "1e-7") })).toBe(true)
  })
  it("malformed decimals", () => {
    for (const bad of ["", ".5", "5.", "+1", "1,5", " 1", "0x10", "NaN", "Infinity"]) {
      expect(refused(DecimalString, bad)).toBe(true)
    }
    expect(refused(DecimalString, 1.5)).toBe(true)
    expect(refused(UnsignedDecimalString, "-1")).toBe(true)
    expect(refused(DecimalString, "-1.25")).toBe(false)
  })
  it("unknown chain slug", () => {
    expect(refused(Token, { ...token, chain: "ethereum" })).toBe(true)
    expect(refused(Trade, { ...trade, chain: "Solana" })).toBe(true)
  })
  it("candle value as a string, or not finite", () => {
    expect(refused(Candle, { ...candle, close: "0.11" })).toBe(true)
    expect(refused(Candle, { ...candle, volume: Number.NaN })).toBe(true)
    expect(refused(Candle, { ...candle, high: Number.POSITIVE_INFINITY })).toBe(true)
    expect(refused(Candle, { ...candle, time: 1.5 })).toBe(true)
  })
  it("missing required field", () => {
    expect(refused(Token, omit(token, "updatedAt"))).toBe(true)
    expect(refused(Token, { ...token, security: omit(token.security, "rugPct") })).toBe(true)
    expect(refused(Token, { ...token, stats: omit(token.stats, "24h") })).toBe(true)
    expect(refused(Trade, omit(trade, "transactionHash"))).toBe(true)
    expect(refused(Position, omit(position, "lifetime"))).toBe(true)
    expect(refused(Position, { ...position, funding: omit(position.funding, "tx") })).toBe(true)
    expect(refused(IdentityProfile, omit(identity, "farcaster"))).toBe(true)
  })
  it("null where not allowed", () => {
    expect(refused(Token, { ...token, name: null })).toBe(true)
    expect(refused(Token, { ...token, price: null })).toBe(true)
    expect(refused(Token, { ...token, platforms: null })).toBe(true)
    expect(refused(IdentityProfile, { ...identity, source: null })).toBe(true)
    expect(refused(Position, { ...position, closedAt: null })).toBe(true)
    expect(refused(Position, { ...position, avgEntryMarketCap: null })).toBe(true)
    expect(refused(TradePage, { trades: [], nextCursor: null, hasMore: null })).toBe(true)
  })
  it("wrong enumerations and integer checks", () => {
    expect(refused(Trade, { ...trade, side: "short" })).toBe(true)
    expect(refused(Token, { ...token, devFunding: { ...token.devFunding, status: "pending" } })).toBe(true)
    expect(refused(Token, { ...token, decimals: -1 })).toBe(true)
    expect(refused(Token, { ...token, holders: { ...token.holders, count: 1.5 } })).toBe(true)
    expect(refused(Position, { ...position, status: "pending" })).toBe(true)
    expect(refused(DiscoveryResponse, { columns: [{ column: "trending", deltas: [] }] })).toBe(true)
    expect(refused(DiscoveryResponse, { columns: [{ column: "newPairs", deltas: [{ chain: "base", address: "0x", rank: 0 }] }] })).toBe(true)
  })
})

describe("wire: optional keys", () => {
  it("Token without platforms and annotations", () => {
    const bare = omit(token, "platforms", "annotations")
    expect(Schema.decodeUnknownSync(Token)(bare)).toEqual(bare)
  })
  it("Trade without flags, platforms and identities", () => {
    const bare = omit(trade, "flags", "platforms", "identities")
    expect(Schema.decodeUnknownSync(Trade)(bare)).toEqual(bare)
  })
  it("Position without any optional field", () => {
    const bare = omit(
      position,
      "closedAt",
      "avgEntryMarketCap",
      "avgExitMarketCap",
      "identities",
      "value",
      "unrealizedPnl",
      "totalPnl",
      "pnlPct"
    )
    expect(Schema.decodeUnknownSync(Position)(bare)).toEqual(bare)
    const nulls = { ...bare, value: null, unrealizedPnl: null, totalPnl: null, pnlPct: null }
    expect(Schema.decodeUnknownSync(Position)(nulls)).toEqual(nulls)
  })
  it("Position funding with open-set values", () => {
    const funding = { ...position.funding, status: "resolved", sourceKind: "bridge", amount: "2.5", timestamp: 1763740000000 }
    expect(Exit.isSuccess(decodes(Position, { ...position, funding }))).toBe(true)
  })
  it("discovery entry without data, rank null (eviction)", () => {
    const response = { columns: [{ column: "graduating", deltas: [{ chain: "arc", address: "0x1", rank: null }] }] }
    expect(Schema.decodeUnknownSync(DiscoveryResponse)(response)).toEqual(response)
  })
})

describe("wire: discovery request", () => {
  it("unknown filter names are dropped, not refused", () => {
    const body = {
      chains: ["solana", "base"],
      newPairs: { limit: 500, filters: { ageMinutes: { max: 60 }, bogusFilter: { min: 1 }, alsoUnknown: true } },
      graduating: null,
      graduated: {}
    }
    const decoded = Schema.decodeUnknownSync(DiscoveryRequest)(body)
    expect(decoded).toEqual({
      chains: ["solana", "base"],
      newPairs: { limit: 500, filters: { ageMinutes: { max: 60 } } },
      graduating: null,
      graduated: {}
    })
    expect(decoded.newPairs?.filters).not.toHaveProperty("bogusFilter")
  })
  it("chains are any strings (the use case answers UNSUPPORTED_CHAIN)", () => {
    expect(Schema.decodeUnknownSync(DiscoveryRequest)({ chains: ["ethereum"], newPairs: {} })).toEqual({
      chains: ["ethereum"],
      newPairs: {}
    })
  })
  it("every filter decodes", () => {
    const filters = {
      ageMinutes: { min: 0, max: 60 },
      anchorSymbols: ["SOL"],
      bondingCurvePercent: { min: 10.5, max: 99 },
      buys: { min: 1 },
      sells: { max: 5 },
      txns: {},
      devHoldingPercent: { max: 10 },
      snipersSupplyPercent: { max: 20 },
      top10HoldersPercent: { max: 50 },
      excludeDevAddresses: ["a"],
      excludeFundingAddresses: ["b"],
      excludeSymbolOrName: ["scam"],
      excludeTwitter: ["@x"],
      excludeWebsites: ["x.com"],
      globalFeesPaidUsd: { min: "1.5" },
      holderCount: { min: 10 },
      lastActivityMinutes: 5,
      liquidityUsd: { min: "1000", max: "50000.5" },
      marketCapUsd: { min: "0" },
      volumeUsd: { max: "1000000" },
      maxGraduationStaleMinutes: 30,
      protocols: ["pump.fun", "mayhem_mode"],
      symbolOrName: ["cat"],
      twitterReuseCount: { max: 0 },
      withAtLeastOneSocial: true
    }
    const body = { chains: ["solana"], graduating: { sortBy: "marketCapUsd", order: "asc", limit: 0, filters } }
    expect(Schema.decodeUnknownSync(DiscoveryRequest)(body)).toEqual(body)
  })
  it("a limit of any integer magnitude decodes (it is clamped, never refused)", () => {
    for (const limit of [0, -5, 1000, 9_007_199_254_740_992, 1e30, -1e30, 2.0, Infinity, -Infinity]) {
      const body = { chains: ["solana"], newPairs: { limit } }
      expect(Schema.decodeUnknownSync(DiscoveryRequest)(body), String(limit)).toEqual(body)
    }
  })
  it("malformed bodies are refused", () => {
    expect(refused(DiscoveryRequest, { newPairs: {} })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: "solana", newPairs: {} })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: ["solana"], newPairs: { sortBy: "hype" } })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: ["solana"], newPairs: { order: "up" } })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: ["solana"], newPairs: { limit: 2.5 } })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: ["solana"], newPairs: { limit: "20" } })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: ["solana"], newPairs: { filters: { buys: { min: -1 } } } })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: ["solana"], newPairs: { filters: { liquidityUsd: { min: 1000 } } } })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: ["solana"], newPairs: { filters: { devHoldingPercent: { max: "5" } } } })).toBe(true)
    expect(refused(DiscoveryRequest, { chains: ["solana"], newPairs: { filters: { lastActivityMinutes: -5 } } })).toBe(true)
  })
})

describe("wire: rangeViolations", () => {
  it("finds min > max for count, number and decimal ranges", () => {
    const violations = rangeViolations({
      ageMinutes: { min: 61, max: 60 },
      bondingCurvePercent: { min: 50.5, max: 50.25 },
      liquidityUsd: { min: "10", max: "9.5" },
      holderCount: { min: 1, max: 1 }
    })
    expect(violations.map((v) => v.field).sort()).toEqual(["ageMinutes", "bondingCurvePercent", "liquidityUsd"])
    for (const v of violations) expect(v.message).toMatch(/min .* max/)
  })
  it("prefixes the field path when asked", () => {
    expect(rangeViolations({ buys: { min: 3, max: 2 } }, "newPairs.filters")).toEqual([
      { field: "newPairs.filters.buys", message: "min (3) must not exceed max (2)" }
    ])
  })
  it("finds nothing for valid or half-open ranges", () => {
    expect(
      rangeViolations({
        ageMinutes: { min: 0, max: 60 },
        buys: { min: 5 },
        sells: { max: 1 },
        txns: {},
        bondingCurvePercent: { min: 10, max: 10 },
        liquidityUsd: { min: "9.5", max: "10" },
        marketCapUsd: { min: "100.000", max: "100" },
        volumeUsd: { min: "-1", max: "0" },
        globalFeesPaidUsd: { min: "0.1", max: "0.10000000000000000000001" },
        anchorSymbols: ["SOL"]
      })
    ).toEqual([])
    expect(rangeViolations({})).toEqual([])
  })
  it("compares decimals exactly, beyond 18 places", () => {
    expect(rangeViolations({ volumeUsd: { min: "1.0000000000000000000001", max: "1" } }).map((v) => v.field)).toEqual([
      "volumeUsd"
    ])
    expect(compareDecimalStrings("10", "9.5")).toBe(1)
    expect(compareDecimalStrings("-0.5", "-0.25")).toBe(-1)
    expect(compareDecimalStrings("-0", "0")).toBe(0)
    expect(compareDecimalStrings("1e3", "1")).toBeUndefined()
  })
})

describe("wire: JSON Schema", () => {
  const doc = Schema.toJsonSchemaDocument(Token)
  const defs = doc.definitions as Record<string, Record<string, unknown>>

  it("Token and Money are named definitions", () => {
    expect(doc.schema).toEqual({ $ref: "#/$defs/Token" })
    expect(defs["Money"]).toMatchObject({ type: "object", required: ["native", "usd"] })
    const props = defs["Token"]!["properties"] as Record<string, unknown>
    expect(props["marketCap"]).toEqual({ allOf: [{ $ref: "#/$defs/Money" }, { description: "Current market cap (uses total supply)" }] })
    expect(defs["Token"]!["required"]).not.toContain("platforms")
    expect(defs["Token"]!["required"]).not.toContain("annotations")
    expect(defs["Token"]!["required"]).toContain("updatedAt")
  })
  it("decimal strings carry their pattern", () => {
    expect(defs["DecimalString"]).toMatchObject({ type: "string", pattern: "^-?\\d+(\\.\\d+)?$" })
    expect(defs["UnsignedDecimalString"]).toMatchObject({ type: "string", pattern: "^\\d+(\\.\\d+)?$" })
  })
  it("no named schema is duplicated under a suffixed name", () => {
    const all = Schema.Struct({
      a: Token,
      b: TradePage,
      c: PositionsPage,
      d: DiscoveryResponse,
      e: DiscoveryRequest,
      f: ErrorEnvelope,
      g: ClientFrame,
      h: ServerFrame,
      i: CandlesResponse
    })
    const names = Object.keys(Schema.toJsonSchemaDocument(all).definitions)
    expect(names.filter((n) => /_\d+$/.test(n))).toEqual([])
    expect(names).toEqual(expect.arrayContaining(["Money", "Token", "Trade", "Position", "Candle", "DiscoveryFilters", "ErrorBody"]))
  })
  it("candle values are plain numbers in JSON Schema", () => {
    const candleDefs = Schema.toJsonSchemaDocument(Candle).definitions as Record<string, Record<string, unknown>>
    const props = candleDefs["Candle"]!["properties"] as Record<string, Record<string, unknown>>
    expect(props["close"]).toMatchObject({ type: "number" })
  })
})

describe("wire: OpenAPI components", () => {
  const api = HttpApi.make("Api").add(
    HttpApiGroup.make("g").add(
      HttpApiEndpoint.post("discovery", "/v1/discovery", { payload: DiscoveryRequest, success: DiscoveryResponse })
    )
  )
  const schemas = OpenApi.fromApi(api).components.schemas as Record<string, Record<string, unknown>>

  it("names the components after the schema identifiers", () => {
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(["DiscoveryRequest", "ColumnConfig", "DiscoveryFilters", "DiscoveryResponse", "Token", "Money"])
    )
  })
  it("keeps DiscoveryFilters open (unknown filter names are ignored), response objects closed", () => {
    expect(schemas["DiscoveryFilters"]!["additionalProperties"]).toBeUndefined()
    expect(schemas["DiscoveryFilters"]!["allOf"]).toEqual([{ type: "object", additionalProperties: {} }])
    expect(schemas["Token"]!["additionalProperties"]).toBe(false)
  })
})
