/**
 * The filters of `POST /v1/discovery` (spec table "Filters"), compiled once per request into a form
 * that checks a candidate without parsing, lower-casing or allocating per filter value.
 * See docs/discovery.md for every decision the spec leaves open.
 */
import { foldCase, foldQuery } from "../CaseFold.js"
import { looksLikeAddress } from "../Chain.js"
import * as Fixed from "../Fixed.js"
import type { DiscoveryCandidate } from "./DiscoveryCandidate.js"

/** Inclusive range of integers >= 0; each bound optional. */
export interface CountRange {
  readonly min?: number
  readonly max?: number
}

/** Inclusive range of JSON numbers; each bound optional. */
export interface NumberRange {
  readonly min?: number
  readonly max?: number
}

/** Inclusive range of decimal strings; each bound optional. */
export interface DecimalRange {
  readonly min?: string
  readonly max?: string
}

/**
 * The decoded `filters` object of one column config. Structurally the same as the wire schema
 * `DiscoveryFilters` (packages/domain/src/wire/Discovery.ts), so a decoded request passes as is.
 */
export interface DiscoveryFilterValues {
  readonly ageMinutes?: CountRange
  readonly anchorSymbols?: ReadonlyArray<string>
  readonly bondingCurvePercent?: NumberRange
  readonly buys?: CountRange
  readonly sells?: CountRange
  readonly txns?: CountRange
  readonly devHoldingPercent?: NumberRange
  readonly snipersSupplyPercent?: NumberRange
  readonly top10HoldersPercent?: NumberRange
  readonly excludeDevAddresses?: ReadonlyArray<string>
  readonly excludeFundingAddresses?: ReadonlyArray<string>
  readonly excludeSymbolOrName?: ReadonlyArray<string>
  readonly excludeTwitter?: ReadonlyArray<string>
  readonly excludeWebsites?: ReadonlyArray<string>
  readonly globalFeesPaidUsd?: DecimalRange
  readonly holderCount?: CountRange
  readonly lastActivityMinutes?: number
  readonly liquidityUsd?: DecimalRange
  readonly marketCapUsd?: DecimalRange
  readonly volumeUsd?: DecimalRange
  readonly maxGraduationStaleMinutes?: number
  readonly protocols?: ReadonlyArray<string>
  readonly symbolOrName?: ReadonlyArray<string>
  readonly twitterReuseCount?: CountRange
  readonly withAtLeastOneSocial?: boolean
}

const MINUTE_MS = 60_000
/** `maxGraduationStaleMinutes` spares tokens at or above this share of their curve. */
export const GRADUATION_STALE_EXEMPT_PCT: Fixed.Fixed = Fixed.unsafeParse("99.5")

// ---------------------------------------------------------------------------------------------
// Normalizers, exported because the tests and the docs pin their behaviour.

/** A JSON number as the exact decimal it was written as (see `Fixed.fromNumber`). */
export const fixedFromJsonNumber = Fixed.fromNumber

/** EVM addresses compare case-insensitively (they are kept lower-case); Solana addresses exactly. */
export const addressKey = (address: string): string => {
  const trimmed = address.trim()
  return trimmed.startsWith("0x") || trimmed.startsWith("0X") ? trimmed.toLowerCase() : trimmed
}

const schemePattern = /^[a-z][a-z0-9+.-]*:\/\//
const twitterHostPattern = /^(?:www\.|mobile\.)?(?:x|twitter)\.com(?:\/|$)/

/**
 * The X handle a link or handle names, lower-case: `https://x.com/Foo`, `twitter.com/foo/status/1`,
 * `@foo` and `foo` all give `foo`. A link under `/i/` (communities, intents) names no handle and
 * keeps its whole path (`i/communities/123`), so it only matches the same link. "" when empty.
 */
export const twitterHandleOf = (text: string): string => {
  let s = text.trim().toLowerCase().replace(schemePattern, "")
  const host = twitterHostPattern.exec(s)
  if (host !== null) s = s.slice(host[0].length)
  s = s.replace(/^@/, "")
  const end = s.search(/[?#]/)
  if (end >= 0) s = s.slice(0, end)
  s = s.replace(/\/+$/, "")
  if (s.startsWith("i/")) return s
  const slash = s.indexOf("/")
  return slash >= 0 ? s.slice(0, slash) : s
}

/**
 * The host a URL or bare domain names, lower-case, without `www.`, port or trailing dot:
 * `https://www.Example.com/x?y` and `example.com` both give `example.com`. "" when empty.
 */
export const websiteHostOf = (text: string): string => {
  let s = text.trim().toLowerCase().replace(schemePattern, "")
  const end = s.search(/[/?#]/)
  if (end >= 0) s = s.slice(0, end)
  const at = s.lastIndexOf("@")
  if (at >= 0) s = s.slice(at + 1)
  s = s.replace(/:\d*$/, "").replace(/\.$/, "")
  return s.startsWith("www.") ? s.slice(4) : s
}

// ---------------------------------------------------------------------------------------------
// Compiled form

interface FixedBounds {
  readonly min: Fixed.Fixed | undefined
  readonly max: Fixed.Fixed | undefined
}

interface NumberBounds {
  readonly min: number | undefined
  readonly max: number | undefined
}

/** One request's filters, parsed and normalized once; see {@link compileFilters}. */
export interface CompiledFilters {
  readonly ageMs: NumberBounds | undefined
  readonly anchorSymbols: ReadonlySet<string> | undefined
  readonly bondingCurvePct: FixedBounds | undefined
  readonly buys: NumberBounds | undefined
  readonly sells: NumberBounds | undefined
  readonly txns: NumberBounds | undefined
  readonly devHoldingPct: FixedBounds | undefined
  readonly snipersPct: FixedBounds | undefined
  readonly top10Pct: FixedBounds | undefined
  readonly excludeCreators: ReadonlySet<string> | undefined
  readonly excludeFunders: ReadonlySet<string> | undefined
  readonly excludeWords: ReadonlyArray<string> | undefined
  readonly excludeTwitterHandles: ReadonlySet<string> | undefined
  readonly excludeWebsiteHosts: ReadonlySet<string> | undefined
  readonly globalFeesPaidUsd: FixedBounds | undefined
  readonly holderCount: NumberBounds | undefined
  readonly lastActivityMs: number | undefined
  readonly liquidityUsd: FixedBounds | undefined
  readonly marketCapUsd: FixedBounds | undefined
  readonly volumeUsd: FixedBounds | undefined
  readonly graduationStaleMs: number | undefined
  readonly protocols: ReadonlySet<string> | undefined
  readonly protocolsKeepMayhem: boolean
  readonly nameWords: ReadonlyArray<string> | undefined
  readonly nameAddresses: ReadonlySet<string> | undefined
  readonly withAtLeastOneSocial: boolean
}

const MAYHEM_MODE = "mayhem_mode"

const countBounds = (range: CountRange | undefined, unit = 1): NumberBounds | undefined =>
  range === undefined || (range.min === undefined && range.max === undefined)
    ? undefined
    : {
        min: range.min === undefined ? undefined : range.min * unit,
        max: range.max === undefined ? undefined : range.max * unit
      }

/**
 * Age in whole minutes (a token 10 min 20 s old is 10 minutes old), as bounds on the age in ms:
 * from `min` minutes on, up to the last ms before `max + 1` minutes. So `{max: 10}` and
 * `{min: 11}` split the tokens between them with none left out.
 */
const ageBounds = (range: CountRange | undefined): NumberBounds | undefined => {
  const bounds = countBounds(range, MINUTE_MS)
  if (bounds === undefined || bounds.max === undefined) return bounds
  return { min: bounds.min, max: bounds.max + MINUTE_MS - 1 }
}

/**
 * A percentage bound as a Fixed. An infinite bound (a literal past a double's range) is the
 * largest double of its sign: past every percentage just the same, so `max: 1e400` keeps every
 * token and `min: 1e400` none, as for counts.
 */
const percentBound = (bound: number | undefined) =>
  bound === undefined ? undefined : fixedFromJsonNumber(Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, bound)))

const percentBounds = (range: NumberRange | undefined): FixedBounds | undefined =>
  range === undefined || (range.min === undefined && range.max === undefined)
    ? undefined
    : { min: percentBound(range.min), max: percentBound(range.max) }

// A malformed bound cannot pass the wire schema; here it is read as absent rather than throwing.
const decimalBounds = (range: DecimalRange | undefined): FixedBounds | undefined => {
  if (range === undefined) return undefined
  const min = range.min === undefined ? undefined : Fixed.parse(range.min)
  const max = range.max === undefined ? undefined : Fixed.parse(range.max)
  return min === undefined && max === undefined ? undefined : { min, max }
}

/** Non-empty, trimmed, lower-cased entries; undefined when none remain (the filter is off). */
const normalizedList = (
  values: ReadonlyArray<string> | undefined,
  normalize: (value: string) => string
): Array<string> | undefined => {
  if (values === undefined) return undefined
  const out: Array<string> = []
  for (const value of values) {
    const normalized = normalize(value)
    if (normalized.length > 0) out.push(normalized)
  }
  return out.length === 0 ? undefined : out
}

/** A list entry compared ignoring case (`foldQuery`: composed, lower-cased, Turkic i's as "i"). */
const foldedTrimmed = (value: string): string => foldQuery(value.trim())

const setOf = (values: Array<string> | undefined): ReadonlySet<string> | undefined =>
  values === undefined ? undefined : new Set(values)

/**
 * Parses and normalizes `filters` once per request. A list that is absent, empty or holds only
 * blank entries switches its filter off; `twitterReuseCount` is accepted and ignored (the spec:
 * "not yet counted; every token passes").
 */
export const compileFilters = (filters: DiscoveryFilterValues): CompiledFilters => {
  const protocols = normalizedList(filters.protocols, foldedTrimmed)
  const nameTerms = normalizedList(filters.symbolOrName, (value) => value.trim())
  const nameWords = nameTerms?.filter((term) => !looksLikeAddress(term)).map(foldQuery)
  const nameAddresses = nameTerms?.filter((term) => looksLikeAddress(term)).map(addressKey)
  return {
    ageMs: ageBounds(filters.ageMinutes),
    anchorSymbols: setOf(normalizedList(filters.anchorSymbols, foldedTrimmed)),
    bondingCurvePct: percentBounds(filters.bondingCurvePercent),
    buys: countBounds(filters.buys),
    sells: countBounds(filters.sells),
    txns: countBounds(filters.txns),
    devHoldingPct: percentBounds(filters.devHoldingPercent),
    snipersPct: percentBounds(filters.snipersSupplyPercent),
    top10Pct: percentBounds(filters.top10HoldersPercent),
    excludeCreators: setOf(normalizedList(filters.excludeDevAddresses, addressKey)),
    excludeFunders: setOf(normalizedList(filters.excludeFundingAddresses, addressKey)),
    excludeWords: normalizedList(filters.excludeSymbolOrName, foldedTrimmed),
    excludeTwitterHandles: setOf(normalizedList(filters.excludeTwitter, twitterHandleOf)),
    excludeWebsiteHosts: setOf(normalizedList(filters.excludeWebsites, websiteHostOf)),
    globalFeesPaidUsd: decimalBounds(filters.globalFeesPaidUsd),
    holderCount: countBounds(filters.holderCount),
    lastActivityMs: filters.lastActivityMinutes === undefined ? undefined : filters.lastActivityMinutes * MINUTE_MS,
    liquidityUsd: decimalBounds(filters.liquidityUsd),
    marketCapUsd: decimalBounds(filters.marketCapUsd),
    volumeUsd: decimalBounds(filters.volumeUsd),
    graduationStaleMs:
      filters.maxGraduationStaleMinutes === undefined ? undefined : filters.maxGraduationStaleMinutes * MINUTE_MS,
    protocols: setOf(protocols),
    protocolsKeepMayhem: protocols?.includes(MAYHEM_MODE) ?? false,
    nameWords: nameWords === undefined || nameWords.length === 0 ? undefined : nameWords,
    nameAddresses: nameAddresses === undefined || nameAddresses.length === 0 ? undefined : new Set(nameAddresses),
    withAtLeastOneSocial: filters.withAtLeastOneSocial === true
  }
}

// ---------------------------------------------------------------------------------------------
// Checks

const inNumberBounds = (bounds: NumberBounds, value: number): boolean =>
  (bounds.min === undefined || value >= bounds.min) && (bounds.max === undefined || value <= bounds.max)

const inFixedBounds = (bounds: FixedBounds, value: Fixed.Fixed): boolean =>
  (bounds.min === undefined || value >= bounds.min) && (bounds.max === undefined || value <= bounds.max)

const containsAny = (text: string, words: ReadonlyArray<string>): boolean => {
  for (let i = 0; i < words.length; i++) if (text.includes(words[i]!)) return true
  return false
}

const present = (link: string | null): boolean => link !== null && link.trim().length > 0

const hasAnnotation = (candidate: DiscoveryCandidate, annotation: string): boolean => {
  const annotations = candidate.annotations
  for (let i = 0; i < annotations.length; i++) if (foldCase(annotations[i]!) === annotation) return true
  return false
}

/**
 * True when `candidate` meets every filter at time `now` (ms). Cheap numeric checks run first so
 * most rejected candidates never reach the string work.
 */
export const meetsFilters = (filters: CompiledFilters, candidate: DiscoveryCandidate, now: number): boolean => {
  const sinceUpdate = now - candidate.updatedAt
  if (filters.lastActivityMs !== undefined && sinceUpdate > filters.lastActivityMs) return false
  if (
    filters.graduationStaleMs !== undefined &&
    sinceUpdate > filters.graduationStaleMs &&
    (candidate.bondingCurvePct === null || candidate.bondingCurvePct < GRADUATION_STALE_EXEMPT_PCT)
  ) {
    return false
  }
  if (filters.ageMs !== undefined) {
    const age = now > candidate.createdAt ? now - candidate.createdAt : 0
    if (!inNumberBounds(filters.ageMs, age)) return false
  }
  if (filters.buys !== undefined && !inNumberBounds(filters.buys, candidate.buys24h)) return false
  if (filters.sells !== undefined && !inNumberBounds(filters.sells, candidate.sells24h)) return false
  if (filters.txns !== undefined && !inNumberBounds(filters.txns, candidate.buys24h + candidate.sells24h)) return false
  if (filters.holderCount !== undefined && !inNumberBounds(filters.holderCount, candidate.holdersCount)) return false
  if (filters.bondingCurvePct !== undefined) {
    if (candidate.bondingCurvePct === null || !inFixedBounds(filters.bondingCurvePct, candidate.bondingCurvePct)) return false
  }
  if (filters.devHoldingPct !== undefined && !inFixedBounds(filters.devHoldingPct, candidate.devHoldingPct)) return false
  if (filters.snipersPct !== undefined && !inFixedBounds(filters.snipersPct, candidate.snipersPct)) return false
  if (filters.top10Pct !== undefined && !inFixedBounds(filters.top10Pct, candidate.top10Pct)) return false
  if (filters.globalFeesPaidUsd !== undefined && !inFixedBounds(filters.globalFeesPaidUsd, candidate.globalFeesPaidUsd)) {
    return false
  }
  if (filters.liquidityUsd !== undefined && !inFixedBounds(filters.liquidityUsd, candidate.liquidityUsd)) return false
  if (filters.marketCapUsd !== undefined && !inFixedBounds(filters.marketCapUsd, candidate.marketCapUsd)) return false
  if (filters.volumeUsd !== undefined && !inFixedBounds(filters.volumeUsd, candidate.volume24hUsd)) return false
  if (
    filters.withAtLeastOneSocial &&
    !present(candidate.twitter) &&
    !present(candidate.website) &&
    !present(candidate.telegram) &&
    !present(candidate.discord)
  ) {
    return false
  }
  if (filters.anchorSymbols !== undefined) {
    if (candidate.anchorSymbol === null || !filters.anchorSymbols.has(foldCase(candidate.anchorSymbol))) return false
  }
  if (filters.protocols !== undefined) {
    const launchpadListed = candidate.launchpad !== null && filters.protocols.has(foldCase(candidate.launchpad))
    if (!launchpadListed && !(filters.protocolsKeepMayhem && hasAnnotation(candidate, MAYHEM_MODE))) return false
  }
  if (filters.excludeCreators !== undefined && filters.excludeCreators.has(addressKey(candidate.creator))) return false
  if (
    filters.excludeFunders !== undefined &&
    candidate.creatorFunder !== null &&
    filters.excludeFunders.has(addressKey(candidate.creatorFunder))
  ) {
    return false
  }
  if (filters.excludeTwitterHandles !== undefined && candidate.twitter !== null) {
    const handle = twitterHandleOf(candidate.twitter)
    if (handle.length > 0 && filters.excludeTwitterHandles.has(handle)) return false
  }
  if (filters.excludeWebsiteHosts !== undefined && candidate.website !== null) {
    const host = websiteHostOf(candidate.website)
    if (host.length > 0 && filters.excludeWebsiteHosts.has(host)) return false
  }
  if (filters.excludeWords !== undefined || filters.nameWords !== undefined || filters.nameAddresses !== undefined) {
    const symbol = foldCase(candidate.symbol)
    const name = foldCase(candidate.name)
    if (filters.excludeWords !== undefined && (containsAny(symbol, filters.excludeWords) || containsAny(name, filters.excludeWords))) {
      return false
    }
    if (filters.nameWords !== undefined || filters.nameAddresses !== undefined) {
      const byText =
        filters.nameWords !== undefined && (containsAny(symbol, filters.nameWords) || containsAny(name, filters.nameWords))
      const byAddress = filters.nameAddresses !== undefined && filters.nameAddresses.has(addressKey(candidate.address))
      if (!byText && !byAddress) return false
    }
  }
  return true
}
