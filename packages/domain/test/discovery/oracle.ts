/**
 * A second, deliberately naive reading of the spec's discovery rules, written apart from the
 * implementation: a plain predicate per filter and a full sort. The property tests compare
 * `rankColumn` with it.
 */
import { looksLikeAddress } from "../../src/Chain.js"
import type { ColumnName, DiscoveryCandidate, SortBy, SortOrder } from "../../src/discovery/Discovery.js"
import type { DiscoveryFilterValues } from "../../src/discovery/DiscoveryFilters.js"
import * as Fixed from "../../src/Fixed.js"
import { MINUTE, sameAddress, twitterHandles, websiteHosts } from "./arbitraries.js"

const PCT = 10n ** 18n

export const expectedColumn = (c: DiscoveryCandidate): ColumnName | null => {
  if (c.launchpad === null) return null
  if (c.graduatedAt !== null) return "graduated"
  if (c.bondingCurvePct === null) return "graduated"
  if (c.bondingCurvePct < 40n * PCT) return "newPairs"
  return "graduating"
}

/** Test bounds are written with two decimals, so hundredths give the exact value. */
const percentBound = (n: number): bigint => BigInt(Math.round(n * 100)) * 10n ** 16n

const withinCount = (range: { min?: number; max?: number } | undefined, value: number): boolean =>
  range === undefined || ((range.min === undefined || value >= range.min) && (range.max === undefined || value <= range.max))

const withinPercent = (range: { min?: number; max?: number } | undefined, value: bigint | null): boolean => {
  if (range === undefined || (range.min === undefined && range.max === undefined)) return true
  if (value === null) return false
  return (range.min === undefined || value >= percentBound(range.min)) && (range.max === undefined || value <= percentBound(range.max))
}

const withinDecimal = (range: { min?: string; max?: string } | undefined, value: bigint): boolean =>
  range === undefined ||
  ((range.min === undefined || value >= Fixed.unsafeParse(range.min)) &&
    (range.max === undefined || value <= Fixed.unsafeParse(range.max)))

const words = (list: ReadonlyArray<string> | undefined): Array<string> =>
  (list ?? []).map((w) => w.trim()).filter((w) => w !== "")

const mentions = (c: DiscoveryCandidate, word: string): boolean =>
  c.symbol.toLowerCase().includes(word.toLowerCase()) || c.name.toLowerCase().includes(word.toLowerCase())

const hasLink = (link: string | null): boolean => link !== null && link.trim() !== ""

/** Each filter of the spec's table, read literally. */
export const expectedToPass = (f: DiscoveryFilterValues, c: DiscoveryCandidate, now: number): boolean => {
  const ageMs = Math.max(0, now - c.createdAt)
  if (f.ageMinutes !== undefined) {
    // whole minutes since creation
    const minutes = Math.floor(ageMs / MINUTE)
    if (f.ageMinutes.min !== undefined && minutes < f.ageMinutes.min) return false
    if (f.ageMinutes.max !== undefined && minutes > f.ageMinutes.max) return false
  }
  const anchors = words(f.anchorSymbols)
  if (anchors.length > 0 && !anchors.some((a) => c.anchorSymbol !== null && a.toLowerCase() === c.anchorSymbol.toLowerCase())) {
    return false
  }
  if (!withinPercent(f.bondingCurvePercent, c.bondingCurvePct)) return false
  if (!withinCount(f.buys, c.buys24h)) return false
  if (!withinCount(f.sells, c.sells24h)) return false
  if (!withinCount(f.txns, c.buys24h + c.sells24h)) return false
  if (!withinPercent(f.devHoldingPercent, c.devHoldingPct)) return false
  if (!withinPercent(f.snipersSupplyPercent, c.snipersPct)) return false
  if (!withinPercent(f.top10HoldersPercent, c.top10Pct)) return false
  if ((f.excludeDevAddresses ?? []).some((a) => sameAddress(a, c.creator))) return false
  if (c.creatorFunder !== null && (f.excludeFundingAddresses ?? []).some((a) => sameAddress(a, c.creatorFunder!))) return false
  if (words(f.excludeSymbolOrName).some((w) => mentions(c, w))) return false
  if (c.twitter !== null && (f.excludeTwitter ?? []).some((t) => twitterHandles.get(t) === twitterHandles.get(c.twitter!))) {
    return false
  }
  if (c.website !== null && (f.excludeWebsites ?? []).some((w) => websiteHosts.get(w) === websiteHosts.get(c.website!))) {
    return false
  }
  if (!withinDecimal(f.globalFeesPaidUsd, c.globalFeesPaidUsd)) return false
  if (!withinCount(f.holderCount, c.holdersCount)) return false
  if (f.lastActivityMinutes !== undefined && now - c.updatedAt > f.lastActivityMinutes * MINUTE) return false
  if (!withinDecimal(f.liquidityUsd, c.liquidityUsd)) return false
  if (!withinDecimal(f.marketCapUsd, c.marketCapUsd)) return false
  if (!withinDecimal(f.volumeUsd, c.volume24hUsd)) return false
  if (f.maxGraduationStaleMinutes !== undefined) {
    const stale = now - c.updatedAt > f.maxGraduationStaleMinutes * MINUTE
    const nearlyDone = c.bondingCurvePct !== null && c.bondingCurvePct >= 995n * 10n ** 17n
    if (stale && !nearlyDone) return false
  }
  const protocols = words(f.protocols).map((p) => p.toLowerCase())
  if (protocols.length > 0) {
    const byLaunchpad = c.launchpad !== null && protocols.includes(c.launchpad.toLowerCase())
    const byMayhem = protocols.includes("mayhem_mode") && c.annotations.includes("mayhem_mode")
    if (!byLaunchpad && !byMayhem) return false
  }
  const wanted = words(f.symbolOrName)
  if (wanted.length > 0) {
    const hit = wanted.some((w) => (looksLikeAddress(w) ? sameAddress(w, c.address) : mentions(c, w)))
    if (!hit) return false
  }
  if (f.withAtLeastOneSocial === true && ![c.twitter, c.website, c.telegram, c.discord].some(hasLink)) return false
  return true
}

/** The sort value, or null when missing (missing ranks last whatever the direction). */
const sortValue = (c: DiscoveryCandidate, sortBy: SortBy, now: number): number | bigint | null => {
  switch (sortBy) {
    case "createdAt":
      return c.createdAt
    case "volume24hUsd":
      return c.volume24hUsd
    case "marketCapUsd":
      return c.marketCapUsd
    case "liquidityUsd":
      return c.liquidityUsd
    case "holdersCount":
      return c.holdersCount
    case "tradeCount24h":
      return c.buys24h + c.sells24h
    case "bondingCurvePct":
      return c.bondingCurvePct
    case "bondingCurveActivity":
      return c.bondingCurveActivity(now)
    case "graduatedAt":
      return c.graduatedAt !== null ? c.graduatedAt : c.bondingCurvePct === null ? c.createdAt : null
  }
}

export const expectedOrder =
  (sortBy: SortBy, order: SortOrder, now: number) =>
  (a: DiscoveryCandidate, b: DiscoveryCandidate): number => {
    const va = sortValue(a, sortBy, now)
    const vb = sortValue(b, sortBy, now)
    if (va === null && vb !== null) return 1
    if (vb === null && va !== null) return -1
    if (va !== null && vb !== null && va !== vb) {
      const ascending = va < vb ? -1 : 1
      return order === "asc" ? ascending : -ascending
    }
    if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt
    if (a.chain !== b.chain) return a.chain < b.chain ? -1 : 1
    if (a.address !== b.address) return a.address < b.address ? -1 : 1
    return 0
  }

export const expectedLimit = (limit: number | undefined): number =>
  limit === undefined ? 20 : limit < 1 ? 1 : limit > 100 ? 100 : Math.trunc(limit)

/** The whole board by brute force: filter everything, sort everything, cut. */
export const expectedBoard = (
  candidates: ReadonlyArray<DiscoveryCandidate>,
  column: ColumnName,
  request: { sortBy: SortBy; order: SortOrder; limit: number; filters: DiscoveryFilterValues },
  now: number
): Array<DiscoveryCandidate> =>
  candidates
    .filter((c) => expectedColumn(c) === column && expectedToPass(request.filters, c, now))
    .sort(expectedOrder(request.sortBy, request.order, now))
    .slice(0, expectedLimit(request.limit))
