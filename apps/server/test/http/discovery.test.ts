/**
 * POST /v1/discovery on the real server (spec "POST /v1/discovery", "Discovery column
 * membership"): column order, ranks, membership, filters and sorting checked against the same
 * market read directly, limit clamping, and every refusal the spec lists.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { DiscoveryResponse as DiscoveryResponseType, Token as TokenType } from "@spot/domain"
import { Chain, Discovery, DiscoveryResponse, Fixed } from "@spot/domain"
import type { ReadApi, SimulatedMarket } from "./support/ReadApi.js"
import { expectError, expectWire, simulatedMarket, startReadApi } from "./support/ReadApi.js"

const allChains = [...Chain.chains]
const forty = Fixed.fromInt(40)

/** The spec's membership table, read off the served token object. */
const meetsColumn = (column: string, token: TokenType): boolean => {
  if (token.launchpad === null) return false
  const curve = token.bondingCurvePct === null ? null : Fixed.unsafeParse(token.bondingCurvePct)
  switch (column) {
    case "newPairs":
      return token.graduatedAt === null && curve !== null && curve < forty
    case "graduating":
      return token.graduatedAt === null && curve !== null && curve >= forty
    default:
      return token.graduatedAt !== null || curve === null
  }
}

/**
 * A column's default board read off docs/discovery.md apart from the implementation ("Column
 * defaults", "Sort fields", "Tie-break"): the column's default field, descending (the spec's
 * default order), a missing value last; then createdAt descending, chain, address ascending.
 */
const defaultKey = (column: Discovery.ColumnName, t: Discovery.DiscoveryCandidate): number | bigint | null =>
  column === "newPairs" ? t.createdAt
  : column === "graduating" ? t.bondingCurvePct
  : t.graduatedAt ?? (t.bondingCurvePct === null ? t.createdAt : null)
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const defaultBoard = (column: Discovery.ColumnName) => (a: Discovery.DiscoveryCandidate, b: Discovery.DiscoveryCandidate): number => {
  const ka = defaultKey(column, a)
  const kb = defaultKey(column, b)
  if (ka !== kb) {
    if (ka === null) return 1
    if (kb === null) return -1
    return ka > kb ? -1 : 1
  }
  return b.createdAt - a.createdAt || compareText(a.chain, b.chain) || compareText(a.address, b.address)
}

describe("POST /v1/discovery", () => {
  let api: ReadApi
  let simulated: SimulatedMarket

  beforeAll(async () => {
    simulated = simulatedMarket({ minutes: 5, seed: 9, tradesPerSecond: 40, launchesPerMinute: 40 })
    api = await startReadApi({ market: simulated.market })
  })
  afterAll(() => api.close())

  const discover = async (body: unknown): Promise<DiscoveryResponseType> => expectWire(DiscoveryResponse, await api.post("/v1/discovery", body))

  /** Tokens of `column` on `chains`, read from the market directly. */
  const candidates = (column: Discovery.ColumnName, chains: ReadonlyArray<string> = allChains) =>
    [...simulated.market.engine.allTokens()].filter((t) => chains.includes(t.chain) && Discovery.columnOf(t) === column)

  const expectRanked = (response: DiscoveryResponseType) => {
    for (const column of response.columns) {
      column.deltas.forEach((entry, i) => {
        expect(entry.rank).toBe(i + 1)
        expect(entry.data).toBeDefined()
        expect(entry.chain).toBe(entry.data!.chain)
        expect(entry.address).toBe(entry.data!.address)
        expect(meetsColumn(column.column, entry.data!), `${entry.chain}:${entry.address} in ${column.column}`).toBe(true)
      })
      expect(new Set(column.deltas.map((e) => `${e.chain}:${e.address}`)).size).toBe(column.deltas.length)
    }
  }

  it("answers every requested column in the fixed order newPairs, graduating, graduated, whatever the body's order", async () => {
    const response = await discover({ graduated: {}, chains: allChains, graduating: {}, newPairs: {} })
    expect(response.columns.map((c) => c.column)).toEqual(["newPairs", "graduating", "graduated"])
    expectRanked(response)
    for (const column of response.columns) {
      expect(column.deltas.length).toBe(Math.min(20, candidates(column.column).length))
      expect(column.deltas.length).toBeGreaterThan(0)
    }
  })

  it("answers only the columns named; null or an omitted column is not requested", async () => {
    const response = await discover({ chains: allChains, newPairs: null, graduated: {} })
    expect(response.columns.map((c) => c.column)).toEqual(["graduated"])
    const two = await discover({ chains: allChains, graduating: { limit: 3 }, newPairs: { limit: 2 } })
    expect(two.columns.map((c) => c.column)).toEqual(["newPairs", "graduating"])
  })

  it("ranks every column's whole membership (limit 100) exactly as the market classifies it", async () => {
    const response = await discover({ chains: allChains, newPairs: { limit: 100 }, graduating: { limit: 100 }, graduated: { limit: 100 } })
    expectRanked(response)
    for (const column of response.columns) {
      // the column's members in the default order; a column of more than 100 serves its top 100
      const expected = candidates(column.column).sort(defaultBoard(column.column)).slice(0, 100).map((t) => `${t.chain}:${t.address}`)
      const served = column.deltas.map((e) => `${e.chain}:${e.address}`)
      expect(served, column.column).toEqual(expected)
    }
    // the cut at 100 is exercised: some column has more members than it serves
    expect(response.columns.some((column) => candidates(column.column).length > 100)).toBe(true)
  })

  it("mixes the requested chains in one ranking and reads a repeated slug once", async () => {
    const chains = [...new Set(candidates("newPairs").map((t) => t.chain))].slice(0, 2)
    expect(chains.length).toBe(2)
    const response = await discover({ chains, newPairs: { limit: 100 } })
    const served = response.columns[0]!.deltas
    expect(new Set(served.map((e) => e.chain))).toEqual(new Set(chains))
    expect(served.length).toBe(Math.min(100, candidates("newPairs", chains).length))
    const once = await discover({ chains: [chains[0], chains[0]], newPairs: { limit: 100 } })
    const single = await discover({ chains: [chains[0]], newPairs: { limit: 100 } })
    expect(once).toEqual(single)
    expect(single.columns[0]!.deltas.every((e) => e.chain === chains[0])).toBe(true)
  })

  it("clamps limit instead of refusing it: 0 and negatives give 1 row, 1000 gives at most 100, default 20", async () => {
    const rows = async (limit: number | undefined) =>
      (await discover({ chains: allChains, newPairs: limit === undefined ? {} : { limit } })).columns[0]!.deltas.length
    const available = candidates("newPairs").length
    expect(await rows(0)).toBe(1)
    expect(await rows(-4)).toBe(1)
    expect(await rows(1000)).toBe(Math.min(100, available))
    // Integers past 2^53 and in exponent form are integers too: clamped like 1000.
    expect(await rows(9_007_199_254_740_992)).toBe(Math.min(100, available))
    expect(await rows(1e30)).toBe(Math.min(100, available))
    expect(await rows(-1e30)).toBe(1)
    expect(await rows(undefined)).toBe(Math.min(20, available))
    // A literal past a double's range (JSON.parse reads 1e400 as Infinity) is an integer as written.
    const raw = async (limit: string) => {
      const reply = await api.post("/v1/discovery", `{"chains":${JSON.stringify(allChains)},"newPairs":{"limit":${limit}}}`)
      return expectWire(DiscoveryResponse, reply).columns[0]!.deltas.length
    }
    expect(await raw("1e400")).toBe(Math.min(100, available))
    expect(await raw("-1e400")).toBe(1)
  })

  it("takes count and percentage bounds of any magnitude: nothing passes min 1e30, everything passes max 1e30 or 1e400", async () => {
    const rows = async (filters: string) => {
      const reply = await api.post("/v1/discovery", `{"chains":${JSON.stringify(allChains)},"newPairs":{"limit":100,"filters":${filters}}}`)
      return expectWire(DiscoveryResponse, reply).columns[0]!.deltas.length
    }
    const all = await rows("{}")
    expect(all).toBeGreaterThan(0)
    expect(await rows(`{"buys":{"min":1000000000000000000000000000000}}`)).toBe(0)
    expect(await rows(`{"holderCount":{"max":9007199254740993},"ageMinutes":{"max":1e400}}`)).toBe(all)
    expect(await rows(`{"lastActivityMinutes":100000000000000000000}`)).toBe(all)
    // percentage bounds too: a literal past a double's range is past every percentage
    expect(await rows(`{"devHoldingPercent":{"max":1e400},"top10HoldersPercent":{"min":-1e400,"max":1e400}}`)).toBe(all)
    expect(await rows(`{"snipersSupplyPercent":{"min":1e400}}`)).toBe(0)
    expectError(
      await api.post("/v1/discovery", `{"chains":${JSON.stringify(allChains)},"newPairs":{"filters":{"devHoldingPercent":{"min":1e400,"max":5}}}}`),
      400, "VALIDATION_ERROR", ["body.newPairs.filters.devHoldingPercent"]
    )
    // still refused: a negative count and a fraction
    expectError(await api.post("/v1/discovery", { chains: allChains, newPairs: { filters: { buys: { min: -1 } } } }), 400, "VALIDATION_ERROR", ["body.newPairs.filters.buys.min"])
    expectError(await api.post("/v1/discovery", { chains: allChains, newPairs: { filters: { buys: { min: 1.5 } } } }), 400, "VALIDATION_ERROR", ["body.newPairs.filters.buys.min"])
  })

  it("sorts by the requested field in the requested order", async () => {
    const sorts: Array<[string, (t: TokenType) => bigint | number]> = [
      ["marketCapUsd", (t) => Fixed.unsafeParse(t.marketCap.usd)],
      ["liquidityUsd", (t) => Fixed.unsafeParse(t.liquidity.usd)],
      ["holdersCount", (t) => t.holders.count],
      ["createdAt", (t) => t.createdAt],
      ["volume24hUsd", (t) => Fixed.unsafeParse(t.stats["24h"].volume.usd)]
    ]
    for (const [sortBy, value] of sorts) {
      for (const order of ["asc", "desc"] as const) {
        const response = await discover({ chains: allChains, newPairs: { sortBy, order, limit: 100 }, graduated: { sortBy, order, limit: 100 } })
        for (const column of response.columns) {
          const values = column.deltas.map((e) => value(e.data!))
          for (let i = 1; i < values.length; i++) {
            if (order === "asc") expect(values[i]! >= values[i - 1]!, `${sortBy} asc at ${i}`).toBe(true)
            else expect(values[i]! <= values[i - 1]!, `${sortBy} desc at ${i}`).toBe(true)
          }
        }
      }
    }
  })

  it("keeps only tokens meeting every requested filter, and all of them", async () => {
    const holders = candidates("newPairs").map((t) => t.holdersCount).sort((a, b) => a - b)
    const median = holders[Math.floor(holders.length / 2)]!
    const response = await discover({
      chains: allChains,
      newPairs: { limit: 100, filters: { holderCount: { min: median }, marketCapUsd: { min: "1" } } }
    })
    const served = response.columns[0]!.deltas
    const expected = candidates("newPairs").filter((t) => t.holdersCount >= median && t.marketCapUsd >= Fixed.ONE)
    expect(expected.length).toBeGreaterThan(0)
    expect(expected.length).toBeLessThan(candidates("newPairs").length)
    expect(served.map((e) => `${e.chain}:${e.address}`).sort()).toEqual(expected.map((t) => `${t.chain}:${t.address}`).sort())
    for (const entry of served) expect(entry.data!.holders.count).toBeGreaterThanOrEqual(median)
  })

  it("keeps tokens whose symbol or name contains a word, ignoring case", async () => {
    const sample = candidates("newPairs")[0]!
    const word = sample.symbol.slice(0, 2).toLowerCase()
    const response = await discover({ chains: allChains, newPairs: { limit: 100, filters: { symbolOrName: [word] } } })
    const served = response.columns[0]!.deltas
    expect(served.length).toBeGreaterThan(0)
    for (const entry of served) {
      expect(`${entry.data!.symbol} ${entry.data!.name}`.toLowerCase()).toContain(word)
    }
  })

  it("ignores an unknown filter name (200, the same board as without it)", async () => {
    const plain = await discover({ chains: allChains, newPairs: { limit: 50 } })
    const withUnknown = await discover({ chains: allChains, newPairs: { limit: 50, filters: { notAFilter: { min: 1 }, shinyness: "high" } } })
    expect(withUnknown).toEqual(plain)
  })

  describe("refusals", () => {
    const refuse = async (body: unknown, code: string, fields: ReadonlyArray<string>) =>
      expectError(await api.post("/v1/discovery", body), 400, code, fields)

    it("answers 400 VALIDATION_ERROR on body.chains for an empty chains list", async () => {
      await refuse({ chains: [], newPairs: {} }, "VALIDATION_ERROR", ["body.chains"])
    })

    it("answers 400 VALIDATION_ERROR on body.chains when chains is missing or not a list", async () => {
      await refuse({ newPairs: {} }, "VALIDATION_ERROR", ["body.chains"])
      await refuse({ chains: "solana", newPairs: {} }, "VALIDATION_ERROR", ["body.chains"])
    })

    it("answers 400 UNSUPPORTED_CHAIN on body.chains for an unsupported slug", async () => {
      await refuse({ chains: ["solana", "ethereum"], newPairs: {} }, "UNSUPPORTED_CHAIN", ["body.chains"])
      await refuse({ chains: ["solana "], newPairs: {} }, "UNSUPPORTED_CHAIN", ["body.chains"])
    })

    it("answers 400 VALIDATION_ERROR on body.chains for an empty slug, saying so", async () => {
      const reply = await api.post("/v1/discovery", { chains: ["solana", ""], newPairs: {} })
      expectError(reply, 400, "VALIDATION_ERROR", ["body.chains"], true)
      expect(reply.body.error.details).toEqual([{ field: "body.chains", message: "chains has an empty slug: each entry one of solana, base, bsc, robinhood, arc" }])
    })

    it("answers 400 VALIDATION_ERROR when no column is named (omitted or all null)", async () => {
      await refuse({ chains: allChains }, "VALIDATION_ERROR", ["body"])
      await refuse({ chains: allChains, newPairs: null, graduating: null, graduated: null }, "VALIDATION_ERROR", ["body"])
    })

    it("answers 400 VALIDATION_ERROR on body for a body that is not JSON, or not a JSON object", async () => {
      for (const body of ["{chains: [solana]", "", "not json"]) {
        await refuse(body, "VALIDATION_ERROR", ["body"])
      }
      for (const body of ["[]", "42", "null"]) {
        expectError(await api.post("/v1/discovery", body), 400, "VALIDATION_ERROR")
      }
    })

    it("answers 400 VALIDATION_ERROR naming each range whose min exceeds its max", async () => {
      await refuse(
        {
          chains: allChains,
          newPairs: { filters: { ageMinutes: { min: 10, max: 5 } } },
          graduated: { filters: { marketCapUsd: { min: "10", max: "9.5" }, bondingCurvePercent: { min: 50.5, max: 50.25 } } }
        },
        "VALIDATION_ERROR",
        ["body.newPairs.filters.ageMinutes", "body.graduated.filters.marketCapUsd", "body.graduated.filters.bondingCurvePercent"]
      )
    })

    it("accepts a range whose min equals its max", async () => {
      expect((await api.post("/v1/discovery", { chains: allChains, newPairs: { filters: { ageMinutes: { min: 3, max: 3 } } } })).status).toBe(200)
    })

    it("answers 400 VALIDATION_ERROR on the field for an unknown sortBy or order, or a mistyped filter", async () => {
      await refuse({ chains: allChains, newPairs: { sortBy: "hype" } }, "VALIDATION_ERROR", ["body.newPairs.sortBy"])
      await refuse({ chains: allChains, newPairs: { order: "up" } }, "VALIDATION_ERROR", ["body.newPairs.order"])
      await refuse({ chains: allChains, newPairs: { filters: { holderCount: { min: -1 } } } }, "VALIDATION_ERROR", ["body.newPairs.filters.holderCount.min"])
      await refuse({ chains: allChains, newPairs: { filters: { marketCapUsd: { min: 5 } } } }, "VALIDATION_ERROR", ["body.newPairs.filters.marketCapUsd.min"])
    })

    it("answers 400 VALIDATION_ERROR for a list filter of more than 100 entries or an entry of more than 256 characters; 100 and 256 pass", async () => {
      const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`)
      for (const filter of ["symbolOrName", "excludeSymbolOrName", "anchorSymbols", "protocols", "excludeTwitter", "excludeWebsites", "excludeDevAddresses", "excludeFundingAddresses"]) {
        const response = await api.post("/v1/discovery", { chains: allChains, graduated: { filters: { [filter]: words(101) } } })
        const details = expectError(response, 400, "VALIDATION_ERROR", [`body.graduated.filters.${filter}`])
        expect(details[0]!.message).toBe("must be a list of at most 100 strings")
      }
      const tooLong = await api.post("/v1/discovery", { chains: allChains, newPairs: { filters: { symbolOrName: ["a", "x".repeat(257)] } } })
      const details = expectError(tooLong, 400, "VALIDATION_ERROR", ["body.newPairs.filters.symbolOrName[1]"])
      expect(details[0]!.message).toBe("must be a string of at most 256 characters")
      const atLimits = await api.post("/v1/discovery", { chains: allChains, newPairs: { filters: { symbolOrName: [...words(99), "x".repeat(256)] } } })
      expect(atLimits.status).toBe(200)
    })

    it("answers 400 VALIDATION_ERROR on an unknown top-level body field", async () => {
      await refuse({ chains: allChains, newPairs: {}, trending: {} }, "VALIDATION_ERROR", ["body.trending"])
    })

    it("answers 400 VALIDATION_ERROR naming a query parameter (the endpoint has none), as every read does", async () => {
      expectError(await api.post("/v1/discovery?limit=5", { chains: allChains, newPairs: {} }), 400, "VALIDATION_ERROR", ["limit"], true)
    })
  })
})
