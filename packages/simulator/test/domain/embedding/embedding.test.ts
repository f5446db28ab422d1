/**
 * The domain package as another service embeds it (docs/embedding.md), fed by the simulator
 * package: only their public indexes, the calling contract that doc states, and the same schemas
 * the service's /openapi.json is made from.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { Candle, Discovery, MarketEngine, Position, rejectionMessage, SnapshotMerge, Token, Trade } from "@spot/domain"
import * as Simulator from "../../../src/index.js"

const startTime = 1_700_000_000_000

/** The doc's example: a simulated market folded a second at a time, changes drained per batch. */
const foldMinutes = (minutes: number, batchSeconds = 1) => {
  const simulator = new Simulator.MarketSimulator({ seed: 7, startTime, tradesPerSecond: 40, launchesPerMinute: 30 })
  const engine = new MarketEngine()
  for (let second = 0; second < minutes * 60;) {
    second = Math.min(second + batchSeconds, minutes * 60)
    for (const event of simulator.advance(startTime + second * 1_000)) {
      const rejection = engine.apply(event)
      if (rejection !== undefined) throw new Error(rejectionMessage(rejection))
    }
    engine.advanceTo(startTime + second * 1_000) // the clock, as the service moves it per batch
    engine.drainChanges()
  }
  engine.advanceTo(startTime + minutes * 60_000)
  engine.drainChanges()
  return engine
}

describe("embedding the domain package", () => {
  it("folds a simulated market and serves every object in the schemas of /openapi.json", () => {
    const engine = foldMinutes(3)
    const tokens = [...engine.allTokens()]
    expect(tokens.length).toBeGreaterThan(20)
    const busiest = tokens.reduce((a, b) => (b.buys24h > a.buys24h ? b : a))
    const token = engine.token(busiest.chain, busiest.address)!
    expect(Schema.encodeSync(Token)(token.toWire())).toEqual(token.toWire())
    const page = engine.tokenTradePage(token.chain, token.address, null, 20)
    expect(page.records.length).toBeGreaterThan(0)
    for (const record of page.records) Schema.encodeSync(Trade)(record.trade)
    const candles = token.tape.candles({ timeframe: "1m", metric: "price", denomination: "usd" })
    expect(candles.length).toBeGreaterThan(0)
    for (const candle of candles) Schema.encodeSync(Candle)(candle)
    const trader = page.records[0]!.trader
    const positions = engine.positionsOfWallets([trader])
    expect(positions.length).toBeGreaterThan(0)
    const wirePositions = positions.map((entry) => engine.positionWire(entry))
    for (const position of wirePositions) Schema.encodeSync(Position)(position)
    // the wallet's positions merged by the spec's rule, one per token (positionKey), the higher version kept
    const merged = SnapshotMerge.mergePositions(new Map(), wirePositions, SnapshotMerge.positionKey)
    expect(merged.size).toBe(new Set(wirePositions.map((p) => `${p.token.chain}:${p.token.address}`)).size)
    const first = wirePositions[0]!
    const newer = { ...first, version: first.version + 1 }
    expect(SnapshotMerge.mergePositions(merged, [newer], SnapshotMerge.positionKey).get(SnapshotMerge.positionKey(first))).toBe(newer)
    // a discovery column, ranked by the package's own rules (typed as the engine's token books)
    const column = Discovery.rankColumn(engine.allTokens(), "newPairs", Discovery.defaultColumnRequest("newPairs"), engine.now)
    expect(column.length).toBeGreaterThan(0)
    for (const book of column) expect(Discovery.columnOf(book)).toBe("newPairs")
    expect(Discovery.meetsFilters(Discovery.compileFilters({}), column[0]!, engine.now)).toBe(true)
    // the simulator's building blocks are reachable too
    expect(typeof Simulator.Prng).toBe("object")
    expect(typeof SnapshotMerge.SnapshotMerger).toBe("function")
  })

  it("gives byte-identical objects for the same events, whatever the batch size and clock moves, once the clock is at the same time", () => {
    const read = (engine: MarketEngine) => JSON.stringify([...engine.allTokens()].map((t) => t.toWire()))
    expect(read(foldMinutes(2, 1))).toBe(read(foldMinutes(2, 7)))
  })
})
