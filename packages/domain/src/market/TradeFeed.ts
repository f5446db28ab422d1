/**
 * Trades as the API serves them: one immutable record per swap (built once, encoded once) kept in
 * bounded newest-first feeds — one per token and one per identity feed (`kol`, `partnerscan`).
 * Deeper history than a feed holds is the storage layer's to serve.
 */
import type { Chain } from "../Chain.js"
import * as Fixed from "../Fixed.js"
import type { IdentityProfile } from "../wire/Common.js"
import type { Trade } from "../wire/Trade.js"

/** Facts of one trade as folded; the wire object is built from them on first use. */
export interface TradeFacts {
  readonly eventId: string
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

/**
 * One trade as the API serves it. Immutable: the wire object is built once, on first use (most
 * trades are never read one by one), and its JSON is cached by the first encoder.
 */
export class TradeRecord {
  private wire: Trade | undefined = undefined
  /** The REST JSON of `trade`, filled by the first encoder and reused. */
  json: string | undefined = undefined

  constructor(
    /** Engine-assigned, strictly increasing across all trades: the keyset tie-break. */
    readonly seq: number,
    readonly facts: TradeFacts
  ) {}

  get timestamp(): number {
    return this.facts.timestamp
  }
  get chain(): Chain {
    return this.facts.chain
  }
  get token(): string {
    return this.facts.token
  }
  get trader(): string {
    return this.facts.trader
  }
  get flags(): ReadonlyArray<string> {
    return this.facts.flags
  }
  get terminal(): string | null {
    return this.facts.terminal
  }

  /** The full trade object (REST form, with flags and platforms). */
  get trade(): Trade {
    if (this.wire === undefined) this.wire = tradeWire(this.facts)
    return this.wire
  }
}

const money = (native: Fixed.Fixed, usd: Fixed.Fixed) => ({ native: Fixed.format(native), usd: Fixed.format(usd) })

/** The stable opaque trade id of a swap event: derived from the event identity, never parsed. */
export const tradeIdOf = (eventId: string): string =>
  `t${cyrb53(eventId, 1).toString(36).padStart(11, "0")}${cyrb53(eventId, 2).toString(36).padStart(11, "0")}`

/** Two independent 53-bit string hashes (cyrb53), for compact opaque trade ids. */
const cyrb53 = (text: string, seed: number): number => {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

export const tradeWire = (f: TradeFacts): Trade => ({
  id: tradeIdOf(f.eventId),
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
