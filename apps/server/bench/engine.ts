/**
 * `pnpm bench engine`: events folded per second into all derived state (tokens, holders, trades,
 * candles, positions), single process, the simulator's realistic mix; and heap bytes per live token.
 * Events are generated before timing; the fold is timed on a fresh engine after a warm-up fold
 * (the heap measurement's). Heap per token is what the engine alone retains once the events are gone.
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
const simulatorOptions = { seed, startTime, tradesPerSecond: 2_000, launchesPerMinute: 600 }
const generate = () => {
  const simulator = new Simulator.MarketSimulator(simulatorOptions)
  const events: Array<MarketEvent> = []
  let swaps = 0
  for (let minute = 1; swaps < targetTrades; minute++) {
    for (const e of simulator.advance(startTime + minute * 60_000)) {
      events.push(e)
      if (e.type === "swap") swaps++
    }
  }
  return { events, swaps }
}

const foldAll = (engine: MarketEngine, events: ReadonlyArray<MarketEvent>) => {
  for (let i = 0; i < events.length; i++) engine.apply(events[i]!)
  engine.advanceTo(engine.now)
  engine.drainChanges()
}

// Heap: what the engine alone keeps alive after one full fold. The events are dropped first (a
// service parses, folds and forgets them), so strings the engine keeps from them count; the
// figure is the heap with the engine minus the heap once the engine is dropped too.
const heapOfFold = () => {
  const generated = generate()
  let engine: MarketEngine | undefined = new MarketEngine()
  foldAll(engine, generated.events)
  generated.events.length = 0
  collect()
  const withEngine = process.memoryUsage()
  const tokens = engine.stats.tokens
  engine = undefined
  collect()
  const without = process.memoryUsage()
  return {
    tokens,
    heapBytes: withEngine.heapUsed - without.heapUsed,
    arrayBufferBytes: withEngine.arrayBuffers - without.arrayBuffers
  }
}
const heap = heapOfFold()

// Speed: a fresh engine folding freshly generated events, with the code already warm.
const generateStart = performance.now()
const { events, swaps } = generate()
console.log(`generated ${events.length} events (${swaps} swaps) in ${((performance.now() - generateStart) / 1000).toFixed(1)} s`)
collect()
const engine = new MarketEngine()
const start = performance.now()
foldAll(engine, events)
const seconds = (performance.now() - start) / 1000
const tokens = engine.stats.tokens

const result = {
  bench: "engine",
  events: events.length,
  trades: swaps,
  seconds: Number(seconds.toFixed(3)),
  eventsPerSec: Math.round(events.length / seconds),
  tradesPerSec: Math.round(swaps / seconds),
  liveTokens: tokens,
  positions: engine.stats.positions,
  heapBytesPerToken: gc === undefined ? null : Math.round(heap.heapBytes / heap.tokens),
  /** Typed-array backing stores outside the JS heap (the trade tapes), per token. */
  arrayBufferBytesPerToken: gc === undefined ? null : Math.round(heap.arrayBufferBytes / heap.tokens),
  targets: { tradesPerSec: 100_000, heapBytesPerToken: 16_384 }
}
console.log(`folded ${result.events} events in ${result.seconds} s: ${result.tradesPerSec} trades/s, ${result.eventsPerSec} events/s; ${tokens} tokens, ${result.heapBytesPerToken} heap bytes per token (+${result.arrayBufferBytesPerToken} in array buffers)`)
console.log(JSON.stringify(result))
