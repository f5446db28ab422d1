/**
 * Hand-written fast paths for the `MarketEvent` schema's JSON form, for the ingest hot path:
 *
 * - `decodeMarketEventFast(raw)`: the decoded event when `raw` is a well-formed event in the plain
 *   form an indexer sends, `undefined` otherwise. `undefined` does NOT mean invalid: the caller
 *   then decodes with the schema (`decodeMarketEvent`), which accepts or reports the problem with
 *   its field path. It accepts only a subset of what the schema accepts (plain objects; amounts as
 *   digit strings without sign) and gives the value the schema would give: same fields, same
 *   order, extra properties dropped. So `fast ?? schema` is the schema.
 * - `encodeMarketEventFast(event)` is `encodeMarketEvent(event)` (fields in schema order, amounts as
 *   decimal strings), and `marketEventJson(event)` its JSON text: the stored form of an event in
 *   the event log.
 *
 * Both are checked against the schema by property tests (test/events/MarketEventJson.test.ts): a
 * change to the schema that these do not follow fails there.
 */
import { chains } from "../Chain.js"
import { SCALE_DIGITS } from "../Fixed.js"
import type { Chain } from "../Chain.js"
import type { MarketEvent, MarketEventJson, PoolAfterSwap, TokenMetadataFields } from "./MarketEvent.js"

// ---------------------------------------------------------------------------------------------
// Decoding

/** Thrown (and caught below) when a field is not in the fast path's accepted form. */
const NOT_FAST: unique symbol = Symbol("NotFast")
type Raw = Record<string, unknown>

const plainObject = (u: unknown): Raw => {
  if (typeof u !== "object" || u === null) throw NOT_FAST
  const proto = Object.getPrototypeOf(u)
  if (proto !== Object.prototype && proto !== null) throw NOT_FAST
  return u as Raw
}

const text = (u: unknown, min: number, max: number): string => {
  if (typeof u !== "string" || u.length < min || u.length > max) throw NOT_FAST
  return u
}
const anyText = (u: unknown): string => {
  if (typeof u !== "string") throw NOT_FAST
  return u
}
const nullOrText = (u: unknown): string | null => (u === null ? null : anyText(u))
const nullOrBoundedText = (u: unknown, min: number, max: number): string | null => (u === null ? null : text(u, min, max))
const address = (u: unknown): string => text(u, 1, 128)
const txHash = (u: unknown): string => text(u, 1, 160)
const int = (u: unknown, min: number, max: number): number => {
  if (!Number.isSafeInteger(u) || (u as number) < min || (u as number) > max) throw NOT_FAST
  return u as number
}
const natural = (u: unknown): number => int(u, 0, Number.MAX_SAFE_INTEGER)
const decimals = (u: unknown): number => int(u, 0, 36)
const tokenDecimals = (u: unknown): number => int(u, 0, SCALE_DIGITS)
const bool = (u: unknown): boolean => {
  if (typeof u !== "boolean") throw NOT_FAST
  return u
}

const digits = /^\d+$/
/** Unsigned base units: digits only (the schema also takes `-0` and friends; those go the slow way). */
const units = (u: unknown): bigint => {
  if (typeof u !== "string" || !digits.test(u)) throw NOT_FAST
  return BigInt(u)
}
const positiveUnits = (u: unknown): bigint => {
  const value = units(u)
  if (value === 0n) throw NOT_FAST
  return value
}
const decimalPattern = /^\d+(\.\d+)?$/
const decimalText = (u: unknown): string => {
  if (typeof u !== "string" || !decimalPattern.test(u)) throw NOT_FAST
  return u
}
const chain = (u: unknown): Chain => {
  if (typeof u !== "string" || !(chains as ReadonlyArray<string>).includes(u)) throw NOT_FAST
  return u as Chain
}
const id = (u: unknown): string => text(u, 1, 256)

const optionalText = (u: unknown): string | null => nullOrBoundedText(u, 0, 2048)
const metadata = (u: unknown): TokenMetadataFields => {
  const m = plainObject(u)
  return {
    name: anyText(m.name),
    symbol: anyText(m.symbol),
    image: optionalText(m.image),
    description: optionalText(m.description),
    website: optionalText(m.website),
    twitter: optionalText(m.twitter),
    telegram: optionalText(m.telegram),
    discord: optionalText(m.discord)
  }
}
const stringArray = (u: unknown): Array<string> => {
  if (!Array.isArray(u)) throw NOT_FAST
  const out = new Array<string>(u.length)
  for (let i = 0; i < u.length; i++) out[i] = anyText(u[i])
  return out
}

/** A swap's `poolAfter`: absent (an indexer that never sends it) decodes to null, as in the schema. */
const poolAfter = (o: Raw): PoolAfterSwap | null => {
  if (!Object.hasOwn(o, "poolAfter")) return null
  const u = o.poolAfter
  if (u === null) return null
  const p = plainObject(u)
  return { liquidityNative: units(p.liquidityNative), bondingCurvePct: p.bondingCurvePct === null ? null : decimalText(p.bondingCurvePct) }
}

// Each builds the event in the schema's field order (the decoded objects are shaped alike).
const decoders: Record<string, (o: Raw) => MarketEvent> = {
  tokenLaunched: (o) => ({
    type: "tokenLaunched",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    token: address(o.token),
    creator: address(o.creator),
    decimals: tokenDecimals(o.decimals),
    supply: units(o.supply),
    launchpad: nullOrText(o.launchpad),
    hasCurve: bool(o.hasCurve),
    block: natural(o.block),
    transactionHash: txHash(o.transactionHash),
    annotations: stringArray(o.annotations),
    metadata: o.metadata === null ? null : metadata(o.metadata)
  }),
  swap: (o) => {
    const fees = plainObject(o.fees)
    return {
      type: "swap",
      id: id(o.id),
      timestamp: natural(o.timestamp),
      chain: chain(o.chain),
      token: address(o.token),
      pool: address(o.pool),
      dex: anyText(o.dex),
      trader: address(o.trader),
      transactionHash: txHash(o.transactionHash),
      block: natural(o.block),
      indexInBlock: natural(o.indexInBlock),
      side: o.side === "buy" ? "buy" : o.side === "sell" ? "sell" : fail(),
      tokenAmount: positiveUnits(o.tokenAmount),
      quoteAmount: units(o.quoteAmount),
      quoteAddress: address(o.quoteAddress),
      quoteSymbol: anyText(o.quoteSymbol),
      quoteDecimals: decimals(o.quoteDecimals),
      nativeAmount: units(o.nativeAmount),
      nativeUsd: decimalText(o.nativeUsd),
      fees: {
        transaction: units(fees.transaction),
        validator: units(fees.validator),
        platform: units(fees.platform),
        dex: units(fees.dex)
      },
      terminal: nullOrText(o.terminal),
      poolAfter: poolAfter(o)
    }
  },
  transfer: (o) => ({
    type: "transfer",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    token: address(o.token),
    from: o.from === null ? null : address(o.from),
    to: o.to === null ? null : address(o.to),
    amount: positiveUnits(o.amount),
    transactionHash: txHash(o.transactionHash),
    block: natural(o.block)
  }),
  metadataResolved: (o) => ({
    type: "metadataResolved",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    token: address(o.token),
    metadata: metadata(o.metadata)
  }),
  walletFunded: (o) => ({
    type: "walletFunded",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    wallet: address(o.wallet),
    funder: o.funder === null ? null : address(o.funder),
    sourceKind: o.sourceKind === null ? null : o.sourceKind === "cex" ? "cex" : o.sourceKind === "wallet" ? "wallet" : fail(),
    sourceLabel: nullOrText(o.sourceLabel),
    amount: o.amount === null ? null : units(o.amount),
    asset: o.asset === null ? null : address(o.asset),
    assetSymbol: nullOrText(o.assetSymbol),
    assetDecimals: o.assetDecimals === null ? null : decimals(o.assetDecimals),
    fundedAt: o.fundedAt === null ? null : natural(o.fundedAt),
    transactionHash: o.transactionHash === null ? null : txHash(o.transactionHash)
  }),
  curveProgressed: (o) => ({
    type: "curveProgressed",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    token: address(o.token),
    bondingCurvePct: decimalText(o.bondingCurvePct)
  }),
  graduated: (o) => ({
    type: "graduated",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    token: address(o.token),
    pool: address(o.pool),
    dex: anyText(o.dex),
    transactionHash: txHash(o.transactionHash)
  }),
  liquidityChanged: (o) => ({
    type: "liquidityChanged",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    token: address(o.token),
    pool: address(o.pool),
    dex: anyText(o.dex),
    anchorAddress: address(o.anchorAddress),
    anchorSymbol: anyText(o.anchorSymbol),
    liquidityNative: units(o.liquidityNative),
    nativeUsd: decimalText(o.nativeUsd),
    // absent (an indexer that does not send it, a log written before it existed): null, as in the schema
    block: Object.hasOwn(o, "block") && o.block !== null ? natural(o.block) : null
  }),
  securityScored: (o) => ({
    type: "securityScored",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    token: address(o.token),
    mintDisabled: bool(o.mintDisabled),
    transferBlockable: bool(o.transferBlockable),
    lpBurntPct: o.lpBurntPct === null ? null : decimalText(o.lpBurntPct),
    transferFeeBps: o.transferFeeBps === null ? null : int(o.transferFeeBps, 0, 10_000)
  }),
  tokenListed: (o) => ({
    type: "tokenListed",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    token: address(o.token),
    platform: anyText(o.platform),
    isPaid: bool(o.isPaid),
    paidAt: o.paidAt === null ? null : natural(o.paidAt)
  }),
  walletLabeled: (o) => ({
    type: "walletLabeled",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    wallet: address(o.wallet),
    label: text(o.label, 1, 64),
    active: bool(o.active)
  }),
  identityResolved: (o) => ({
    type: "identityResolved",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    wallet: address(o.wallet),
    source: text(o.source, 1, Number.POSITIVE_INFINITY),
    handle: nullOrText(o.handle),
    displayName: nullOrText(o.displayName),
    avatar: nullOrText(o.avatar),
    twitter: nullOrText(o.twitter),
    telegram: nullOrText(o.telegram),
    farcaster: nullOrText(o.farcaster)
  }),
  nativePrice: (o) => ({
    type: "nativePrice",
    id: id(o.id),
    timestamp: natural(o.timestamp),
    chain: chain(o.chain),
    usd: decimalText(o.usd)
  })
}

function fail(): never {
  throw NOT_FAST
}

/**
 * The decoded event when `raw` is an event in the plain wire form, else `undefined` (then decode
 * with the schema: it may still be valid, and if not, the schema says why).
 */
export const decodeMarketEventFast = (raw: unknown): MarketEvent | undefined => {
  try {
    const o = plainObject(raw)
    const type = o.type
    if (typeof type !== "string" || !Object.hasOwn(decoders, type)) return undefined
    return decoders[type]!(o)
  } catch (error) {
    if (error === NOT_FAST) return undefined
    throw error
  }
}

/** How many fields each event type has (checked against the schema by the tests). */
export const fieldCounts: Readonly<Record<MarketEvent["type"], number>> = {
  tokenLaunched: 14,
  swap: 22,
  transfer: 10,
  metadataResolved: 6,
  walletFunded: 14,
  curveProgressed: 6,
  graduated: 8,
  liquidityChanged: 12,
  securityScored: 9,
  tokenListed: 8,
  walletLabeled: 7,
  identityResolved: 12,
  nativePrice: 5
}
const feeFields = 4
const poolAfterFields = 2
const metadataFieldCount = 8

const countKeys = (o: object): number => {
  let n = 0
  for (const _ in o) n++
  return n
}

/**
 * True when `raw`, the JSON form `event` was decoded from, holds nothing but the event's fields
 * (nested ones included): then its JSON text, whatever its spacing or key order, decodes to
 * `event` and carries nothing a later version of the schema could read differently, so it can be
 * stored as it came. The caller knows `raw` decodes to `event`.
 */
export const carriesOnlyEventFields = (raw: object, event: MarketEvent): boolean => {
  if (countKeys(raw) !== fieldCounts[event.type]) return false
  const o = raw as Raw
  switch (event.type) {
    case "swap":
      return countKeys(o.fees as object) === feeFields && (o.poolAfter === null || countKeys(o.poolAfter as object) === poolAfterFields)
    case "tokenLaunched":
      return o.metadata === null || countKeys(o.metadata as object) === metadataFieldCount
    case "metadataResolved":
      return countKeys(o.metadata as object) === metadataFieldCount
    default:
      return true
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding: a plain object in the schema's field order, then JSON.stringify (faster than
// concatenating the text by hand: V8 serializes objects of one shape on a fast path, and the result
// is a flat string the driver writes without flattening a rope first).

const s = (value: bigint): string => `${value}`
const sn = (value: bigint | null): string | null => (value === null ? null : `${value}`)

const metadataJson = (m: TokenMetadataFields): TokenMetadataFields => ({
  name: m.name,
  symbol: m.symbol,
  image: m.image,
  description: m.description,
  website: m.website,
  twitter: m.twitter,
  telegram: m.telegram,
  discord: m.discord
})

/** `encodeMarketEvent(event)` without the schema walk: the event's JSON form, fields in schema order. */
export const encodeMarketEventFast = (e: MarketEvent): MarketEventJson => {
  switch (e.type) {
    case "swap":
      return {
        type: "swap",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        token: e.token,
        pool: e.pool,
        dex: e.dex,
        trader: e.trader,
        transactionHash: e.transactionHash,
        block: e.block,
        indexInBlock: e.indexInBlock,
        side: e.side,
        tokenAmount: s(e.tokenAmount),
        quoteAmount: s(e.quoteAmount),
        quoteAddress: e.quoteAddress,
        quoteSymbol: e.quoteSymbol,
        quoteDecimals: e.quoteDecimals,
        nativeAmount: s(e.nativeAmount),
        nativeUsd: e.nativeUsd,
        fees: { transaction: s(e.fees.transaction), validator: s(e.fees.validator), platform: s(e.fees.platform), dex: s(e.fees.dex) },
        terminal: e.terminal,
        poolAfter: e.poolAfter === null ? null : { liquidityNative: s(e.poolAfter.liquidityNative), bondingCurvePct: e.poolAfter.bondingCurvePct }
      }
    case "tokenLaunched":
      return {
        type: "tokenLaunched",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        token: e.token,
        creator: e.creator,
        decimals: e.decimals,
        supply: s(e.supply),
        launchpad: e.launchpad,
        hasCurve: e.hasCurve,
        block: e.block,
        transactionHash: e.transactionHash,
        annotations: e.annotations.slice(),
        metadata: e.metadata === null ? null : metadataJson(e.metadata)
      }
    case "transfer":
      return {
        type: "transfer",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        token: e.token,
        from: e.from,
        to: e.to,
        amount: s(e.amount),
        transactionHash: e.transactionHash,
        block: e.block
      }
    case "metadataResolved":
      return { type: "metadataResolved", id: e.id, timestamp: e.timestamp, chain: e.chain, token: e.token, metadata: metadataJson(e.metadata) }
    case "walletFunded":
      return {
        type: "walletFunded",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        wallet: e.wallet,
        funder: e.funder,
        sourceKind: e.sourceKind,
        sourceLabel: e.sourceLabel,
        amount: sn(e.amount),
        asset: e.asset,
        assetSymbol: e.assetSymbol,
        assetDecimals: e.assetDecimals,
        fundedAt: e.fundedAt,
        transactionHash: e.transactionHash
      }
    case "curveProgressed":
      return { type: "curveProgressed", id: e.id, timestamp: e.timestamp, chain: e.chain, token: e.token, bondingCurvePct: e.bondingCurvePct }
    case "graduated":
      return {
        type: "graduated",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        token: e.token,
        pool: e.pool,
        dex: e.dex,
        transactionHash: e.transactionHash
      }
    case "liquidityChanged":
      return {
        type: "liquidityChanged",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        token: e.token,
        pool: e.pool,
        dex: e.dex,
        anchorAddress: e.anchorAddress,
        anchorSymbol: e.anchorSymbol,
        liquidityNative: s(e.liquidityNative),
        nativeUsd: e.nativeUsd,
        block: e.block
      }
    case "securityScored":
      return {
        type: "securityScored",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        token: e.token,
        mintDisabled: e.mintDisabled,
        transferBlockable: e.transferBlockable,
        lpBurntPct: e.lpBurntPct,
        transferFeeBps: e.transferFeeBps
      }
    case "tokenListed":
      return {
        type: "tokenListed",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        token: e.token,
        platform: e.platform,
        isPaid: e.isPaid,
        paidAt: e.paidAt
      }
    case "walletLabeled":
      return { type: "walletLabeled", id: e.id, timestamp: e.timestamp, chain: e.chain, wallet: e.wallet, label: e.label, active: e.active }
    case "identityResolved":
      return {
        type: "identityResolved",
        id: e.id,
        timestamp: e.timestamp,
        chain: e.chain,
        wallet: e.wallet,
        source: e.source,
        handle: e.handle,
        displayName: e.displayName,
        avatar: e.avatar,
        twitter: e.twitter,
        telegram: e.telegram,
        farcaster: e.farcaster
      }
    case "nativePrice":
      return { type: "nativePrice", id: e.id, timestamp: e.timestamp, chain: e.chain, usd: e.usd }
  }
}

/** `JSON.stringify(encodeMarketEvent(event))`, byte for byte: the stored form of an event. */
export const marketEventJson = (event: MarketEvent): string => JSON.stringify(encodeMarketEventFast(event))
