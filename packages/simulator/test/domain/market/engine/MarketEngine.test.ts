/**
 * The engine folding simulated markets: whole markets as the service sees them, read back through
 * every served object. Here rather than beside the engine's own tests because the simulator
 * depends on the domain, never the reverse.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import type { MarketEvent } from "@spot/domain"
import { Fixed, MarketEngine, Position, Token, Trade } from "@spot/domain"
import { defaultSimulatorOptions, MarketSimulator } from "../../../../src/MarketSimulator.js"

const start = 1_700_000_000_000
const simulated = (minutes: number, seed = 7): Array<MarketEvent> =>
  new MarketSimulator({ ...defaultSimulatorOptions(start), seed }).runFor(minutes * 60_000)

const fold = (events: ReadonlyArray<MarketEvent>): MarketEngine => {
  const engine = new MarketEngine()
  for (const e of events) expect(engine.apply(e)).toBeUndefined()
  return engine
}

/** Everything the engine serves, as JSON text, in a deterministic order. */
const snapshot = (engine: MarketEngine): string => {
  const parts: Array<string> = []
  for (const token of engine.allTokens()) {
    parts.push(JSON.stringify(token.toWire()))
    for (const record of engine.tokenTradePage(token.chain, token.address, null, 1000).records) parts.push(JSON.stringify(record.trade))
    for (const entry of engine.positionsOfToken(token)) parts.push(JSON.stringify(engine.positionWire(entry)))
  }
  return parts.join("\n")
}

describe("MarketEngine on a simulated market", () => {
  it("folds the same events into byte-identical objects (replay determinism)", () => {
    const events = simulated(4)
    expect(snapshot(fold(events))).toBe(snapshot(fold(events)))
  })

  it("serves only objects its wire schemas accept", () => {
    const engine = fold(simulated(6, 3))
    engine.advanceTo(engine.now)
    const decodeToken = Schema.decodeUnknownSync(Token)
    const decodeTrade = Schema.decodeUnknownSync(Trade)
    const decodePosition = Schema.decodeUnknownSync(Position)
    let tokens = 0
    let trades = 0
    let positions = 0
    for (const token of engine.allTokens()) {
      decodeToken(token.toWire())
      tokens++
      for (const r of engine.tokenTradePage(token.chain, token.address, null, 20).records) {
        decodeTrade(r.trade)
        trades++
      }
      for (const entry of engine.positionsOfToken(token)) {
        decodePosition(engine.positionWire(entry))
        positions++
      }
    }
    expect(tokens).toBeGreaterThan(100)
    expect(trades).toBeGreaterThan(1000)
    expect(positions).toBeGreaterThan(1000)
  })

  it("hands out each changed position once per drain, with its own wallet and token, swaps and transfers alike", () => {
    const engine = new MarketEngine()
    const events = simulated(4, 5)
    let drained = 0
    let viaTransfers = 0
    for (let from = 0; from < events.length; from += 500) {
      const slice = events.slice(from, from + 500)
      for (const event of slice) engine.apply(event)
      const changed = new Set<string>()
      for (const e of slice) {
        if (e.type === "swap") changed.add(`${e.chain}:${e.token}:${e.trader}`)
        if (e.type === "transfer") {
          if (e.from !== null) changed.add(`${e.chain}:${e.token}:${e.from}`)
          if (e.to !== null) changed.add(`${e.chain}:${e.token}:${e.to}`)
        }
      }
      const seen = new Set<string>()
      for (const entry of engine.drainChanges().positions) {
        expect(entry.wallet.address).toBe(entry.state.wallet)
        expect(entry.wallet.chain).toBe(entry.token.chain)
        expect(entry.wallet.positionTokens).toContain(entry.token)
        const key = `${entry.token.chain}:${entry.token.address}:${entry.state.wallet}`
        expect(seen.has(key)).toBe(false)
        seen.add(key)
        expect(changed.has(key)).toBe(true)
        if (!slice.some((e) => e.type === "swap" && e.token === entry.token.address && e.trader === entry.state.wallet)) viaTransfers++
        drained++
      }
    }
    expect(drained).toBeGreaterThan(1000)
    expect(viaTransfers).toBeGreaterThan(10)
  })

  it("keeps every position's holdings equal to the holder book's balance", () => {
    const engine = fold(simulated(5, 11))
    let checked = 0
    for (const token of engine.allTokens()) {
      for (const entry of engine.positionsOfToken(token)) {
        expect(entry.state.holdings).toBe(token.holders.balanceOf(entry.state.wallet))
        checked++
      }
    }
    expect(checked).toBeGreaterThan(1000)
  })

  it("keeps trailing windows nested and holder counts from ever decreasing as the market runs", () => {
    const sim = new MarketSimulator({ ...defaultSimulatorOptions(start), seed: 5 })
    const engine = new MarketEngine()
    const lastCounts = new Map<string, Array<number>>()
    for (let minute = 1; minute <= 8; minute++) {
      for (const e of sim.advance(start + minute * 60_000)) engine.apply(e)
      engine.advanceTo(start + minute * 60_000)
      for (const token of engine.allTokens()) {
        const { stats, holders } = token.toWire()
        const windows = [stats["5m"], stats["30m"], stats["1h"], stats["6h"], stats["24h"]]
        for (let i = 1; i < windows.length; i++) {
          expect(windows[i]!.buyCount).toBeGreaterThanOrEqual(windows[i - 1]!.buyCount)
          expect(windows[i]!.sellCount).toBeGreaterThanOrEqual(windows[i - 1]!.sellCount)
          expect(Fixed.unsafeParse(windows[i]!.volume.usd) >= Fixed.unsafeParse(windows[i - 1]!.volume.usd)).toBe(true)
        }
        const counts = [holders.sniperCount, holders.bundlerCount, holders.insiderCount, holders.freshWalletCount, holders.proTraderCount, holders.partnerCount, holders.phishingCount]
        const before = lastCounts.get(token.key)
        if (before !== undefined) counts.forEach((c, i) => expect(c).toBeGreaterThanOrEqual(before[i]!))
        lastCounts.set(token.key, counts)
      }
    }
  })

  it("folds a swap's poolAfter exactly as a curveProgressed and a liquidityChanged right after it", () => {
    const events = simulated(6, 11)
    const carrying = events.filter((e) => e.type === "swap" && e.poolAfter !== null).length
    expect(carrying).toBeGreaterThan(1_000)
    // The same market, each swap's pool state sent as two events of its own.
    const split: Array<MarketEvent> = []
    for (const e of events) {
      if (e.type !== "swap" || e.poolAfter === null) {
        split.push(e)
        continue
      }
      split.push({ ...e, poolAfter: null })
      const { bondingCurvePct, liquidityNative } = e.poolAfter
      const common = { timestamp: e.timestamp, chain: e.chain, token: e.token }
      if (bondingCurvePct !== null) split.push({ type: "curveProgressed", id: `${e.id}:curve`, ...common, bondingCurvePct })
      split.push({
        type: "liquidityChanged", id: `${e.id}:liquidity`, ...common, pool: e.pool, dex: e.dex,
        anchorAddress: e.quoteAddress, anchorSymbol: e.quoteSymbol, liquidityNative, nativeUsd: e.nativeUsd, block: null
      })
    }
    // Extra events move updatedAt (one change each); everything else must be the same.
    const withoutUpdatedAt = (engine: MarketEngine) =>
      [...engine.allTokens()].map((token) => JSON.stringify(token.toWire())).join("\n").replace(/"updatedAt":\d+/g, "")
    const folded = withoutUpdatedAt(fold(events))
    expect(folded).toContain("bondingCurvePct")
    expect(withoutUpdatedAt(fold(split))).toBe(folded)
    // And a poolAfter is not ignored: dropping them all changes liquidity and curve progress.
    expect(withoutUpdatedAt(fold(events.map((e) => (e.type === "swap" ? { ...e, poolAfter: null } : e))))).not.toBe(folded)
  })

  it("a token's updatedAt after its windows expire is the same whether the clock ticked every second or moved once (a restart replaying the log)", () => {
    const events = simulated(4, 11)
    const end = events[events.length - 1]!.timestamp + 2 * 3_600_000 // two idle hours: the short windows empty
    const live = new MarketEngine()
    let next = 0
    for (let tick = start + 1_000; tick <= end; tick += 1_000) {
      while (next < events.length && events[next]!.timestamp <= tick) live.apply(events[next++]!)
      live.advanceTo(tick)
      live.drainChanges()
    }
    const replayed = new MarketEngine()
    for (const event of events) replayed.apply(event)
    replayed.advanceTo(end)
    const reads = (engine: MarketEngine) => [...engine.allTokens()].map((t) => JSON.stringify(t.toWire()))
    const [a, b] = [reads(live), reads(replayed)]
    expect(a.length).toBeGreaterThan(20)
    expect(a.filter((text, i) => text !== b[i]).length).toBe(0)
  })

  it("events told after the clock passed them (a warm-up or backfill moved to the present after each batch) date the windows they already left as a restart does", () => {
    const events = simulated(4, 11)
    const present = events[events.length - 1]!.timestamp + 3_600_000 // the service's clock, an hour past the last event
    const told = new MarketEngine()
    for (let from = 0; from < events.length; from += 500) {
      for (const event of events.slice(from, from + 500)) told.apply(event)
      told.advanceTo(present) // each batch told at the present, as ingest does
      told.drainChanges()
    }
    const replayed = new MarketEngine()
    for (const event of events) replayed.apply(event)
    replayed.advanceTo(present)
    // The same objects; updatedAt the same moment, give or take the changes told after it: a change
    // told after the object was published at its moment is dated 1 ms later (updatedAt only grows,
    // so a client keeping the later one takes it), which a replay telling nothing in between is not.
    const toldTokens = [...told.allTokens()]
    const replayedTokens = [...replayed.allTokens()]
    expect(toldTokens.length).toBeGreaterThan(20)
    let shifted = 0
    toldTokens.forEach((token, i) => {
      const { updatedAt: a, ...toldRest } = token.toWire()
      const { updatedAt: b, ...replayedRest } = replayedTokens[i]!.toWire()
      expect(toldRest).toEqual(replayedRest)
      expect(a - b).toBeGreaterThanOrEqual(0)
      expect(a - b).toBeLessThan(events.filter((e) => "token" in e && e.token === token.address).length)
      if (a !== b) shifted++
    })
    expect(shifted).toBeLessThan(toldTokens.length / 10)
  })

  it("keeps the all-time highs at or above the current price and market cap over a whole simulated market", () => {
    // Over a whole simulated market: no high is ever below the current value.
    const market = fold(simulated(6, 11))
    for (const t of market.allTokens()) {
      const wire = t.toWire()
      expect(Fixed.unsafeParse(wire.ath.marketCap.usd) >= Fixed.unsafeParse(wire.marketCap.usd)).toBe(true)
      expect(Fixed.unsafeParse(wire.ath.price.usd) >= Fixed.unsafeParse(wire.price.usd)).toBe(true)
    }
  })

  it("no graduated token of a simulated market keeps its emptied curve as liquidity", () => {
    const engine = new MarketEngine()
    for (const e of simulated(8, 9)) engine.apply(e)
    let graduated = 0
    for (const token of engine.allTokens()) {
      const wire = token.toWire()
      if (wire.graduatedAt === null || !token.hasCurve) continue
      graduated++
      const curves = token.pools.filter((pool) => pool.isCurve)
      expect(curves.length).toBeGreaterThan(0)
      for (const pool of curves) expect(pool.liquidityNative).toBe(0n)
      expect(token.deepestPool()!.address).toBe(wire.graduatedToPool)
      expect(wire.dexes[0]).toBe(wire.graduatedToDex)
    }
    expect(graduated).toBeGreaterThan(3)
  })
})
