/**
 * `pnpm bench engine`: events folded per second into all derived state (tokens, holders, trades,
 * candles, positions), single process, the simulator's realistic mix; and heap bytes per live token.
 * Events are generated before timing; the fold is timed on a fresh engine after a warm-up fold.
 *
 *   node --expose-gc --import tsx apps/server/bench/engine.ts [--trades 400000] [--seed 1]
 */
import { MarketEngine, Simulator } from "@spot/domain"
import type { MarketEvent } from "@spot/domain"

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}
const targetTrades = arg("trades", 400_000)
const seed = arg("seed", 1)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) console.warn("run with --expose-gc for heap figures")
const collect = () => {
  for (let i = 0; i < 3; i++) gc?.()
}

// A busy market: ten times the default trade rate, so a few simulated minutes hold many trades.
const startTime = 1_700_000_000_000
const simulator = new Simulator.MarketSimulator({ seed, startTime, tradesPerSecond: 2_000, launchesPerMinute: 600 })
const events: Array<MarketEvent> = []
let swaps = 0
const generateStart = performance.now()
for (let minute = 1; swaps < targetTrades; minute++) {
  for (const e of simulator.advance(startTime + minute * 60_000)) {
    events.push(e)
    if (e.type === "swap") swaps++
  }
}
console.log(`generated ${events.length} events (${swaps} swaps) in ${((performance.now() - generateStart) / 1000).toFixed(1)} s`)

const foldAll = (engine: MarketEngine) => {
  for (let i = 0; i < events.length; i++) engine.apply(events[i]!)
  engine.advanceTo(engine.now)
  engine.drainChanges()
}

// Heap: the state of one full fold, measured against the heap with only the events alive.
collect()
const heapBefore = process.memoryUsage().heapUsed
let measured: MarketEngine | undefined = new MarketEngine()
foldAll(measured)
collect()
const heapAfter = process.memoryUsage().heapUsed
const tokens = measured.stats.tokens
measured = undefined
collect()

// Speed: a fresh engine folding the same events, with the code already warm.
const engine = new MarketEngine()
const start = performance.now()
foldAll(engine)
const seconds = (performance.now() - start) / 1000

const result = {
  bench: "engine",
  events: events.length,
  trades: swaps,
  seconds: Number(seconds.toFixed(3)),
  eventsPerSec: Math.round(events.length / seconds),
  tradesPerSec: Math.round(swaps / seconds),
  liveTokens: tokens,
  positions: engine.stats.positions,
  heapBytesPerToken: gc === undefined ? null : Math.round((heapAfter - heapBefore) / tokens),
  targets: { tradesPerSec: 100_000, heapBytesPerToken: 16_384 }
}
console.log(`folded ${result.events} events in ${result.seconds} s: ${result.tradesPerSec} trades/s, ${result.eventsPerSec} events/s; ${tokens} tokens, ${result.heapBytesPerToken} heap bytes per token`)
console.log(JSON.stringify(result))
