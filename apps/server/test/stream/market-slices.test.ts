/**
 * A big batch's trades reach the stream in slices (Market.publishEvery): the stream hears of the
 * first trades after a slice's fold, not the whole batch's; together the slices are exactly the
 * batch's trades, in order, and no millisecond is split between two slices. Tokens and positions
 * are told once, with the last slice (a token is pushed once per batch).
 */
import { describe, expect, it } from "@effect/vitest"
import type { EngineChanges } from "@spot/domain"
import { tradeIdOf } from "@spot/domain"
import { Market } from "@spot/application"
import { simulatedMarket } from "../http/support/ReadApi.js"

describe("market publication in slices", () => {
  it("publishes a big batch's trades in slices of whole milliseconds; tokens and positions once, at the end", () => {
    const sim = simulatedMarket({ minutes: 2, seed: 41, tradesPerSecond: 80 })
    const events = sim.simulator.advance(sim.endTime + 20_000)
    expect(events.length).toBeGreaterThan(4 * Market.publishEvery)
    const published: Array<EngineChanges> = []
    const unlisten = sim.market.listen((changes) => published.push(changes))
    expect(sim.market.apply(events).rejected).toEqual([])
    unlisten()

    expect(published.length).toBeGreaterThan(2)
    expect(published.length).toBeLessThanOrEqual(Math.ceil(events.length / Market.publishEvery))
    const tradeIds = published.flatMap((changes) => changes.trades.map((t) => t.id))
    expect(tradeIds).toEqual(events.filter((e) => e.type === "swap").map((e) => tradeIdOf(e.id)))
    const last = published.at(-1)!
    for (const changes of published.slice(0, -1)) {
      expect(changes.tokens).toEqual([])
      expect(changes.positions).toEqual([])
    }
    const tokenKeys = last.tokens.map((t) => `${t.chain}:${t.address}`)
    expect(new Set(tokenKeys).size).toBe(tokenKeys.length)
    for (const e of events) if (e.type === "swap") expect(tokenKeys).toContain(`${e.chain}:${e.token}`)
    // each changed position once, by what names it (every slice's drain hands out new entry objects)
    const positionKeys = last.positions.map((p) => `${p.token.chain}:${p.token.address}:${p.state.wallet}`)
    expect(new Set(positionKeys).size).toBe(positionKeys.length)
    expect(last.positions.length).toBeGreaterThan(0)
    for (const e of events) {
      if (e.type === "swap") expect(positionKeys).toContain(`${e.chain}:${sim.market.engine.token(e.chain, e.token)!.address}:${sim.market.engine.wallet(e.chain, e.trader)!.address}`)
    }
    for (let i = 1; i < published.length; i++) {
      const before = published[i - 1]!.trades.at(-1)
      const after = published[i]!.trades[0]
      if (before !== undefined && after !== undefined) expect(after.timestamp).toBeGreaterThan(before.timestamp)
    }

    // a batch the size of a slice, or without listeners, is published once
    const small: Array<EngineChanges> = []
    const stop = sim.market.listen((changes) => small.push(changes))
    sim.market.apply(sim.simulator.advance(sim.endTime + 20_500).slice(0, Market.publishEvery))
    stop()
    expect(small).toHaveLength(1)
  })
})
