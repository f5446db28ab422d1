import { describe, expect, it } from "@effect/vitest"
import {
  clampLimit,
  type ColumnConfigValues,
  type ColumnRequest,
  columnOf,
  defaultColumnRequest,
  type DiscoveryCandidate,
  type DiscoveryFilterValues,
  rankColumn,
  resolveColumnRequest
} from "../../src/discovery/Discovery.js"
import { fixedFromJsonNumber, twitterHandleOf, websiteHostOf } from "../../src/discovery/DiscoveryFilters.js"
import * as Fixed from "../../src/Fixed.js"
import type {
  ColumnConfig as WireColumnConfig,
  DiscoveryFilters as WireDiscoveryFilters,
  DiscoverySortBy as WireSortBy
} from "../../src/wire/Discovery.js"
import { MINUTE, NOW } from "./arbitraries.js"

// The decoded wire objects must be accepted as they are (checked by the type checker).
const wireFiltersFit = (filters: WireDiscoveryFilters): DiscoveryFilterValues => filters
const wireConfigFits = (config: WireColumnConfig): ColumnConfigValues => config
const sortByMatches = (sortBy: WireSortBy): ColumnRequest["sortBy"] => sortBy
void [wireFiltersFit, wireConfigFits, sortByMatches]

const pct = (text: string): Fixed.Fixed => Fixed.unsafeParse(text)
const usd = (text: string): Fixed.Fixed => Fixed.unsafeParse(text)

let serial = 0
const candidate = (overrides: Partial<DiscoveryCandidate> = {}): DiscoveryCandidate => ({
  chain: "solana",
  address: `Token${serial++}`,
  name: "Plain Token",
  symbol: "PLAIN",
  creator: "Creator1111111111111111111111111111111111111",
  creatorFunder: null,
  launchpad: "pump.fun",
  annotations: [],
  createdAt: NOW - 5 * MINUTE,
  updatedAt: NOW - MINUTE,
  graduatedAt: null,
  bondingCurvePct: pct("10"),
  bondingCurveActivity: () => 0,
  anchorSymbol: "SOL",
  volume24hUsd: usd("1000"),
  marketCapUsd: usd("5000"),
  liquidityUsd: usd("2000"),
  holdersCount: 10,
  buys24h: 5,
  sells24h: 3,
  devHoldingPct: pct("5"),
  snipersPct: pct("2"),
  top10Pct: pct("30"),
  globalFeesPaidUsd: usd("12.5"),
  twitter: null,
  website: null,
  telegram: null,
  discord: null,
  ...overrides
})

/** The addresses the newPairs board keeps under `filters`. */
const kept = (candidates: ReadonlyArray<DiscoveryCandidate>, filters: DiscoveryFilterValues): Array<string> =>
  rankColumn(candidates, "newPairs", { ...defaultColumnRequest("newPairs"), limit: 100, filters }, NOW).map((c) => c.address)

/** Whether the one candidate passes `filters`. */
const passes = (overrides: Partial<DiscoveryCandidate>, filters: DiscoveryFilterValues): boolean =>
  kept([candidate(overrides)], filters).length === 1

describe("column membership", () => {
  it("follows the spec's table", () => {
    expect(columnOf(candidate({ bondingCurvePct: pct("39.999999") }))).toBe("newPairs")
    expect(columnOf(candidate({ bondingCurvePct: pct("40") }))).toBe("graduating")
    expect(columnOf(candidate({ bondingCurvePct: pct("100") }))).toBe("graduating")
    expect(columnOf(candidate({ bondingCurvePct: pct("100"), graduatedAt: NOW }))).toBe("graduated")
    expect(columnOf(candidate({ bondingCurvePct: pct("12"), graduatedAt: NOW }))).toBe("graduated")
    expect(columnOf(candidate({ bondingCurvePct: null, launchpad: "clanker" }))).toBe("graduated")
  })

  it("leaves out tokens without a launchpad", () => {
    expect(columnOf(candidate({ launchpad: null }))).toBeNull()
    expect(columnOf(candidate({ launchpad: null, bondingCurvePct: null }))).toBeNull()
  })
})

describe("column requests", () => {
  it("defaults: newPairs by createdAt, graduating by bondingCurvePct, graduated by graduatedAt; desc; 20", () => {
    expect(defaultColumnRequest("newPairs")).toEqual({ sortBy: "createdAt", order: "desc", limit: 20, filters: {} })
    expect(defaultColumnRequest("graduating").sortBy).toBe("bondingCurvePct")
    expect(defaultColumnRequest("graduated").sortBy).toBe("graduatedAt")
    expect(resolveColumnRequest("graduating", {})).toEqual(defaultColumnRequest("graduating"))
    expect(resolveColumnRequest("graduated", { order: "asc", limit: 1000, filters: { buys: { min: 1 } } })).toEqual({
      sortBy: "graduatedAt",
      order: "asc",
      limit: 100,
      filters: { buys: { min: 1 } }
    })
  })

  it("clamps the limit to 1-100 and never refuses it", () => {
    expect(clampLimit(0)).toBe(1)
    expect(clampLimit(-7)).toBe(1)
    expect(clampLimit(1000)).toBe(100)
    expect(clampLimit(100)).toBe(100)
    expect(clampLimit(undefined)).toBe(20)
    expect(clampLimit(Number.NaN)).toBe(20)
    expect(clampLimit(7.9)).toBe(7)
  })

  it("rankColumn clamps a limit given unclamped", () => {
    const many = Array.from({ length: 150 }, () => candidate())
    const request: ColumnRequest = { ...defaultColumnRequest("newPairs"), limit: 1000 }
    expect(rankColumn(many, "newPairs", request, NOW)).toHaveLength(100)
    expect(rankColumn(many, "newPairs", { ...request, limit: 0 }, NOW)).toHaveLength(1)
  })
})

describe("ranking order", () => {
  it("sorts on the field in the requested direction", () => {
    const small = candidate({ volume24hUsd: usd("1") })
    const big = candidate({ volume24hUsd: usd("1000000.5") })
    const request = { ...defaultColumnRequest("newPairs"), sortBy: "volume24hUsd" as const }
    expect(rankColumn([small, big], "newPairs", request, NOW)).toEqual([big, small])
    expect(rankColumn([small, big], "newPairs", { ...request, order: "asc" }, NOW)).toEqual([small, big])
  })

  it("breaks ties by newer launch, then chain, then address, whatever the direction", () => {
    const older = candidate({ address: "A", createdAt: NOW - 9 * MINUTE })
    const solanaB = candidate({ address: "B", chain: "solana" })
    const baseC = candidate({ address: "C", chain: "base" })
    const baseA = candidate({ address: "A", chain: "base" })
    const all = [older, solanaB, baseC, baseA]
    for (const order of ["asc", "desc"] as const) {
      const request: ColumnRequest = { sortBy: "holdersCount", order, limit: 10, filters: {} }
      expect(rankColumn(all, "newPairs", request, NOW)).toEqual([baseA, baseC, solanaB, older])
    }
  })

  it("ranks tradeCount24h on buys plus sells", () => {
    const a = candidate({ buys24h: 10, sells24h: 0 })
    const b = candidate({ buys24h: 4, sells24h: 7 })
    expect(rankColumn([a, b], "newPairs", { sortBy: "tradeCount24h", order: "desc", limit: 5, filters: {} }, NOW)).toEqual([b, a])
  })

  it("puts a missing bondingCurvePct last in either direction", () => {
    const noCurve = candidate({ launchpad: "clanker", bondingCurvePct: null, graduatedAt: null })
    const full = candidate({ bondingCurvePct: pct("100"), graduatedAt: NOW - MINUTE })
    const half = candidate({ bondingCurvePct: pct("50"), graduatedAt: NOW - MINUTE })
    for (const order of ["asc", "desc"] as const) {
      const board = rankColumn([noCurve, full, half], "graduated", { sortBy: "bondingCurvePct", order, limit: 5, filters: {} }, NOW)
      expect(board[2]).toBe(noCurve)
    }
  })

  it("ranks a curve-less token in graduatedAt order by its creation time", () => {
    const graduatedLongAgo = candidate({ bondingCurvePct: pct("100"), graduatedAt: NOW - 60 * MINUTE })
    const clankerJustNow = candidate({ launchpad: "clanker", bondingCurvePct: null, createdAt: NOW - MINUTE })
    const graduatedRecently = candidate({ bondingCurvePct: pct("100"), graduatedAt: NOW - 2 * MINUTE })
    expect(
      rankColumn([graduatedLongAgo, clankerJustNow, graduatedRecently], "graduated", defaultColumnRequest("graduated"), NOW)
    ).toEqual([clankerJustNow, graduatedRecently, graduatedLongAgo])
  })

  it("ranks bondingCurveActivity as given, losses below gains", () => {
    const falling = candidate({ bondingCurveActivity: () => -3 })
    const rising = candidate({ bondingCurveActivity: (now) => (now === NOW ? 12.5 : 0) })
    const flat = candidate({ bondingCurveActivity: () => 0 })
    const board = rankColumn([falling, rising, flat], "newPairs", { sortBy: "bondingCurveActivity", order: "desc", limit: 5, filters: {} }, NOW)
    expect(board).toEqual([rising, flat, falling])
  })
})

describe("filters, one by one", () => {
  it("ageMinutes: whole minutes since creation at `now`, inclusive", () => {
    const filters = { ageMinutes: { min: 5, max: 10 } }
    expect(passes({ createdAt: NOW - 5 * MINUTE }, filters)).toBe(true)
    expect(passes({ createdAt: NOW - 10 * MINUTE }, filters)).toBe(true)
    expect(passes({ createdAt: NOW - 5 * MINUTE + 1 }, filters)).toBe(false) // 4 min 59.999 s: 4 minutes
    expect(passes({ createdAt: NOW - 11 * MINUTE + 1 }, filters)).toBe(true) // 10 min 59.999 s: 10 minutes
    expect(passes({ createdAt: NOW - 11 * MINUTE }, filters)).toBe(false)
    // {max: 10} and {min: 11} split tokens between them, none left out
    for (const age of [10 * MINUTE, 10 * MINUTE + 20_000, 11 * MINUTE - 1, 11 * MINUTE]) {
      const lower = passes({ createdAt: NOW - age }, { ageMinutes: { max: 10 } })
      const upper = passes({ createdAt: NOW - age }, { ageMinutes: { min: 11 } })
      expect(lower !== upper, String(age)).toBe(true)
    }
    // A creation time ahead of the clock counts as age 0.
    expect(passes({ createdAt: NOW + MINUTE }, { ageMinutes: { max: 0 } })).toBe(true)
  })

  it("anchorSymbols: the deepest pool's quote symbol, ignoring case", () => {
    expect(passes({ anchorSymbol: "SOL" }, { anchorSymbols: ["sol", "USDC"] })).toBe(true)
    expect(passes({ anchorSymbol: "WETH" }, { anchorSymbols: ["sol"] })).toBe(false)
    expect(passes({ anchorSymbol: null }, { anchorSymbols: ["sol"] })).toBe(false)
    expect(passes({ anchorSymbol: null }, { anchorSymbols: [] })).toBe(true)
  })

  it("bondingCurvePercent: exact decimal comparison; no curve reading fails", () => {
    expect(passes({ bondingCurvePct: pct("0.07") }, { bondingCurvePercent: { min: 0.07 } })).toBe(true)
    expect(passes({ bondingCurvePct: pct("0.07") }, { bondingCurvePercent: { max: 0.07 } })).toBe(true)
    expect(passes({ bondingCurvePct: pct("0.070000000000000001") }, { bondingCurvePercent: { max: 0.07 } })).toBe(false)
    expect(passes({ bondingCurvePct: pct("20") }, { bondingCurvePercent: { min: 20.5 } })).toBe(false)
    const noCurve = candidate({ launchpad: "clanker", bondingCurvePct: null })
    expect(rankColumn([noCurve], "graduated", { ...defaultColumnRequest("graduated"), filters: { bondingCurvePercent: { min: 0 } } }, NOW)).toEqual([])
    expect(rankColumn([noCurve], "graduated", { ...defaultColumnRequest("graduated"), filters: { bondingCurvePercent: {} } }, NOW)).toEqual([noCurve])
  })

  it("buys, sells and txns: 24-hour counts, txns being buys plus sells", () => {
    const c = { buys24h: 5, sells24h: 3 }
    expect(passes(c, { buys: { min: 5, max: 5 } })).toBe(true)
    expect(passes(c, { buys: { min: 6 } })).toBe(false)
    expect(passes(c, { sells: { max: 2 } })).toBe(false)
    expect(passes(c, { sells: { max: 3 } })).toBe(true)
    expect(passes(c, { txns: { min: 8, max: 8 } })).toBe(true)
    expect(passes(c, { txns: { min: 9 } })).toBe(false)
  })

  it("devHoldingPercent, snipersSupplyPercent, top10HoldersPercent", () => {
    const c = { devHoldingPct: pct("5"), snipersPct: pct("2.5"), top10Pct: pct("30") }
    expect(passes(c, { devHoldingPercent: { max: 5 } })).toBe(true)
    expect(passes(c, { devHoldingPercent: { max: 4.99 } })).toBe(false)
    expect(passes(c, { snipersSupplyPercent: { min: 2.5, max: 2.5 } })).toBe(true)
    expect(passes(c, { snipersSupplyPercent: { max: 2.4 } })).toBe(false)
    expect(passes(c, { top10HoldersPercent: { min: 30.01 } })).toBe(false)
    expect(passes(c, { top10HoldersPercent: { min: 0, max: 100 } })).toBe(true)
  })

  it("excludeDevAddresses: by creator; EVM addresses ignore case, Solana addresses do not", () => {
    expect(passes({ creator: "0xabcdef0000000000000000000000000000000001" }, { excludeDevAddresses: ["0xABCDEF0000000000000000000000000000000001"] })).toBe(false)
    expect(passes({ creator: "7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr" }, { excludeDevAddresses: ["7gcihgdb8fe6knjn2mytkzzcrjqy3t9ghdc8uhymw2hr"] })).toBe(true)
    expect(passes({ creator: "7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr" }, { excludeDevAddresses: ["7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr"] })).toBe(false)
  })

  it("excludeFundingAddresses: by the creator's funder; an unknown funder is kept", () => {
    expect(passes({ creatorFunder: "Funder1" }, { excludeFundingAddresses: ["Funder1"] })).toBe(false)
    expect(passes({ creatorFunder: "Funder2" }, { excludeFundingAddresses: ["Funder1"] })).toBe(true)
    expect(passes({ creatorFunder: null }, { excludeFundingAddresses: ["Funder1"] })).toBe(true)
  })

  it("excludeSymbolOrName: a word contained in symbol or name, ignoring case; blank words ignored", () => {
    const c = { symbol: "PEPE2", name: "Pepe The Frog" }
    expect(passes(c, { excludeSymbolOrName: ["pepe"] })).toBe(false)
    expect(passes(c, { excludeSymbolOrName: ["FROG"] })).toBe(false)
    expect(passes(c, { excludeSymbolOrName: ["dog", ""] })).toBe(true)
    expect(passes(c, { excludeSymbolOrName: ["  "] })).toBe(true)
  })

  it("excludeTwitter: handle or URL, any spelling", () => {
    for (const entry of ["foo", "@Foo", "https://x.com/foo", "twitter.com/FOO", "https://www.twitter.com/foo/status/1?s=20"]) {
      expect(passes({ twitter: "https://x.com/Foo" }, { excludeTwitter: [entry] })).toBe(false)
      expect(passes({ twitter: "@foo" }, { excludeTwitter: [entry] })).toBe(false)
    }
    expect(passes({ twitter: "https://x.com/foobar" }, { excludeTwitter: ["foo"] })).toBe(true)
    expect(passes({ twitter: "https://x.com/i/communities/42" }, { excludeTwitter: ["i"] })).toBe(true)
    expect(passes({ twitter: "https://x.com/i/communities/42" }, { excludeTwitter: ["x.com/i/communities/42/"] })).toBe(false)
    expect(passes({ twitter: null }, { excludeTwitter: ["foo"] })).toBe(true)
  })

  it("excludeWebsites: host match, URL or bare domain, without www., ignoring case", () => {
    for (const entry of ["example.com", "https://www.EXAMPLE.com/", "http://example.com:8080/x", "www.example.com"]) {
      expect(passes({ website: "https://www.example.com/launch?ref=1" }, { excludeWebsites: [entry] })).toBe(false)
    }
    expect(passes({ website: "https://app.example.com" }, { excludeWebsites: ["example.com"] })).toBe(true)
    expect(passes({ website: "https://example.co" }, { excludeWebsites: ["example.com"] })).toBe(true)
    expect(passes({ website: null }, { excludeWebsites: ["example.com"] })).toBe(true)
  })

  it("globalFeesPaidUsd, liquidityUsd, marketCapUsd, volumeUsd: exact decimal ranges", () => {
    const c = { globalFeesPaidUsd: usd("12.5"), liquidityUsd: usd("2000"), marketCapUsd: usd("5000"), volumeUsd: usd("1000") }
    expect(passes(c, { globalFeesPaidUsd: { min: "12.5", max: "12.50" } })).toBe(true)
    expect(passes(c, { globalFeesPaidUsd: { min: "12.500000000000000001" } })).toBe(false)
    expect(passes(c, { liquidityUsd: { max: "1999.99" } })).toBe(false)
    expect(passes(c, { marketCapUsd: { min: "5000", max: "10000" } })).toBe(true)
    expect(passes({ volume24hUsd: usd("1000") }, { volumeUsd: { min: "1000.01" } })).toBe(false)
    expect(passes({ volume24hUsd: usd("1000") }, { volumeUsd: { min: "999" } })).toBe(true)
  })

  it("holderCount", () => {
    expect(passes({ holdersCount: 10 }, { holderCount: { min: 10, max: 10 } })).toBe(true)
    expect(passes({ holdersCount: 10 }, { holderCount: { min: 11 } })).toBe(false)
  })

  it("lastActivityMinutes: updated within N minutes, inclusive", () => {
    expect(passes({ updatedAt: NOW - 3 * MINUTE }, { lastActivityMinutes: 3 })).toBe(true)
    expect(passes({ updatedAt: NOW - 3 * MINUTE - 1 }, { lastActivityMinutes: 3 })).toBe(false)
    expect(passes({ updatedAt: NOW }, { lastActivityMinutes: 0 })).toBe(true)
  })

  it("maxGraduationStaleMinutes: drops stale tokens unless at 99.5% of curve or more", () => {
    const stale = { updatedAt: NOW - 30 * MINUTE }
    expect(passes({ ...stale, bondingCurvePct: pct("10") }, { maxGraduationStaleMinutes: 29 })).toBe(false)
    expect(passes({ ...stale, bondingCurvePct: pct("10") }, { maxGraduationStaleMinutes: 30 })).toBe(true)
    const nearlyDone = candidate({ ...stale, bondingCurvePct: pct("99.5") })
    const justBelow = candidate({ ...stale, bondingCurvePct: pct("99.49") })
    const board = rankColumn([nearlyDone, justBelow], "graduating", { ...defaultColumnRequest("graduating"), filters: { maxGraduationStaleMinutes: 5 } }, NOW)
    expect(board).toEqual([nearlyDone])
  })

  it("protocols: launchpad names ignoring case; mayhem_mode keeps mayhem-mode tokens", () => {
    expect(passes({ launchpad: "pump.fun" }, { protocols: ["PUMP.FUN"] })).toBe(true)
    expect(passes({ launchpad: "bonk" }, { protocols: ["pump.fun"] })).toBe(false)
    expect(passes({ launchpad: "bonk", annotations: ["mayhem_mode"] }, { protocols: ["mayhem_mode"] })).toBe(true)
    expect(passes({ launchpad: "bonk", annotations: [] }, { protocols: ["mayhem_mode"] })).toBe(false)
    expect(passes({ launchpad: "bonk" }, { protocols: [] })).toBe(true)
  })

  it("symbolOrName: any word contained, ignoring case; an address-shaped word matches the address exactly", () => {
    const c = { symbol: "WIF", name: "dogwifhat", address: "7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr" }
    expect(passes(c, { symbolOrName: ["Hat"] })).toBe(true)
    expect(passes(c, { symbolOrName: ["cat", "wif"] })).toBe(true)
    expect(passes(c, { symbolOrName: ["cat"] })).toBe(false)
    expect(passes(c, { symbolOrName: ["7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr"] })).toBe(true)
    expect(passes(c, { symbolOrName: ["7gcihgdb8fe6knjn2mytkzzcrjqy3t9ghdc8uhymw2hr"] })).toBe(false)
    const evm = { chain: "base" as const, address: "0xabcdef0000000000000000000000000000000001" }
    expect(passes(evm, { symbolOrName: ["0xABCDEF0000000000000000000000000000000001"] })).toBe(true)
    // An address-shaped word is not also searched in the name.
    expect(passes({ name: "So11111111111111111111111111111111111111112 fan" }, { symbolOrName: ["So11111111111111111111111111111111111111112"] })).toBe(false)
  })

  it("ignoring case folds the Turkic i's together and composes a query term first", () => {
    const turkish = { symbol: "ŞİŞ", name: "IŞIK coin" }
    // "İ" lower-cases to "i" + U+0307 and "ı" stays apart from "i": plain toLowerCase finds neither.
    for (const word of ["şiş", "ŞİŞ", "ŞIŞ", "şış", "ışık", "IŞIK", "işik"]) {
      expect(passes(turkish, { symbolOrName: [word] })).toBe(true)
      expect(passes(turkish, { excludeSymbolOrName: [word] })).toBe(false)
    }
    expect(passes(turkish, { symbolOrName: ["sis"] })).toBe(false)
    // a query spelled decomposed ("e" + U+0301) finds the stored composed "é", in any case
    expect(passes({ symbol: "ÉCOLE", name: "x" }, { symbolOrName: ["e\u0301cole"] })).toBe(true)
    expect(passes({ launchpad: "Bİst" }, { protocols: ["BIST"] })).toBe(true)
    expect(passes({ anchorSymbol: "İUSD" }, { anchorSymbols: ["iusd"] })).toBe(true)
  })

  it("twitterReuseCount: every token passes", () => {
    expect(passes({}, { twitterReuseCount: { min: 5, max: 1 } })).toBe(true)
  })

  it("withAtLeastOneSocial: true needs one of twitter, website, telegram, discord; false keeps all", () => {
    expect(passes({}, { withAtLeastOneSocial: true })).toBe(false)
    expect(passes({ twitter: "  " }, { withAtLeastOneSocial: true })).toBe(false)
    expect(passes({ discord: "https://discord.gg/x" }, { withAtLeastOneSocial: true })).toBe(true)
    expect(passes({ telegram: "https://t.me/x" }, { withAtLeastOneSocial: true })).toBe(true)
    expect(passes({}, { withAtLeastOneSocial: false })).toBe(true)
  })

  it("an unknown filter name is ignored", () => {
    expect(passes({}, { notAFilter: 1 } as DiscoveryFilterValues)).toBe(true)
  })
})

describe("normalizers", () => {
  it("twitterHandleOf", () => {
    expect(twitterHandleOf("https://x.com/Foo")).toBe("foo")
    expect(twitterHandleOf("twitter.com/foo")).toBe("foo")
    expect(twitterHandleOf("https://mobile.twitter.com/foo/")).toBe("foo")
    expect(twitterHandleOf("@foo")).toBe("foo")
    expect(twitterHandleOf(" foo ")).toBe("foo")
    expect(twitterHandleOf("https://x.com/@foo?lang=en")).toBe("foo")
    expect(twitterHandleOf("")).toBe("")
  })

  it("websiteHostOf", () => {
    expect(websiteHostOf("https://www.Example.com/a/b?c#d")).toBe("example.com")
    expect(websiteHostOf("example.com")).toBe("example.com")
    expect(websiteHostOf("http://user@example.com:8080")).toBe("example.com")
    expect(websiteHostOf("example.com.")).toBe("example.com")
    expect(websiteHostOf("sub.example.com")).toBe("sub.example.com")
  })

  it("fixedFromJsonNumber keeps the decimal the client wrote", () => {
    expect(Fixed.format(fixedFromJsonNumber(0.07))).toBe("0.07")
    expect(Fixed.format(fixedFromJsonNumber(99.5))).toBe("99.5")
    expect(Fixed.format(fixedFromJsonNumber(1e-7))).toBe("0.0000001")
    expect(Fixed.format(fixedFromJsonNumber(1e21))).toBe("1000000000000000000000")
    expect(Fixed.format(fixedFromJsonNumber(-2.5))).toBe("-2.5")
  })
})
