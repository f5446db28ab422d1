/**
 * `POST /v1/discovery` (spec "POST /v1/discovery", "Discovery entry"): the request body with its
 * column configs and filters, and the ranked response.
 *
 * Decoding rules that are deliberately left to the use case, so it can report the field path:
 * - `chains` is a non-empty string array here; unknown slugs must produce `UNSUPPORTED_CHAIN`, not
 *   a schema failure. "No column named" is checked by the use case.
 * - `limit` is any integer, however large (`1e30` and `1e400` included: `Schema.Int` would refuse
 *   what is past 2^53); it is clamped to 1-100, never refused. Count bounds take any non-negative
 *   integer alike. A fraction is not an integer: refused as a type error.
 * - a range whose min exceeds its max is refused by the use case (see {@link rangeViolations}).
 * - unknown filter names are ignored: `Schema.Struct` decoding drops unknown keys by default
 *   (`onExcessProperty: "ignore"`), so they never reach the use case.
 */
import { Schema, SchemaGetter } from "effect"
import { DEFAULT_LIMIT, MAX_LIMIT, MIN_LIMIT } from "../discovery/Discovery.js"
import { ChainSlug, DecimalString, SortOrder } from "./Common.js"
import { Token } from "./Token.js"

export const DiscoveryColumnName = Schema.Literals(["newPairs", "graduating", "graduated"]).annotate({
  identifier: "DiscoveryColumnName",
  description:
    "Launch-stage column: newPairs below 40% of bonding curve; graduating at 40% or more, not yet graduated; graduated, or with no curve reading"
})
export type DiscoveryColumnName = typeof DiscoveryColumnName.Type

/** Columns in the fixed response order. */
export const discoveryColumnNames = ["newPairs", "graduating", "graduated"] as const satisfies ReadonlyArray<DiscoveryColumnName>

export const DiscoverySortBy = Schema.Literals([
  "createdAt",
  "volume24hUsd",
  "marketCapUsd",
  "liquidityUsd",
  "holdersCount",
  "tradeCount24h",
  "bondingCurvePct",
  "bondingCurveActivity",
  "graduatedAt"
]).annotate({ identifier: "DiscoverySortBy", description: "Field to rank on" })
export type DiscoverySortBy = typeof DiscoverySortBy.Type

/**
 * A JSON number as the body's parser gives it: a literal past a double's range (`1e400`) reads as
 * Infinity; a string is refused. The body is decoded as parsed, so this is its own JSON form
 * (`toCodecJson` answers undefined). `Schema.Number` is not: its JSON codec, which HttpApi's
 * OpenAPI generator documents, also admits the strings "Infinity", "-Infinity" and "NaN", which
 * this server refuses.
 */
const ParsedJsonNumber = Schema.declare((u: unknown): u is number => typeof u === "number" && !Number.isNaN(u), {
  expected: "number",
  toCodecJson: () => undefined
})

/**
 * Any integer-valued JSON number, of any magnitude: `Schema.Int` would refuse what is past 2^53
 * (`1e30`), and a literal past a double's range (`1e400`) reads as Infinity, still a whole number
 * as written. Limits are clamped and bounds compared, so none is out of range. Documented as
 * `type: integer` (a JSON literal such as 1e400 is an integer in JSON Schema's sense too).
 */
const AnyInteger = ParsedJsonNumber.check(
  Schema.makeFilter((n: number) => Number.isInteger(n) || n === Infinity || n === -Infinity, {
    expected: "an integer",
    toJsonSchema: () => ({ type: "integer" })
  })
)

/** A count bound: a non-negative integer of any magnitude (the spec gives counts no upper bound). */
const CountBound = AnyInteger.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
  identifier: "CountBound",
  description: "Non-negative integer, any magnitude",
  expectedText: "a whole number of at least 0 (a JSON number)"
})

export const CountRange = Schema.Struct({
  min: Schema.optionalKey(CountBound),
  max: Schema.optionalKey(CountBound)
}).annotate({
  identifier: "CountRange",
  description: "Inclusive range of integers >= 0; each bound optional (absent is unbounded); min must not exceed max",
  expectedText: "an object with an optional min and max, each a whole number of at least 0"
})
export type CountRange = typeof CountRange.Type

/**
 * Any JSON number, a literal past a double's range (`1e400`, read as Infinity) included: a bound
 * is only compared, so an infinite one is as meaningful as it is for counts (`max: 1e400` keeps
 * everything, `min: 1e400` nothing). Documented as `type: number`.
 */
const AnyNumber = ParsedJsonNumber.check(
  Schema.makeFilter((n: number) => !Number.isNaN(n), { expected: "a number", toJsonSchema: () => ({ type: "number" }) })
)

/** Inclusive range of JSON numbers; each bound optional (absent is unbounded). */
export const NumberRange = Schema.Struct({
  min: Schema.optionalKey(AnyNumber),
  max: Schema.optionalKey(AnyNumber)
}).annotate({
  identifier: "NumberRange",
  description: "Inclusive range of JSON numbers; each bound optional (absent is unbounded); min must not exceed max",
  expectedText: "an object with an optional min and max, each a JSON number"
})
export type NumberRange = typeof NumberRange.Type

/** Inclusive range of decimal strings; each bound optional (absent is unbounded). */
export const DecimalRange = Schema.Struct({
  min: Schema.optionalKey(DecimalString),
  max: Schema.optionalKey(DecimalString)
}).annotate({
  identifier: "DecimalRange",
  description: "Inclusive range of decimal strings; each bound optional (absent is unbounded); min must not exceed max",
  expectedText: "an object with an optional min and max, each a decimal string"
})
export type DecimalRange = typeof DecimalRange.Type

/** Optional key of a named (identified) schema: the description goes on the key, the schema stays a `$ref`. */
const describedKey = <S extends Schema.Top>(schema: S, description: string) =>
  Schema.optionalKey(schema).annotateKey({ description })

/** Optional key of an anonymous schema: the description goes on the schema itself. */
const described = <S extends Schema.Top>(schema: S, description: string) =>
  Schema.optionalKey(schema.annotate({ description }))

/**
 * A list filter's bounds: at most this many entries, each at most `MAX_FILTER_WORD_LENGTH`
 * characters. Every entry is matched against every candidate token of the chains asked for, so
 * an unbounded list would let one request of 60,000 words hold the event loop for seconds; the
 * spec sets no size, and 100 matches its other lists (addresses, wallets).
 */
export const MAX_FILTER_ENTRIES = 100
export const MAX_FILTER_WORD_LENGTH = 256
const StringList = Schema.Array(
  Schema.String.check(Schema.isMaxLength(MAX_FILTER_WORD_LENGTH, { message: `must be a string of at most ${MAX_FILTER_WORD_LENGTH} characters` }))
).check(Schema.isMaxLength(MAX_FILTER_ENTRIES, { message: `must be a list of at most ${MAX_FILTER_ENTRIES} strings` }))

/** The known filters: the decoded (type) side of {@link DiscoveryFilters}. */
export const DiscoveryFilterFields = Schema.Struct({
  ageMinutes: describedKey(CountRange, "Minutes since creation"),
  anchorSymbols: described(StringList, "Keep tokens whose deepest pool prices against any of these quote assets"),
  bondingCurvePercent: describedKey(NumberRange, "Curve completion 0-100"),
  buys: describedKey(CountRange, "Buys over last 24 hours"),
  sells: describedKey(CountRange, "Sells over last 24 hours"),
  txns: describedKey(CountRange, "Buys plus sells over last 24 hours"),
  devHoldingPercent: describedKey(NumberRange, "Share of supply the creator holds, 0-100"),
  snipersSupplyPercent: describedKey(NumberRange, "Share of supply sniper wallets hold, 0-100"),
  top10HoldersPercent: describedKey(NumberRange, "Share held by 10 largest holders, 0-100"),
  excludeDevAddresses: described(StringList, "Drop tokens created by any of these wallets"),
  excludeFundingAddresses: described(StringList, "Drop tokens whose creator was funded by any of these wallets"),
  excludeSymbolOrName: described(StringList, "Drop tokens whose symbol or name contains any word, ignoring case"),
  excludeTwitter: described(StringList, "Drop tokens whose X handle matches an entry, as handle or URL"),
  excludeWebsites: described(
    StringList,
    "Drop tokens whose website host matches an entry, as URL or bare domain"
  ),
  globalFeesPaidUsd: describedKey(DecimalRange, "All-time USD fees traders paid to pools and launchpads"),
  holderCount: describedKey(CountRange, "Current holders"),
  lastActivityMinutes: describedKey(CountBound, "Keep tokens updated within this many minutes"),
  liquidityUsd: describedKey(DecimalRange, "USD liquidity"),
  marketCapUsd: describedKey(DecimalRange, "USD market cap"),
  volumeUsd: describedKey(DecimalRange, "USD volume over last 24 hours"),
  maxGraduationStaleMinutes: describedKey(
    CountBound,
    "Drop tokens with no update within this many minutes, unless at 99.5% of curve or more"
  ),
  protocols: described(
    StringList,
    "Keep tokens from any of these launchpads; the value `mayhem_mode` keeps mayhem-mode tokens"
  ),
  symbolOrName: described(
    StringList,
    "Keep tokens whose symbol or name contains any word, ignoring case; a word shaped like an address matches the token address exactly"
  ),
  twitterReuseCount: describedKey(CountRange, "Not yet counted; every token passes"),
  withAtLeastOneSocial: described(Schema.Boolean, "true keeps tokens with at least one social link")
})

const discoveryFilterNames = Object.keys(DiscoveryFilterFields.fields)

/**
 * Discovery column filters. On the wire (encoded side, which OpenAPI describes) the object is
 * open: any other key is admitted, because an unknown filter name is ignored, not refused. HttpApi's
 * OpenAPI generator marks plain structs `additionalProperties: false`, so the open record is
 * spelled out here. Decoding then narrows to {@link DiscoveryFilterFields}, dropping unknown keys.
 */
export const DiscoveryFilters = Schema.StructWithRest(DiscoveryFilterFields, [Schema.Record(Schema.String, Schema.Unknown)])
  .annotate({
    identifier: "DiscoveryFilters",
    description:
      "Conditions every token must meet, on top of column defaults; every filter is optional; an unknown filter name is ignored, not refused",
    expectedText: "an object of filters (see the filter table)"
  })
  .pipe(
    Schema.decodeTo(DiscoveryFilterFields, {
      // Unknown filter names are dropped here, so they pass even a decoder that refuses excess
      // properties elsewhere in the body.
      decode: SchemaGetter.transform((input: Record<string, unknown>) => {
        const known: Record<string, unknown> = {}
        for (const key of discoveryFilterNames) if (key in input) known[key] = input[key]
        return known as typeof DiscoveryFilterFields.Encoded
      }),
      encode: SchemaGetter.transform((fields) => fields as Record<string, unknown>)
    })
  )
export type DiscoveryFilters = typeof DiscoveryFilters.Type

export const ColumnConfig = Schema.Struct({
  sortBy: describedKey(DiscoverySortBy, "Field to rank on; defaults per column"),
  order: describedKey(SortOrder, "Rank direction; default desc"),
  limit: Schema.optionalKey(
    AnyInteger.annotate({
      description: `Entries to return; any integer, clamped to ${MIN_LIMIT}-${MAX_LIMIT}, never refused`,
      default: DEFAULT_LIMIT
    })
  ),
  filters: Schema.optionalKey(DiscoveryFilters)
}).annotate({ identifier: "ColumnConfig", description: "One requested discovery column; `{}` requests defaults" })
export type ColumnConfig = typeof ColumnConfig.Type

const columnKey = Schema.optionalKey(
  Schema.NullOr(ColumnConfig).annotate({ description: "Omitted or null means not requested; `{}` requests defaults" })
)

export const DiscoveryRequest = Schema.Struct({
  chains: Schema.Array(Schema.String).check(Schema.isMinLength(1, { message: "chains names no chain: send one or more chain slugs" })).annotate({
    description:
      "Chain slugs (solana, base, bsc, robinhood, arc), one or more; each column ranks tokens of all of them as one mixed set; a repeated slug is read once; an unsupported slug is refused with UNSUPPORTED_CHAIN"
  }),
  newPairs: columnKey,
  graduating: columnKey,
  graduated: columnKey
}).annotate({
  identifier: "DiscoveryRequest",
  description: "Body of POST /v1/discovery; at least one column must be named",
  expectedText: "a JSON object with chains and at least one column (newPairs, graduating, graduated)"
})
export type DiscoveryRequest = typeof DiscoveryRequest.Type

export const DiscoveryEntry = Schema.Struct({
  chain: ChainSlug,
  address: Schema.String,
  rank: Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))).annotate({
    description: "Rank from 1; null means the token drops out of the column (never null in the REST response)"
  }),
  data: Schema.optionalKey(Token).annotateKey({
    description: "The token; absent only on eviction (always present in the REST response)"
  })
}).annotate({
  identifier: "DiscoveryEntry",
  description: "One discovery board row, keyed by chain and address"
})
export type DiscoveryEntry = typeof DiscoveryEntry.Type

export const DiscoveryColumn = Schema.Struct({
  column: DiscoveryColumnName,
  deltas: Schema.Array(DiscoveryEntry).annotate({ description: "The whole ranked set, rank from 1" })
}).annotate({ identifier: "DiscoveryColumn", description: "One ranked column" })
export type DiscoveryColumn = typeof DiscoveryColumn.Type

export const DiscoveryResponse = Schema.Struct({
  columns: Schema.Array(DiscoveryColumn).annotate({
    description: "One element per requested column in the fixed order newPairs, graduating, graduated"
  })
}).annotate({ identifier: "DiscoveryResponse", description: "Ranked discovery boards" })
export type DiscoveryResponse = typeof DiscoveryResponse.Type

// ---------------------------------------------------------------------------------------------
// Range checks (min > max is refused with VALIDATION_ERROR by the use case)

export type RangeKind = "count" | "number" | "decimal"

/** Every range filter and the kind of its bounds. */
export const discoveryRangeFilters = {
  ageMinutes: "count",
  buys: "count",
  sells: "count",
  txns: "count",
  holderCount: "count",
  twitterReuseCount: "count",
  bondingCurvePercent: "number",
  devHoldingPercent: "number",
  snipersSupplyPercent: "number",
  top10HoldersPercent: "number",
  globalFeesPaidUsd: "decimal",
  liquidityUsd: "decimal",
  marketCapUsd: "decimal",
  volumeUsd: "decimal"
} as const satisfies { readonly [K in keyof DiscoveryFilters]?: RangeKind }

const decimalParts = /^(-)?(\d+)(?:\.(\d+))?$/

/**
 * Compares two plain decimal strings exactly (any number of digits): negative, zero or positive
 * as `a` is below, equal to or above `b`. Returns undefined when either is not a decimal string.
 */
export const compareDecimalStrings = (a: string, b: string): number | undefined => {
  const ma = decimalParts.exec(a)
  const mb = decimalParts.exec(b)
  if (ma === null || mb === null) return undefined
  const fa = ma[3] ?? ""
  const fb = mb[3] ?? ""
  const places = Math.max(fa.length, fb.length)
  const va = BigInt(ma[2]! + fa.padEnd(places, "0")) * (ma[1] === "-" ? -1n : 1n)
  const vb = BigInt(mb[2]! + fb.padEnd(places, "0")) * (mb[1] === "-" ? -1n : 1n)
  return va < vb ? -1 : va > vb ? 1 : 0
}

export interface RangeViolation {
  readonly field: string
  readonly message: string
}

/**
 * Every range filter whose min exceeds its max. `field` is the filter name, prefixed with
 * `prefix` and a dot when given (for example `prefix = "newPairs.filters"` gives
 * `"newPairs.filters.ageMinutes"`). Count and number bounds compare as numbers, decimal bounds
 * compare exactly as decimals ("10" > "9.5").
 */
export const rangeViolations = (filters: DiscoveryFilters, prefix?: string): Array<RangeViolation> => {
  const out: Array<RangeViolation> = []
  for (const name of Object.keys(discoveryRangeFilters) as Array<keyof typeof discoveryRangeFilters>) {
    const range = filters[name] as { readonly min?: number | string; readonly max?: number | string } | undefined
    if (range === undefined || range.min === undefined || range.max === undefined) continue
    const { max, min } = range
    const inverted =
      typeof min === "string" && typeof max === "string"
        ? (compareDecimalStrings(min, max) ?? 0) > 0
        : typeof min === "number" && typeof max === "number" && min > max
    if (inverted) {
      out.push({
        field: prefix === undefined || prefix === "" ? name : `${prefix}.${name}`,
        message: `min (${String(min)}) must not exceed max (${String(max)})`
      })
    }
  }
  return out
}
