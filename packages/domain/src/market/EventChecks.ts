/**
 * What makes an event acceptable beyond its schema: its magnitudes (`magnitudeRejection`, which the
 * engine enforces on every fold, replays included) and its form (`formRejection`: addresses of its
 * chain, ids, and the names and texts the API will serve; ingest's gate only, through
 * `MarketEngine.check`, so a log written before a rule replays). docs/ingest.md, "Rules";
 * docs/market-events.md for the bounds.
 */
import type { Chain } from "../Chain.js"
import { chains, describeAddressOn, isAddressOn, nativeAsset } from "../Chain.js"
import type * as Events from "../events/MarketEvent.js"
import type { MarketEvent } from "../events/MarketEvent.js"
import { subjectTokenOf } from "../events/MarketEvent.js"
import * as Fixed from "../Fixed.js"
import { nativeUsdValue } from "./TokenBook.js"

/**
 * Why an event was not applied (functions that check return it, or `undefined` when the event
 * passes). Each variant carries what its message needs (`rejectionMessage`) and names the field at
 * fault when one is (`rejectionField`).
 */
export type Rejection =
  /** One field of the event is refused: "`field` `problem`". */
  | { readonly _tag: "FieldRefused"; readonly field: string; readonly problem: string }
  /** The event as a whole is refused: no one field is at fault. */
  | { readonly _tag: "EventRefused"; readonly problem: string }
  /** The event's token was never launched. */
  | { readonly _tag: "UnknownToken"; readonly chain: Chain; readonly token: string }
  /** A launch of a token already launched: by an event of another id (`byAnotherEvent`, ingest's check), or again (the fold). */
  | { readonly _tag: "AlreadyLaunched"; readonly chain: Chain; readonly token: string; readonly byAnotherEvent: boolean }
  /** An event dated more than `skewMs` before its token's launch (at `launchedAt`). */
  | { readonly _tag: "BeforeLaunch"; readonly launchedAt: number; readonly skewMs: number }

/** The refusal of one field. */
export const fieldRefused = (field: string, problem: string): Rejection => ({ _tag: "FieldRefused", field, problem })

/** The text a refusal is told with (ingest's messages, docs/ingest.md). */
export const rejectionMessage = (rejection: Rejection): string => {
  switch (rejection._tag) {
    case "FieldRefused":
      return `${rejection.field} ${rejection.problem}`
    case "EventRefused":
      return rejection.problem
    case "UnknownToken":
      return `token ${rejection.chain}:${rejection.token} is unknown: send its tokenLaunched event first`
    case "AlreadyLaunched":
      return `token ${rejection.chain}:${rejection.token} was already launched${rejection.byAnotherEvent ? " by another event; a token launches once" : ""}`
    case "BeforeLaunch":
      return `timestamp is more than ${rejection.skewMs / 1000} s before its token's launch (${rejection.launchedAt} ms): nothing happens to a token before it exists`
  }
}

/** The path of the event's field a refusal is about ("poolAfter.bondingCurvePct"), or undefined when it is the whole event's. */
export const rejectionField = (rejection: Rejection): string | undefined => {
  switch (rejection._tag) {
    case "FieldRefused":
      return rejection.field
    case "EventRefused":
      return undefined
    case "UnknownToken":
    case "AlreadyLaunched":
      return "token"
    case "BeforeLaunch":
      return "timestamp"
  }
}

/** Largest token amount (base units) an event may carry: 10^36. */
export const MAX_BASE_UNITS = 10n ** 36n
/**
 * Largest native amount of a swap or fee: 10^10 whole native units (SOL, ETH, BNB...), and largest
 * USD value of a swap: $10^10. The stats windows and candles keep each trade's volume in 64-bit
 * nano-units (TapeNumbers: below 1.8·10^10 whole units), so a larger swap would read there as
 * less than it was; no real swap comes near (the whole supply of SOL is under 10^9).
 */
const maxNativeUnits = Object.fromEntries(
  chains.map((chain) => [chain, 10n ** BigInt(nativeAsset[chain].decimals + 10)])
) as Record<Chain, bigint>
/** Largest USD value of a swap: $10^10 (as Fixed; see above). */
export const MAX_SWAP_USD: Fixed.Fixed = 10n ** 10n * Fixed.ONE
/** Largest USD price of one native unit: $10^9 (as Fixed). */
export const MAX_NATIVE_USD: Fixed.Fixed = 10n ** 9n * Fixed.ONE

/** Whether a curve completion (a plain decimal, as the schema admits it) is past 100%. */
const pctBeyond100 = (text: string): boolean => Number(text) > 100

/**
 * Why an event's magnitudes are beyond what the engine keeps exactly, if they are. The bounds are
 * orders of magnitude past any real market (docs/market-events.md) and keep every sum the engine
 * folds inside its exact wide integers (Wide.ts), whatever the number of events. `nativeUsd`: the
 * event's native USD price already parsed, if the caller has it.
 */
export const magnitudeRejection = (e: MarketEvent, nativeUsd?: Fixed.Fixed): Rejection | undefined => {
  switch (e.type) {
    case "tokenLaunched":
      if (e.decimals > Fixed.SCALE_DIGITS) return fieldRefused("decimals", `beyond ${Fixed.SCALE_DIGITS}: the API's decimal strings carry ${Fixed.SCALE_DIGITS} places`)
      return e.supply > MAX_BASE_UNITS ? fieldRefused("supply", `beyond ${MAX_BASE_UNITS} base units`) : undefined
    case "transfer":
      return e.amount > MAX_BASE_UNITS ? fieldRefused("amount", `beyond ${MAX_BASE_UNITS} base units`) : undefined
    case "curveProgressed":
      return pctBeyond100(e.bondingCurvePct) ? fieldRefused("bondingCurvePct", "beyond 100") : undefined
    case "securityScored":
      // a share of the liquidity (spec: 0-100), served as is
      return e.lpBurntPct !== null && pctBeyond100(e.lpBurntPct) ? fieldRefused("lpBurntPct", "beyond 100") : undefined
    case "swap": {
      if (e.tokenAmount > MAX_BASE_UNITS) return fieldRefused("tokenAmount", `beyond ${MAX_BASE_UNITS} base units`)
      // A swap's native value is its price: 0 would price the token at 0 and zero every holder's value.
      if (e.nativeAmount === 0n) return fieldRefused("nativeAmount", "must be above 0: a swap's native value prices the token (a fill worth nothing is no price)")
      const curvePct = e.poolAfter?.bondingCurvePct
      if (curvePct != null && pctBeyond100(curvePct)) return fieldRefused("poolAfter.bondingCurvePct", "beyond 100")
      if (e.poolAfter != null && e.poolAfter.liquidityNative > maxNativeUnits[e.chain]) {
        return fieldRefused("poolAfter.liquidityNative", `beyond ${maxNativeUnits[e.chain]} base units (10^10 whole ${nativeAsset[e.chain].symbol})`)
      }
      const usd = nativeUsd ?? Fixed.parse(e.nativeUsd)
      const usdRejection = nativeUsdRejection("nativeUsd", usd)
      if (usdRejection !== undefined || usd === undefined) return usdRejection
      const max = maxNativeUnits[e.chain]
      const fees = e.fees
      if (e.nativeAmount > max || fees.transaction > max || fees.validator > max || fees.platform > max || fees.dex > max) {
        return { _tag: "EventRefused", problem: `a native amount beyond ${max} base units (10^10 whole ${nativeAsset[e.chain].symbol})` }
      }
      if (nativeUsdValue(e.chain, e.nativeAmount, usd) > MAX_SWAP_USD) return { _tag: "EventRefused", problem: `a swap's USD value beyond ${Fixed.format(MAX_SWAP_USD)}` }
      return undefined
    }
    case "nativePrice":
      return nativeUsdRejection("usd", nativeUsd ?? Fixed.parse(e.usd))
    case "liquidityChanged":
      // a pool's value, as a swap's: at most 10^10 whole native units (the whole supply of SOL is under 10^9)
      if (e.liquidityNative > maxNativeUnits[e.chain]) {
        return fieldRefused("liquidityNative", `beyond ${maxNativeUnits[e.chain]} base units (10^10 whole ${nativeAsset[e.chain].symbol})`)
      }
      return nativeUsdRejection("nativeUsd", nativeUsd ?? Fixed.parse(e.nativeUsd))
    case "walletFunded":
      return e.amount !== null && e.amount > MAX_BASE_UNITS ? fieldRefused("amount", `beyond ${MAX_BASE_UNITS} base units`) : undefined
    default:
      return undefined
  }
}

/**
 * A native asset's USD price, wherever it enters (a swap's `nativeUsd`, `nativePrice.usd`,
 * `liquidityChanged.nativeUsd`): above 0 at the 18 places the API serves (an asset worth nothing
 * is an indexer's error, and every USD figure of the chain would read 0) and at most 10^9.
 */
const nativeUsdRejection = (field: string, usd: Fixed.Fixed | undefined): Rejection | undefined => {
  if (usd === undefined || usd > MAX_NATIVE_USD) return fieldRefused(field, `beyond ${Fixed.format(MAX_NATIVE_USD)}`)
  if (usd <= 0n) return fieldRefused(field, `must be above 0 (at 18 decimal places): a native asset is worth something`)
  return undefined
}

/**
 * Why an event is not well-formed beyond its schema, if it is not: an id with a control character
 * (ids are stored as text, which cannot hold NUL, and echoed in messages), a token, trader,
 * creator or transfer party that is not an address of the event's chain (such a token could
 * never be read: the reads refuse the address), or a name or text the API could not serve well
 * (`named`, `served`).
 */
export const formRejection = (e: MarketEvent): Rejection | undefined => {
  if (!visibleAscii.test(e.id)) {
    if (/[\u0000-\u001f\u007f]/.test(e.id)) return fieldRefused("id", "has a control character")
    // stored as text, a lone surrogate becomes U+FFFD: "X\ud800" and "X\udc00" would be one event
    if (loneSurrogate.test(e.id)) return fieldRefused("id", "is not well-formed Unicode (a lone surrogate)")
  }
  const subject = subjectTokenOf(e)
  if (subject !== undefined && !isAddressOn(subject.chain, subject.token)) {
    return fieldRefused("token", `${JSON.stringify(subject.token)} is not ${describeAddressOn(subject.chain)}`)
  }
  const party = (role: string, address: string | null): Rejection | undefined =>
    address === null || isAddressOn(e.chain, address) ? undefined : fieldRefused(role, `${JSON.stringify(address)} is not ${describeAddressOn(e.chain)}`)
  switch (e.type) {
    case "tokenLaunched": {
      const beside = party("token", e.token) ?? party("creator", e.creator) ?? hash("transactionHash", e.transactionHash) ??
        named("launchpad", e.launchpad, "null when there is none")
      if (beside !== undefined) return beside
      for (const kind of e.annotations) {
        const rejection = named("annotation", kind, "its kind")
        if (rejection !== undefined) return rejection
      }
      return e.metadata === null ? undefined : metadataRejection(e.metadata)
    }
    case "swap":
      return party("trader", e.trader) ?? party("pool", e.pool) ?? party("quoteAddress", e.quoteAddress) ??
        hash("transactionHash", e.transactionHash) ?? named("dex", e.dex) ?? named("terminal", e.terminal, "null when none is known") ??
        served("quoteSymbol", e.quoteSymbol, MAX_SYMBOL_LENGTH)
    case "transfer":
      return party("from", e.from) ?? party("to", e.to) ?? hash("transactionHash", e.transactionHash)
    case "metadataResolved":
      return metadataRejection(e.metadata)
    case "graduated":
      return party("pool", e.pool) ?? hash("transactionHash", e.transactionHash) ?? named("dex", e.dex)
    case "liquidityChanged":
      return party("pool", e.pool) ?? party("anchorAddress", e.anchorAddress) ?? named("dex", e.dex) ??
        served("anchorSymbol", e.anchorSymbol, MAX_SYMBOL_LENGTH)
    case "tokenListed":
      return named("platform", e.platform) ?? notAfter("paidAt", e.paidAt, e.timestamp)
    case "walletLabeled":
      return party("wallet", e.wallet) ?? named("label", e.label)
    case "walletFunded":
      return party("wallet", e.wallet) ?? party("funder", e.funder) ?? party("asset", e.asset) ?? hash("transactionHash", e.transactionHash) ??
        notAfter("fundedAt", e.fundedAt, e.timestamp) ??
        served("sourceLabel", e.sourceLabel, MAX_TEXT_LENGTH) ?? served("assetSymbol", e.assetSymbol, MAX_SYMBOL_LENGTH)
    case "identityResolved":
      return party("wallet", e.wallet) ?? named("source", e.source) ?? served("handle", e.handle, MAX_TEXT_LENGTH) ??
        served("displayName", e.displayName, MAX_TEXT_LENGTH) ??
        served("avatar", e.avatar, MAX_TEXT_LENGTH) ?? served("twitter", e.twitter, MAX_TEXT_LENGTH) ??
        served("telegram", e.telegram, MAX_TEXT_LENGTH) ?? served("farcaster", e.farcaster, MAX_TEXT_LENGTH)
    default:
      return undefined
  }
}

/**
 * A time an event reports about the past (a funding's `fundedAt`, a listing's `paidAt`): not after
 * the event itself, give or take a minute of clock skew between an indexer's sources (as a token's
 * events before its launch). Unchecked, a funding dated in the year 285,000 would be served.
 */
const notAfter = (field: string, at: number | null, eventTime: number): Rejection | undefined =>
  at !== null && at > eventTime + 60_000 ? fieldRefused(field, `is more than 60 s after the event's own timestamp: it reports something that has happened`) : undefined

/** Lengths of the texts the API serves: a name of a venue or kind, a token's name and symbol, other texts. */
export const MAX_NAME_LENGTH = 64
export const MAX_TOKEN_NAME_LENGTH = 256
export const MAX_SYMBOL_LENGTH = 64
export const MAX_TEXT_LENGTH = 2_048
/**
 * C0 and C1 control characters (and DEL), line and paragraph separators, and invisible format
 * characters (zero-width space, byte-order mark...: Unicode category Cf): in a name they make two
 * venues that read the same differ, or break a client's display.
 */
const controlCharacter = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/u
/**
 * What a name or a transaction hash must not hold beyond those: characters shown as nothing
 * (Unicode's default-ignorable code points: variation selectors, the combining grapheme joiner,
 * the Hangul fillers), the blank braille pattern, and noncharacters (U+FFFE...). "pump.fun" +
 * U+FE0F read as "pump.fun" and was another venue; a hash of one Hangul filler read as nothing.
 */
const invisibleInName = /[\p{Default_Ignorable_Code_Point}\u2800\p{Noncharacter_Code_Point}]/u
/**
 * A control or invisible character, or one shown as nothing (names and hashes hold none; nor do
 * API key names, which the `keys` command lists a line each).
 */
export const hasHiddenCharacter = (value: string): boolean => controlCharacter.test(value) || invisibleInName.test(value)
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
/**
 * Visible ASCII only (no space): what nearly every id, hash and venue is. Such a text holds no
 * control, invisible or space character and no surrogate, and is in NFC, so the checks below
 * answer at once (the Unicode-property patterns cost about a microsecond an event otherwise).
 */
const visibleAscii = /^[\x21-\x7e]*$/

/**
 * A text the API serves (a token's name, a symbol, a label, a profile's fields): well-formed
 * Unicode (a lone surrogate, which JSON.stringify writes as `\ud800`, makes strict JSON parsers
 * refuse the whole response: every read of the token, its boards and its trade pages) and at most
 * `max` characters (a megabyte token name would swell every read that carries it). Control
 * characters are kept: JSON escapes them, and on-chain names hold them.
 */
const served = (field: string, value: string | null, max: number): Rejection | undefined => {
  if (value === null) return undefined
  if (value.length > max) return fieldRefused(field, `is longer than ${max} characters`)
  return !visibleAscii.test(value) && loneSurrogate.test(value) ? fieldRefused(field, `is not well-formed Unicode (a lone surrogate): send U+FFFD in its place`) : undefined
}

/**
 * A name the API serves as a value (a venue, terminal, launchpad, listing platform, annotation
 * kind, label, profile source): not empty (it would read as a venue called ""), at most
 * `MAX_NAME_LENGTH` characters, no control character, well-formed. Checked at ingest only, like
 * the addresses above: a log written before still replays.
 */
const named = (field: string, value: string | null, instead?: string): Rejection | undefined => {
  if (value === null) return undefined
  // visible ASCII is neither blank, hidden, decomposed nor padded: only its length is left to check
  if (value !== "" && visibleAscii.test(value)) return served(field, value, MAX_NAME_LENGTH)
  if (value.trim() === "") return fieldRefused(field, `is empty${value === "" ? "" : " (blank)"}${instead === undefined ? "" : `: send ${instead}`}`)
  if (hasHiddenCharacter(value)) return fieldRefused(field, `has a control or invisible character`)
  // "café" composed and decomposed read the same and would be two venues: one spelling, NFC
  if (value.normalize("NFC") !== value) return fieldRefused(field, `is not in Unicode normalization form C (compose it: "e" + U+0301 is "é")`)
  // " pump.fun" would be a venue apart from "pump.fun" that reads the same
  if (value.trim() !== value) return fieldRefused(field, `starts or ends with a space`)
  return served(field, value, MAX_NAME_LENGTH)
}

/**
 * A transaction hash the API serves as is: one token of visible characters (no space, control or
 * invisible character) and well-formed. Its form differs by chain and indexer, so no more is
 * asked; without the check `"tx\ud800z"` would be accepted and served on every trade page.
 */
const hash = (field: string, value: string | null): Rejection | undefined => {
  if (value === null || visibleAscii.test(value)) return undefined
  if (hasHiddenCharacter(value) || /\s/.test(value)) return fieldRefused(field, `has a space, control or invisible character`)
  return loneSurrogate.test(value) ? fieldRefused(field, `is not well-formed Unicode (a lone surrogate)`) : undefined
}

const metadataRejection = (m: Events.TokenMetadataFields): Rejection | undefined =>
  served("metadata.name", m.name, MAX_TOKEN_NAME_LENGTH) ?? served("metadata.symbol", m.symbol, MAX_SYMBOL_LENGTH) ??
    served("metadata.image", m.image, MAX_TEXT_LENGTH) ?? served("metadata.description", m.description, MAX_TEXT_LENGTH) ??
    served("metadata.website", m.website, MAX_TEXT_LENGTH) ?? served("metadata.twitter", m.twitter, MAX_TEXT_LENGTH) ??
    served("metadata.telegram", m.telegram, MAX_TEXT_LENGTH) ?? served("metadata.discord", m.discord, MAX_TEXT_LENGTH)
