import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { decodePosition, encodePosition } from "../../src/cursor/Cursor.js"
import { isAfterTradePosition, isTradePosition, tradePosition } from "../../src/cursor/TradeKeyset.js"
import { utf8 } from "../support/Utf8.js"

interface StoredTrade {
  readonly timestamp: number
  readonly seq: number
}

// A page's cursor as the position bytes it carries (sealing them is the adapter's, tested there).
type PageCursor = Uint8Array

const newestFirst = (a: StoredTrade, b: StoredTrade): number => b.timestamp - a.timestamp || b.seq - a.seq

/** One page of the store as the endpoint would serve it: newest first, strictly after the cursor. */
const readPage = (store: ReadonlyArray<StoredTrade>, cursor: PageCursor | null, limit: number) => {
  let after: ReturnType<typeof tradePosition> | null = null
  if (cursor !== null) {
    const decoded = decodePosition(utf8, cursor)
    if (decoded === undefined || !isTradePosition(decoded)) throw new Error("bad cursor")
    after = decoded
  }
  const rows = store
    .filter((t) => after === null || isAfterTradePosition(after, t.timestamp, t.seq))
    .sort(newestFirst)
    .slice(0, limit + 1)
  const hasMore = rows.length > limit
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return {
    page,
    hasMore,
    nextCursor: hasMore && last !== undefined ? encodePosition(utf8, tradePosition(last.timestamp, last.seq)) : null
  }
}

describe("trade keyset", () => {
  it("orders by timestamp desc, then seq desc", () => {
    const cursor = tradePosition(1000, 50)
    expect(isAfterTradePosition(cursor, 999, 99)).toBe(true)
    expect(isAfterTradePosition(cursor, 1000, 49)).toBe(true)
    expect(isAfterTradePosition(cursor, 1000, 50)).toBe(false)
    expect(isAfterTradePosition(cursor, 1000, 51)).toBe(false)
    expect(isAfterTradePosition(cursor, 1001, 1)).toBe(false)
  })

  it("recognises only trade positions", () => {
    expect(isTradePosition(tradePosition(1, 2))).toBe(true)
    expect(isTradePosition([1])).toBe(false)
    expect(isTradePosition([1, "2"])).toBe(false)
    expect(isTradePosition([1, 2.5])).toBe(false)
    expect(isAfterTradePosition(["x", null], 1, 1)).toBe(false)
  })

  it("paging while newer trades arrive returns every original trade exactly once, in order", () => {
    const timestamps = fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 60 })
    const pageSize = fc.integer({ min: 1, max: 7 })
    const arrivalsPerPage = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 20 })
    fc.assert(
      fc.property(timestamps, pageSize, arrivalsPerPage, (times, limit, arrivals) => {
        let seq = 0
        const store: Array<StoredTrade> = times.map((timestamp) => ({ timestamp, seq: seq++ }))
        const original = [...store].sort(newestFirst)
        let newest = Math.max(0, ...times)
        const seen: Array<StoredTrade> = []
        let cursor: PageCursor | null = null
        for (let pageIndex = 0; pageIndex < 1000; pageIndex++) {
          const { hasMore, nextCursor, page } = readPage(store, cursor, limit)
          seen.push(...page)
          // Trades executed while the client pages: same or later timestamps, later sequence numbers.
          for (let k = 0; k < (arrivals[pageIndex] ?? 0); k++) store.push({ timestamp: newest + (k % 2), seq: seq++ })
          newest += 1
          if (!hasMore) break
          cursor = nextCursor
        }
        expect(seen).toEqual(original)
      })
    )
  })
})
