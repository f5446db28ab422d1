import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { TradeContext } from "../../../src/market/TradeFeed.js"
import { ReadRecords, spellTradeId, TradeCodes, tradeIdHalves, TradeRecord, TradeRing } from "../../../src/market/TradeFeed.js"

const contexts: ReadonlyArray<TradeContext> = [
  { token: { chain: "solana", address: "TokA", decimals: 6 }, supply: 10n ** 15n, metadata: { name: "A", symbol: "A" } },
  { token: { chain: "base", address: "0xtokb", decimals: 18 }, supply: 10n ** 33n, metadata: { name: "B", symbol: "B" } }
]
const flagLists: ReadonlyArray<ReadonlyArray<string>> = [[], ["sniper"], ["bundler", "dev", "kol"]]
const identityLists = [[], [{ source: "kol", handle: "h", displayName: "H", avatar: null, twitter: null, telegram: null, farcaster: null }]] as const

/** Trades as a feed receives them, including shapes the columns cannot hold (kept aside). */
const tradeInput = fc.record({
  time: fc.integer({ min: 0, max: 40 }),
  context: fc.constantFrom(...contexts),
  trader: fc.constantFrom("W1", "W2", "0xw3"),
  // a `tradeIdOf` id (halves stored), an id of another shape, or one of the right shape without halves
  id: fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.constant("canonical"), fc.constant("canonical-text")),
  tx: fc.oneof(fc.string({ unit: fc.constantFrom(..."123456789ABCDEFGHJKLMNPQRSTUVWXYZabc"), minLength: 60, maxLength: 88 }), fc.string({ maxLength: 100 }), fc.string({ unit: "binary", maxLength: 10 })),
  side: fc.constantFrom("buy" as const, "sell" as const),
  tokenAmount: fc.bigInt({ min: 1n, max: 10n ** 36n }),
  nativeAmount: fc.bigInt({ min: 0n, max: 10n ** 30n }),
  nativeUsd: fc.bigInt({ min: 0n, max: 10n ** 27n }),
  flags: fc.constantFrom(...flagLists),
  terminal: fc.constantFrom(null, "axiom", "partner", "ünusual-terminal"),
  identities: fc.constantFrom(...identityLists)
})

type Input = typeof tradeInput extends fc.Arbitrary<infer T> ? T : never

const recordOf = (input: Input, seq: number): TradeRecord => {
  let id = input.id
  let a = NaN
  let b = NaN
  if (id === "canonical" || id === "canonical-text") {
    const idHalves = new Float64Array(2)
    tradeIdHalves(`event-${seq}`, idHalves)
    id = spellTradeId(idHalves[0]!, idHalves[1]!)
    if (input.id === "canonical") {
      a = idHalves[0]!
      b = idHalves[1]!
    }
  }
  return new TradeRecord(seq, id, input.context, input.trader, input.tx, input.side, input.tokenAmount, input.nativeAmount, input.nativeUsd, input.flags, input.terminal, input.identities, input.time, a, b)
}

const view = (r: TradeRecord) => ({
  seq: r.seq,
  id: r.id,
  context: r.context,
  trader: r.trader,
  tx: r.transactionHash,
  side: r.side,
  tokenAmount: r.tokenAmount,
  nativeAmount: r.nativeAmount,
  nativeUsd: r.nativeUsd,
  flags: r.flags,
  terminal: r.terminal,
  identities: r.identities,
  timestamp: r.timestamp
})

const newerFirst = (x: TradeRecord, y: TradeRecord) => y.timestamp - x.timestamp || y.seq - x.seq

describe("TradeRing", () => {
  it("keeps the newest trades in (timestamp, seq) order and gives back every field, late arrivals included", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(tradeInput, { maxLength: 60 }), (capacity, inputs) => {
        const ring = new TradeRing(new TradeCodes(), capacity, 2)
        // Reference: the newest `capacity` of every trade pushed, in (timestamp, seq) order; a
        // late arrival older than all of those is dropped at once.
        let model: Array<TradeRecord> = []
        inputs.forEach((input, i) => {
          const record = recordOf(input, i + 1)
          ring.push(record)
          model = [...model, record].sort(newerFirst).slice(0, capacity)
        })
        expect(ring.size).toBe(model.length)
        // `dropped` once more trades were pushed than it holds; then every one dropped is older than every one held
        expect(ring.dropped).toBe(inputs.length > capacity)
        const page = ring.page(null, 1_000)
        expect(page.records.map(view)).toEqual(model.map(view))
        // keyset paging after any held trade, and the chain filter
        for (const after of model) {
          const rest = ring.page({ timestamp: after.timestamp, seq: after.seq }, 1_000, (chain) => chain === "base")
          const expected = model.filter((r) => newerFirst(r, after) > 0 && r.chain === "base")
          expect(rest.records.map(view)).toEqual(expected.map(view))
        }
      })
    )
  })

  it("pages read through ReadRecords give the same trades as fresh reads, the same object for a seq while it is remembered", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.tuple(tradeInput, fc.boolean()), { maxLength: 60 }),
        (capacity, remembered, steps) => {
          const ring = new TradeRing(new TradeCodes(), capacity, 2, capacity > 2 ? 2 : 0)
          const built = new ReadRecords(remembered)
          const handedOut = new Map<number, TradeRecord>()
          steps.forEach(([input, read], i) => {
            ring.push(recordOf(input, i + 1))
            if (!read) return
            // Rows move (late arrivals, wrap-around, blocks leaving) between reads: a remembered
            // record must still be the trade its seq names, field for field.
            const fresh = ring.page(null, 1_000).records
            const viaCache = ring.page(null, 1_000, undefined, built).records
            expect(viaCache.map(view)).toEqual(fresh.map(view))
            for (const record of viaCache) {
              const before = handedOut.get(record.seq)
              if (before !== undefined && built.get(record.seq) === before) expect(record).toBe(before)
              handedOut.set(record.seq, record)
            }
            expect(built.size).toBeLessThanOrEqual(remembered)
          })
          // A page that fits: read again, it hands out the very same objects.
          const fits = new ReadRecords(remembered)
          const once = ring.page(null, remembered, undefined, fits).records
          const twice = ring.page(null, remembered, undefined, fits).records
          twice.forEach((record, k) => expect(record).toBe(once[k]))
        }
      )
    )
  })

  it("with block eviction, hands on every trade it lets go: blocks never overlap, each older than all held, late ones alone", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }), fc.array(tradeInput, { maxLength: 80 }), (capacity, block, inputs) => {
        const evictBlock = Math.min(block, capacity)
        const ring = new TradeRing(new TradeCodes(), capacity, 2, evictBlock)
        const pushed: Array<TradeRecord> = []
        const blocks: Array<ReadonlyArray<TradeRecord>> = []
        const late: Array<TradeRecord> = []
        inputs.forEach((input, i) => {
          const record = recordOf(input, i + 1)
          pushed.push(record)
          const sizeBefore = ring.size
          const left = ring.push(record)
          if (left === undefined) {
            expect(sizeBefore).toBeLessThan(capacity)
            return
          }
          if (left.late) {
            // only the pushed trade, and only when it is older than a trade that already left in a block
            expect(left.trades).toEqual([record])
            expect(blocks.some((b) => newerFirst(b[0]!, record) < 0)).toBe(true)
            expect(ring.size).toBe(sizeBefore)
            late.push(record)
          } else {
            expect(sizeBefore).toBe(capacity)
            expect(left.trades.length).toBe(evictBlock)
            expect([...left.trades].sort(newerFirst)).toEqual(left.trades)
            blocks.push(left.trades)
          }
          // everything held is newer than everything that left in a block
          const held = ring.page(null, 1_000).records
          const oldestHeld = held[held.length - 1]!
          for (const b of blocks) expect(newerFirst(b[0]!, oldestHeld)).toBeGreaterThan(0)
        })
        const held = ring.page(null, 1_000).records
        // nothing lost, nothing twice: held + blocks + late trades are exactly the trades pushed
        const seqs = [...held, ...blocks.flat(), ...late].map((r) => r.seq).sort((a, b) => a - b)
        expect(seqs).toEqual(pushed.map((r) => r.seq))
        // blocks leave oldest first and never overlap: each block is wholly newer than the one before
        for (let i = 1; i < blocks.length; i++) expect(newerFirst(blocks[i]![blocks[i]!.length - 1]!, blocks[i - 1]![0]!)).toBeLessThan(0)
        // the trades read back from the ring are the trades pushed, field for field
        const bySeq = new Map(pushed.map((r) => [r.seq, r]))
        for (const r of [...held, ...blocks.flat()]) expect(view(r)).toEqual(view(bySeq.get(r.seq)!))
        expect(ring.dropped).toBe(blocks.length + late.length > 0)
      }),
      { numRuns: 300 }
    )
  })
})
