/**
 * Pages assembled as bytes (Encoding.tradePageBytes, discoveryBytes) say exactly what the wire
 * objects say, non-ASCII text included, and follow a token's changes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Market } from "@spot/application"
import type { MarketEvent } from "@spot/domain"
import { Events } from "@spot/domain/testing"
import * as Simulator from "@spot/simulator"
import * as Encoding from "../src/api/Encoding.js"

const start = Date.now() - 3 * 60_000
const unicodeToken = "Unicode111111111111111111111111111111111111"
const unicodeName = "Ünïcødé 🚀 猫"

const launch: MarketEvent = Events.launch({
  id: "unicode-launch",
  timestamp: start,
  token: unicodeToken,
  metadata: Events.metadata(unicodeName, "ÜNI", { description: "«quoted» — and \"escaped\"" })
})

const swap = (i: number): MarketEvent =>
  Events.swap({
    id: `unicode-swap-${i}`,
    timestamp: start + 1000 * (i + 1),
    token: unicodeToken,
    pool: "UnicodePoo1111111111111111111111111111111111",
    transactionHash: `unicode-swap-tx-${i}`,
    block: 10 + i
  })

const makeMarket = () => {
  const market = Market.makeMarket()
  const simulator = new Simulator.MarketSimulator({ seed: 5, startTime: start, tradesPerSecond: 20, launchesPerMinute: 20 })
  const outcome = market.apply([launch, swap(0), swap(1), swap(2), ...simulator.runFor(2 * 60_000)])
  expect(outcome.rejected).toEqual([])
  return market
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")

describe("page bodies assembled as bytes", () => {
  it("a discovery page is the columns of the tokens' own JSON, ranked, non-ASCII text intact", () => {
    const market = makeMarket()
    const others = [...market.engine.allTokens()].filter((t) => t.address !== unicodeToken).slice(0, 3)
    const unicode = market.engine.token("solana", unicodeToken)!
    const columns = [
      { column: "newPairs" as const, tokens: [unicode, ...others] },
      { column: "graduated" as const, tokens: [] },
      { column: "graduating" as const, tokens: others.slice(0, 1) }
    ]
    const body = text(Encoding.discoveryBytes(columns))
    expect(JSON.parse(body)).toEqual({
      columns: columns.map((c) => ({
        column: c.column,
        deltas: c.tokens.map((t, i) => ({ chain: t.chain, address: t.address, rank: i + 1, data: JSON.parse(Encoding.tokenJson(t)) }))
      }))
    })
    expect(body).toContain(Encoding.tokenJson(unicode))
    expect(JSON.parse(body).columns[0].deltas[0].data.name).toBe(unicodeName)
  })

  it("a trades page is the trades' own JSON, the cursor and hasMore", () => {
    const market = makeMarket()
    const page = market.engine.tokenTradePage("solana", unicodeToken, null, 2)
    expect(page.records.length).toBe(2)
    for (const [nextCursor, hasMore] of [["AbC-_9", true], [null, false]] as const) {
      const body = text(Encoding.tradePageBytes({ records: page.records, nextCursor, hasMore }))
      expect(body).toBe(`{"trades":[${page.records.map(Encoding.tradeJson).join(",")}],"nextCursor":${JSON.stringify(nextCursor)},"hasMore":${hasMore}}`)
    }
    expect(text(Encoding.tradePageBytes({ records: [], nextCursor: null, hasMore: false }))).toBe(`{"trades":[],"nextCursor":null,"hasMore":false}`)
  })

  it("encodes a trade once however often its page is read: the engine hands out the same record", () => {
    const market = makeMarket()
    const first = market.engine.tokenTradePage("solana", unicodeToken, null, 3).records
    const bytes = first.map(Encoding.tradeBytes)
    const again = market.engine.tokenTradePage("solana", unicodeToken, null, 3).records
    again.forEach((record, i) => {
      expect(record).toBe(first[i])
      expect(Encoding.tradeBytes(record)).toBe(bytes[i])
      expect(text(bytes[i]!)).toBe(Encoding.tradeJson(record))
    })
  })

  it("a token's bytes follow its changes", () => {
    const market = makeMarket()
    const token = market.engine.token("solana", unicodeToken)!
    const before = Encoding.tokenBytes(token)
    expect(Encoding.tokenBytes(token)).toBe(before) // converted once per change
    expect(market.apply([swap(3)]).rejected).toEqual([])
    const after = Encoding.tokenBytes(token)
    expect(after).not.toBe(before)
    expect(text(after)).toBe(Encoding.tokenJson(token))
    expect(text(after)).not.toBe(text(before))
  })
})
