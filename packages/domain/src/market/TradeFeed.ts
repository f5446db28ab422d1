/**
 * Trades as the API serves them: one immutable record per swap (built once, encoded once) kept in
 * bounded newest-first feeds — one per token and one per identity feed (`kol`, `partnerscan`).
 * Deeper history than a feed holds is the storage layer's to serve.
 */
import type { Chain } from "../Chain.js"
import { nativeAsset } from "../Chain.js"
import * as Fixed from "../Fixed.js"
import type { IdentityProfile } from "../wire/Common.js"
import type { Trade } from "../wire/Trade.js"

/** Figures of one trade as folded; the wire object is built from them. */
export interface TradeFacts {
  /** The trade id (`tradeIdOf` of the swap event's id). */
  readonly tradeId: string
  readonly chain: Chain
  readonly token: string
  readonly name: string
  readonly symbol: string
  readonly trader: string
  readonly transactionHash: string
  readonly side: "buy" | "sell"
  readonly amount: Fixed.Fixed
  readonly priceNative: Fixed.Fixed
  readonly priceUsd: Fixed.Fixed
  readonly valueNative: Fixed.Fixed
  readonly valueUsd: Fixed.Fixed
  readonly marketCapNative: Fixed.Fixed
  readonly marketCapUsd: Fixed.Fixed
  /** The trader's flags at trade time. */
  readonly flags: ReadonlyArray<string>
  /** Terminal the swap routed through, or null. */
  readonly terminal: string | null
  readonly identities: ReadonlyArray<IdentityProfile>
  readonly timestamp: number
}

/** What a trade keeps of its token: the token book itself (these fields never change). */
export interface TradedToken {
  readonly chain: Chain
  readonly address: string
  readonly decimals: number
}

/**
 * One trade as the API serves it. Immutable, and small: it keeps only the swap's inputs plus
 * references shared with the rest of the engine (the token's address, name, symbol and supply at
 * trade time, the wallet's address and identities, the chain's native USD price, an interned flag
 * list), and derives every decimal figure of the wire object on first use — most trades are never
 * read one by one. The derivation is the arithmetic the engine folds with, so the figures are the
 * same exact values. The encoded JSON is cached by the first encoder.
 */
export class TradeRecord {
  private wire: Trade | undefined = undefined
  /** The REST JSON of `trade`, filled by the first encoder and reused. */
  json: string | undefined = undefined

  constructor(
    /** Engine-assigned, strictly increasing across all trades: the keyset tie-break. */
    readonly seq: number,
    /** The stable opaque trade id (`tradeIdOf` of the swap event's id). */
    readonly id: string,
    /** The traded token's fixed facts (shared by every trade of the token). */
    readonly tokenFacts: TradedToken,
    /** The token's total supply (base units) at trade time. */
    readonly supply: bigint,
    /** The token's metadata at trade time (replaced whole when it resolves, so this is a snapshot). */
    readonly metadata: { readonly name: string; readonly symbol: string },
    readonly trader: string,
    readonly transactionHash: string,
    readonly side: "buy" | "sell",
    /** Token base units traded. */
    readonly tokenAmount: bigint,
    /** Value of the swap in the chain's native base units. */
    readonly nativeAmount: bigint,
    /** USD per whole native unit at execution. */
    readonly nativeUsd: Fixed.Fixed,
    /** The trader's flags at trade time (a shared frozen list). */
    readonly flags: ReadonlyArray<string>,
    /** Terminal the swap routed through, or null. */
    readonly terminal: string | null,
    readonly identities: ReadonlyArray<IdentityProfile>,
    readonly timestamp: number
  ) {}

  get chain(): Chain {
    return this.tokenFacts.chain
  }
  get token(): string {
    return this.tokenFacts.address
  }
  get decimals(): number {
    return this.tokenFacts.decimals
  }
  get name(): string {
    return this.metadata.name
  }
  get symbol(): string {
    return this.metadata.symbol
  }

  /** The full trade object (REST form, with flags and platforms). */
  get trade(): Trade {
    if (this.wire === undefined) this.wire = tradeWire(this.facts)
    return this.wire
  }

  /** The trade's figures, derived exactly as the engine computed them when it folded the swap. */
  get facts(): TradeFacts {
    const valueNative = Fixed.fromBaseUnits(this.nativeAmount, nativeAsset[this.chain].decimals)
    const valueUsd = Fixed.mul(valueNative, this.nativeUsd)
    const amount = Fixed.fromBaseUnits(this.tokenAmount, this.decimals)
    const priceNative = Fixed.div(valueNative, amount)
    const priceUsd = Fixed.div(valueUsd, amount)
    const supply = Fixed.fromBaseUnits(this.supply, this.decimals)
    return {
      tradeId: this.id,
      chain: this.chain,
      token: this.token,
      name: this.name,
      symbol: this.symbol,
      trader: this.trader,
      transactionHash: this.transactionHash,
      side: this.side,
      amount,
      priceNative,
      priceUsd,
      valueNative,
      valueUsd,
      marketCapNative: Fixed.mul(priceNative, supply),
      marketCapUsd: Fixed.mul(priceUsd, supply),
      flags: this.flags,
      terminal: this.terminal,
      identities: this.identities,
      timestamp: this.timestamp
    }
  }
}

const money = (native: Fixed.Fixed, usd: Fixed.Fixed) => ({ native: Fixed.format(native), usd: Fixed.format(usd) })

/**
 * The stable opaque trade id of a swap event: derived from the event identity, never parsed.
 * "t" + two independent 53-bit cyrb53 hashes (seeds 1 and 2) in base 36, 11 digits each. Both
 * hashes are taken in one pass and the id is spelled straight into one flat string, since the
 * engine computes one per swap.
 */
export const tradeIdOf = (eventId: string): string => {
  let a1 = 0xdeadbeef ^ 1
  let a2 = 0x41c6ce57 ^ 1
  let b1 = 0xdeadbeef ^ 2
  let b2 = 0x41c6ce57 ^ 2
  for (let i = 0; i < eventId.length; i++) {
    const ch = eventId.charCodeAt(i)
    a1 = Math.imul(a1 ^ ch, 2654435761)
    a2 = Math.imul(a2 ^ ch, 1597334677)
    b1 = Math.imul(b1 ^ ch, 2654435761)
    b2 = Math.imul(b2 ^ ch, 1597334677)
  }
  idCodes[0] = 116 // "t"
  spellBase36(finishCyrb53(a1, a2), 1)
  spellBase36(finishCyrb53(b1, b2), 12)
  return String.fromCharCode.apply(null, idCodes)
}

const finishCyrb53 = (h1: number, h2: number): number => {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

/** Character codes of the id being spelled (reused: single-threaded, never re-entered). */
const idCodes: Array<number> = new Array<number>(23).fill(48)

/** 36^6 and 36^2: `value` is split so each part's digits come from small-integer arithmetic. */
const BASE36_6 = 2_176_782_336
const BASE36_2 = 1_296

/** Writes `value` (< 2^53 < 36^11) as 11 base-36 digits, zero-padded, at `at`. */
const spellBase36 = (value: number, at: number): void => {
  const high = Math.floor(value / BASE36_6) // < 36^5
  const low = value - high * BASE36_6 // < 36^6
  const lowHigh = Math.floor(low / BASE36_2) // < 36^4
  spellDigits(low - lowHigh * BASE36_2, at + 9, 2)
  spellDigits(lowHigh, at + 5, 4)
  spellDigits(high, at, 5)
}

/** `count` base-36 digits of the small integer `value`, zero-padded, at `at`. */
const spellDigits = (value: number, at: number, count: number): void => {
  let rest = value | 0
  for (let i = at + count - 1; i >= at; i--) {
    const digit = rest % 36
    idCodes[i] = digit < 10 ? 48 + digit : 87 + digit
    rest = (rest / 36) | 0
  }
}

export const tradeWire = (f: TradeFacts): Trade => ({
  id: f.tradeId,
  chain: f.chain,
  token: f.token,
  name: f.name,
  symbol: f.symbol,
  trader: f.trader,
  transactionHash: f.transactionHash,
  side: f.side,
  amount: Fixed.format(f.amount),
  price: money(f.priceNative, f.priceUsd),
  volume: money(f.valueNative, f.valueUsd),
  marketCap: money(f.marketCapNative, f.marketCapUsd),
  ...(f.flags.length > 0 ? { flags: [...f.flags] } : {}),
  ...(f.terminal !== null ? { platforms: [{ platform: f.terminal }] } : {}),
  ...(f.identities.length > 0 ? { identities: [...f.identities] } : {}),
  timestamp: f.timestamp
})

const isNewer = (a: TradeRecord, b: TradeRecord): boolean =>
  a.timestamp > b.timestamp || (a.timestamp === b.timestamp && a.seq > b.seq)

/** A bounded ring of trade records, oldest dropped first; iterated newest first. */
export class TradeRing {
  private items: Array<TradeRecord | undefined>
  private head = 0 // index of the next write
  private count = 0

  constructor(private readonly capacity: number, initial = Math.min(capacity, 8)) {
    this.items = new Array(initial)
  }

  get size(): number {
    return this.count
  }

  push(record: TradeRecord): void {
    if (this.count < this.capacity && this.count === this.items.length) {
      // grow: unroll into a larger array, oldest first
      const grown = new Array<TradeRecord | undefined>(Math.min(this.capacity, this.items.length * 2))
      for (let i = 0; i < this.count; i++) grown[i] = this.at(this.count - 1 - i)
      this.items = grown
      this.head = this.count
    }
    this.items[this.head] = record
    this.head = (this.head + 1) % this.items.length
    if (this.count < this.capacity) this.count++
    // A late arrival (older than the newest held) moves back to its place in (timestamp, seq) order.
    for (let i = 0; i + 1 < this.count && isNewer(this.at(i + 1), this.at(i)); i++) {
      const newer = this.at(i + 1)
      this.setAt(i + 1, this.at(i))
      this.setAt(i, newer)
    }
  }

  private setAt(i: number, record: TradeRecord): void {
    const n = this.items.length
    this.items[(this.head - 1 - i + n * 2) % n] = record
  }

  /** i-th newest record (0 = newest). */
  at(i: number): TradeRecord {
    const n = this.items.length
    return this.items[(this.head - 1 - i + n * 2) % n]!
  }

  /**
   * Up to `limit` records strictly older than (timestamp, seq) — or from the newest when `after`
   * is null — newest first, and whether more remain.
   */
  page(
    after: { readonly timestamp: number; readonly seq: number } | null,
    limit: number,
    keep: (r: TradeRecord) => boolean = () => true
  ): { readonly records: Array<TradeRecord>; readonly hasMore: boolean } {
    let i = 0
    if (after !== null) {
      // records are in (timestamp, seq) order; binary search the first strictly older one
      let lo = 0
      let hi = this.count
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        const r = this.at(mid)
        const older = r.timestamp < after.timestamp || (r.timestamp === after.timestamp && r.seq < after.seq)
        if (older) hi = mid
        else lo = mid + 1
      }
      i = lo
    }
    const records: Array<TradeRecord> = []
    for (; i < this.count; i++) {
      const r = this.at(i)
      if (!keep(r)) continue
      if (records.length === limit) return { records, hasMore: true }
      records.push(r)
    }
    return { records, hasMore: false }
  }
}
