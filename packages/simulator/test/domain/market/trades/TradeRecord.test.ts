/**
 * Trade records of simulated markets: archived and rebuilt, and leaving memory in blocks. Here
 * rather than beside the trade feed's own tests because the simulator depends on the domain,
 * never the reverse.
 */
import { describe, expect, it } from "@effect/vitest"
import type { MarketEvent, TradesLeftMemory } from "@spot/domain"
import { MarketEngine, tradesFromArchive, tradesToArchive } from "@spot/domain"
import { defaultSimulatorOptions, MarketSimulator } from "../../../../src/MarketSimulator.js"

const start = 1_700_000_000_000

describe("TradeRecord on a simulated market", () => {
  it("a trade rebuilt from its archived form is the same trade object, flags, terminals, identities and odd metadata included", () => {
    const engine = new MarketEngine()
    const events: Array<MarketEvent> = new MarketSimulator({ ...defaultSimulatorOptions(start), seed: 8 }).runFor(3 * 60_000)
    let checked = 0
    let flagged = 0
    let identified = 0
    let routed = 0
    for (const e of events) {
      // Odd metadata: quotes, backslashes, control and astral characters survive the round trip.
      const event = e.type === "metadataResolved" ? { ...e, metadata: { ...e.metadata, name: `${e.metadata.name} "q" \\ \u0001 😀` } } : e
      expect(engine.apply(event)).toBeUndefined()
      const trades = engine.drainChanges().trades
      const byToken = new Map<string, Array<(typeof trades)[number]>>()
      for (const record of trades) byToken.set(`${record.chain}:${record.token}`, [...(byToken.get(`${record.chain}:${record.token}`) ?? []), record])
      for (const records of byToken.values()) {
        const back = tradesFromArchive(records[0]!.chain, records[0]!.token, tradesToArchive(records))
        expect(back.map((r) => JSON.stringify(r.trade))).toEqual(records.map((r) => JSON.stringify(r.trade)))
        expect(back.map((r) => [r.seq, r.timestamp])).toEqual(records.map((r) => [r.seq, r.timestamp]))
      }
      for (const record of trades) {
        checked++
        if (record.flags.length > 0) flagged++
        if (record.identities.length > 0) identified++
        if (record.terminal !== null) routed++
      }
    }
    expect(checked).toBeGreaterThan(1_000)
    expect(Math.min(flagged, identified, routed)).toBeGreaterThan(0)
    expect(() => tradesFromArchive("solana", "T", JSON.stringify([1, []]))).toThrow(/unknown format/)
  })

  it("keeps each token's newest trades in memory and hands every older one on, exactly once, in blocks that leave oldest first", () => {
    const events: Array<MarketEvent> = new MarketSimulator({ ...defaultSimulatorOptions(start), seed: 5 }).runFor(3 * 60_000)
    const depth = 7
    const engine = new MarketEngine({ tapeRetainMs: 24 * 3_600_000, recentTradesPerToken: depth, identityFeedSize: 100 })
    const all = new MarketEngine({ tapeRetainMs: 24 * 3_600_000, recentTradesPerToken: 1_000_000, identityFeedSize: 100 })
    const left: Array<TradesLeftMemory> = []
    for (const e of events) {
      engine.apply(e)
      all.apply(e)
      left.push(...engine.drainChanges().leftMemory)
    }
    expect(all.drainChanges().leftMemory).toEqual([])
    // in the order they left, with strictly increasing leftAt; half a feed per block
    for (let i = 1; i < left.length; i++) expect(left[i]!.leftAt).toBeGreaterThan(left[i - 1]!.leftAt)
    for (const l of left) expect(l.trades.length).toBe(l.late ? 1 : depth >> 1)
    let checked = 0
    for (const token of all.allTokens()) {
      const full = all.tokenTradePage(token.chain, token.address, null, 1_000_000).records
      const kept = engine.tokenTradePage(token.chain, token.address, null, 1_000_000).records
      // memory holds the newest trades: at most `depth`, at least what a block leaves behind
      expect(kept.length).toBeLessThanOrEqual(depth)
      expect(kept.length).toBeGreaterThanOrEqual(Math.min(full.length, depth - (depth >> 1)))
      expect(kept.map((r) => JSON.stringify(r.trade))).toEqual(full.slice(0, kept.length).map((r) => JSON.stringify(r.trade)))
      // memory plus what left it is the whole history, each trade once and the same trade
      const gone = left.filter((l) => l.chain === token.chain && l.token === token.address).flatMap((l) => l.trades)
      const rebuilt = [...kept, ...gone].sort((a, b) => b.timestamp - a.timestamp || b.seq - a.seq)
      expect(rebuilt.map((r) => JSON.stringify(r.trade))).toEqual(full.map((r) => JSON.stringify(r.trade)))
      expect(engine.tokenTradePage(token.chain, token.address, null, 1_000_000).olderElsewhere).toBe(gone.length > 0)
      checked += gone.length > 0 ? 1 : 0
    }
    expect(checked).toBeGreaterThan(0)
  })
})
