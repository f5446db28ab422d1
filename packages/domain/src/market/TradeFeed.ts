/**
 * Trades as the API serves them: one immutable record per swap (built once, encoded once) kept in
 * bounded newest-first feeds — one per token and one per identity feed (`kol`, `partnerscan`).
 * Deeper history than a feed holds is the storage layer's to serve.
 */
import type { Chain } from "../Chain.js"
import type { Trade } from "../wire/Trade.js"

export interface TradeRecord {
  /** Engine-assigned, strictly increasing across all trades: the keyset tie-break. */
  readonly seq: number
  readonly timestamp: number
  readonly chain: Chain
  readonly token: string
  readonly trader: string
  /** The full trade object (REST form, with flags and platforms). */
  readonly trade: Trade
  /** The trader's flags at trade time, for the stream's `flags` filter. */
  readonly flags: ReadonlyArray<string>
  /** Terminal the swap routed through, or null. */
  readonly terminal: string | null
  /** The REST JSON of `trade`, filled on first use and reused. */
  json: string | undefined
}

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
