/**
 * Discovery test data: candidates drawn from small pools so that ties, boundary values, case
 * variants and filter hits are common. Social links come from pools whose normalized handle/host
 * is known, so the tests check the filters without re-implementing the normalizers.
 */
import * as fc from "fast-check"
import { chains } from "../../src/Chain.js"
import type { DiscoveryCandidate } from "../../src/discovery/Discovery.js"
import type { DiscoveryFilterValues } from "../../src/discovery/DiscoveryFilters.js"
import * as Fixed from "../../src/Fixed.js"

export const NOW = 1_800_000_000_000
export const MINUTE = 60_000

export const evmAddresses = [
  "0x1111111111111111111111111111111111111111",
  "0xAbCdEf0000000000000000000000000000000001",
  "0xabcdef0000000000000000000000000000000001",
  "0x2222222222222222222222222222222222222222"
] as const
export const solanaAddresses = [
  "So11111111111111111111111111111111111111112",
  "7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr",
  "7gcihgdb8fe6knjn2mytkzzcrjqy3t9ghdc8uhymw2hr"
] as const
export const addressPool = [...evmAddresses, ...solanaAddresses]

/** Two candidates are the same wallet when their addresses match, ignoring case for EVM only. */
export const sameAddress = (a: string, b: string): boolean =>
  a.startsWith("0x") || a.startsWith("0X") ? a.toLowerCase() === b.toLowerCase() : a === b

export const wordPool = ["Pepe", "DOG", "wif", "moon", "Cat", "pepe", "AI", "x"] as const
export const launchpads = ["pump.fun", "Pump.Fun", "clanker", "four.meme", "bonk"] as const
export const anchors = ["SOL", "sol", "USDC", "WETH"] as const

/** Twitter link spellings and the handle each names. */
export const twitterHandles: ReadonlyMap<string, string> = new Map([
  ["https://x.com/Foo", "foo"],
  ["https://twitter.com/foo/status/123", "foo"],
  ["@foo", "foo"],
  ["foo", "foo"],
  ["http://www.twitter.com/BAR?s=20", "bar"],
  ["bar", "bar"],
  ["x.com/baz/", "baz"],
  ["https://x.com/i/communities/42", "i/communities/42"]
])
/** Website spellings and the host each names. */
export const websiteHosts: ReadonlyMap<string, string> = new Map([
  ["https://www.Example.com/path?x=1", "example.com"],
  ["example.com", "example.com"],
  ["http://example.com:8080", "example.com"],
  ["https://pump.fun/coin/abc", "pump.fun"],
  ["www.pump.fun", "pump.fun"],
  ["https://app.pump.fun", "app.pump.fun"]
])

const pct = (hundredths: number): Fixed.Fixed => BigInt(hundredths) * 10n ** 16n

/** Percentages in hundredths, with the column and exemption thresholds well represented. */
const percentHundredths = fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom(0, 3_999, 4_000, 9_949, 9_950, 10_000))
const percent = percentHundredths.map(pct)
/** Moments around NOW, often on whole minutes, sometimes a millisecond off, often shared (ties). */
const momentAgo = fc.oneof(
  fc
    .tuple(fc.integer({ min: -2, max: 600 }), fc.constantFrom(0, 0, 1, -1, 30_000))
    .map(([minutes, offset]) => NOW - minutes * MINUTE + offset),
  fc.constantFrom(NOW - 10 * MINUTE, NOW - 60 * MINUTE)
)
const money = fc.integer({ min: 0, max: 2_000 }).map((tenths) => BigInt(tenths) * 10n ** 17n)
const count = fc.integer({ min: 0, max: 60 })
const name = fc.array(fc.constantFrom(...wordPool), { minLength: 1, maxLength: 2 }).map((words) => words.join(" "))

const link = (pool: ReadonlyArray<string>) => fc.oneof(fc.constant(null), fc.constant(""), fc.constantFrom(...pool))

export const candidateArbitrary: fc.Arbitrary<DiscoveryCandidate> = fc.record({
  chain: fc.constantFrom(...chains),
  address: fc.oneof(fc.constantFrom(...addressPool), fc.integer({ min: 0, max: 500 }).map((n) => `Tok${n}`)),
  name,
  symbol: fc.constantFrom(...wordPool).map((w) => w.toUpperCase()),
  creator: fc.constantFrom(...addressPool),
  creatorFunder: fc.option(fc.constantFrom(...addressPool), { nil: null }),
  launchpad: fc.option(fc.constantFrom(...launchpads), { nil: null, freq: 8 }),
  annotations: fc.subarray(["mayhem_mode", "other"]),
  createdAt: momentAgo,
  updatedAt: momentAgo,
  graduatedAt: fc.option(momentAgo, { nil: null, freq: 2 }),
  bondingCurvePct: fc.option(percent, { nil: null, freq: 5 }),
  // points gained over the hour before the read: a gain that fades as the read moves later
  bondingCurveActivity: fc.tuple(fc.integer({ min: -5, max: 5 }), momentAgo).map(([points, at]) => (now: number) => (now - at < 3_600_000 ? points : 0)),
  anchorSymbol: fc.option(fc.constantFrom(...anchors), { nil: null }),
  volume24hUsd: money,
  marketCapUsd: money,
  liquidityUsd: money,
  holdersCount: count,
  buys24h: count,
  sells24h: count,
  devHoldingPct: percent,
  snipersPct: percent,
  top10Pct: percent,
  globalFeesPaidUsd: money,
  twitter: link([...twitterHandles.keys()]),
  website: link([...websiteHosts.keys()]),
  telegram: fc.option(fc.constant("https://t.me/x"), { nil: null }),
  discord: fc.option(fc.constant("https://discord.gg/x"), { nil: null })
})

/** A candidate set keyed by chain + address, as the engine holds it. */
export const candidatesArbitrary = fc.uniqueArray(candidateArbitrary, {
  selector: (c) => `${c.chain}:${c.address}`,
  minLength: 10,
  maxLength: 80
})

const range = <A>(bound: fc.Arbitrary<A>) => fc.record({ min: bound, max: bound }, { requiredKeys: [] })
const countRange = range(fc.integer({ min: 0, max: 60 }))
const minutesRange = range(fc.integer({ min: 0, max: 610 }))
/** Percent bounds are JSON numbers with two decimals, such as 39.99 or 99.5. */
const percentRange = range(percentHundredths.map((h) => h / 100))
const decimalRange = range(money.map(Fixed.format))

const everyFilter = fc.record({
    ageMinutes: minutesRange,
    anchorSymbols: fc.array(fc.constantFrom(...anchors, " usdc ", "BNB"), { maxLength: 2 }),
    bondingCurvePercent: percentRange,
    buys: countRange,
    sells: countRange,
    txns: range(fc.integer({ min: 0, max: 120 })),
    devHoldingPercent: percentRange,
    snipersSupplyPercent: percentRange,
    top10HoldersPercent: percentRange,
    excludeDevAddresses: fc.array(fc.constantFrom(...addressPool), { maxLength: 2 }),
    excludeFundingAddresses: fc.array(fc.constantFrom(...addressPool), { maxLength: 2 }),
    excludeSymbolOrName: fc.array(fc.constantFrom(...wordPool, "", "  "), { maxLength: 2 }),
    excludeTwitter: fc.array(fc.constantFrom(...twitterHandles.keys()), { maxLength: 2 }),
    excludeWebsites: fc.array(fc.constantFrom(...websiteHosts.keys()), { maxLength: 2 }),
    globalFeesPaidUsd: decimalRange,
    holderCount: countRange,
    lastActivityMinutes: fc.integer({ min: 0, max: 610 }),
    liquidityUsd: decimalRange,
    marketCapUsd: decimalRange,
    volumeUsd: decimalRange,
    maxGraduationStaleMinutes: fc.integer({ min: 0, max: 610 }),
    protocols: fc.array(fc.constantFrom(...launchpads, "mayhem_mode", "MAYHEM_MODE", "zora"), { maxLength: 2 }),
    symbolOrName: fc.array(fc.constantFrom(...wordPool, ...addressPool, " "), { maxLength: 2 }),
    twitterReuseCount: countRange,
    withAtLeastOneSocial: fc.boolean()
  })

/** A few filters at a time (up to `most`), so that boards are rarely empty. */
export const filtersArbitrary = (most = 3): fc.Arbitrary<DiscoveryFilterValues> =>
  fc
    .tuple(everyFilter, fc.array(fc.nat(), { maxLength: most }))
    .map(([all, picks]) => {
      const names = Object.keys(all) as Array<keyof typeof all>
      const chosen: Record<string, unknown> = {}
      for (const pick of picks) {
        const key = names[pick % names.length]!
        chosen[key] = all[key]
      }
      return chosen as DiscoveryFilterValues
    })
