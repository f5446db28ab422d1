/**
 * Wire building blocks shared by every response and request object of the spec
 * (section "Conventions"): chain slugs, decimal strings, integer millisecond timestamps,
 * the `{native, usd}` money object and the identity profile.
 *
 * Every schema here decodes and encodes to the same JSON value (no transformations), so
 * `Type` and `Encoded` coincide.
 */
import { Schema } from "effect"
import { chains } from "../Chain.js"

// Effect 4's `isPattern` deliberately leaves the RegExp out of generated JSON Schema; these
// patterns are plain ECMAScript/JSON Schema compatible, so they are emitted as `pattern` explicitly.
const patternCheck = (regExp: RegExp, expected: string) =>
  Schema.isPattern(regExp, { expected, toJsonSchema: () => ({ pattern: regExp.source }) })

/** Pattern of a signed plain decimal string: digits, optional fraction, never exponent form. */
export const decimalStringPattern = /^-?\d+(\.\d+)?$/
/** Pattern of an unsigned plain decimal string. */
export const unsignedDecimalStringPattern = /^\d+(\.\d+)?$/

/** One spelling per chain, identical in paths, query strings and bodies. */
export const ChainSlug = Schema.Literals(chains).annotate({
  identifier: "ChainSlug",
  description: "Chain slug; one spelling per chain, identical in paths, query strings and bodies"
})
export type ChainSlug = typeof ChainSlug.Type

/** An amount as a plain decimal string (for example "-12.5", "0.000123"); never exponent form. */
export const DecimalString = Schema.String.check(
  patternCheck(decimalStringPattern, "a decimal string such as \"-12.5\" or \"0.000123\" (no exponent form)")
).annotate({
  identifier: "DecimalString",
  description: "Signed decimal string such as \"-12.5\" or \"0.000123\"; never exponent form",
  /** What a request naming a value of another JSON type is told (adapters-http ApiRoute). */
  expectedText: "a decimal string such as \"-12.5\" or \"0.000123\" (a JSON string; no exponent form)",
  examples: ["0.000123", "-12.5", "42"]
})
export type DecimalString = typeof DecimalString.Type

/** A decimal string for a value that cannot be negative (supplies, token amounts, shares of supply). */
export const UnsignedDecimalString = Schema.String.check(
  patternCheck(unsignedDecimalStringPattern, "an unsigned decimal string such as \"12.5\" (no sign, no exponent form)")
).annotate({
  identifier: "UnsignedDecimalString",
  description: "Non-negative decimal string such as \"12.5\" or \"0.000123\"; never exponent form",
  examples: ["0.000123", "12.5", "0"]
})
export type UnsignedDecimalString = typeof UnsignedDecimalString.Type

/** Integer Unix milliseconds. */
export const TimestampMs = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
  identifier: "TimestampMs",
  description: "Integer Unix time in milliseconds",
  examples: [1763745882000]
})
export type TimestampMs = typeof TimestampMs.Type

/** A non-negative integer (counts, decimals, versions). */
export const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
  identifier: "Count",
  description: "Non-negative integer"
})
export type Count = typeof Count.Type

/** A value in the chain's native unit and in US dollars, both decimal strings. */
export const Money = Schema.Struct({
  native: DecimalString,
  usd: DecimalString
}).annotate({
  identifier: "Money",
  description: "A value in the chain's native unit (`native`) and in US dollars (`usd`), both decimal strings"
})
export type Money = typeof Money.Type

/** Rank direction. */
export const SortOrder = Schema.Literals(["asc", "desc"]).annotate({
  identifier: "SortOrder",
  description: "Sort direction"
})
export type SortOrder = typeof SortOrder.Type

/** A trader's resolved public profile from one source. Every key is present; all but `source` may be null. */
export const IdentityProfile = Schema.Struct({
  source: Schema.String.annotate({ description: "Who resolved the profile; open set, never null" }),
  handle: Schema.NullOr(Schema.String),
  displayName: Schema.NullOr(Schema.String),
  avatar: Schema.NullOr(Schema.String).annotate({ description: "Image URL; null until available" }),
  twitter: Schema.NullOr(Schema.String),
  telegram: Schema.NullOr(Schema.String),
  farcaster: Schema.NullOr(Schema.String)
}).annotate({
  identifier: "IdentityProfile",
  description: "A trader's resolved public profile, one per source; every field is present and all but `source` can be null"
})
export type IdentityProfile = typeof IdentityProfile.Type
