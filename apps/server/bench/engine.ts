/**
 * `pnpm bench engine`: events folded per second into all derived state (tokens, holders, trades,
 * candles, positions), single process, the simulator's realistic mix; and heap bytes per live token.
 * The simulator streams its events a simulated second at a time and only the engine's work is
 * timed, on a fresh engine after a warm-up fold (the heap measurement's); changes are drained per
 * batch as the service does. Heap per token is what the engine alone retains once events are gone,
 * folding events as ingest decodes them from JSON (their strings then belong to the engine alone).
 *
 *   node --expose-gc --import tsx apps/server/bench/engine.ts [--trades 400000] [--seed 1]
 */
import type { MarketEvent } from "@spot/domain"
import { Events, MarketEngine } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { numberArg } from "./support/args.js"

const targetTrades = numberArg("trades", 400_000)
const seed = numberArg("seed", 1)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) console.warn("run with --expose-gc for heap figures")
const collect = () => {
  for (let i = 0; i < 3; i++) gc?.()
}

// A busy market: ten times the default trade rate, so a few simulated minutes hold many trades.
// Events come a simulated second at a time (about 5,000, the size of an ingest batch): a service
// parses a batch, folds it and drops it, so events die young. Holding a whole minute (300,000
// events) alive across the fold would time the collector copying events, not the engine.
const startTime = 1_700_000_000_000
const simulatorOptions = { seed, startTime, tradesPerSecond: 2_000, launchesPerMinute: 600 }

// The service folds events in batches and drains the engine's changes after each one (the Market
// in packages/application publishes them per batch; its warm-up batches are 20,000 events), so
// trade records no feed keeps die young, and it holds only the batch in hand, never the whole
// history of events. Draining only at the end, or keeping a million events alive for the whole
// fold, would mostly time the garbage collector copying and marking those instead of the engine.
const batchSize = 20_000

/**
 * Streams the simulated market into `engine` one simulated second at a time, timing only the
 * engine's work on each second's events (generation is not timed).
 */
const run = (engine: MarketEngine, asIngested = false) => {
  const simulator = new Simulator.MarketSimulator(simulatorOptions)
  let swaps = 0
  let events = 0
  let foldMs = 0
  let foldCpuUs = 0
  let generateMs = 0
  for (let second = 1; swaps < targetTrades; second++) {
    const generateStart = performance.now()
    let batch: ReadonlyArray<MarketEvent> = simulator.advance(startTime + second * 1_000)
    if (asIngested) batch = batch.map(ingested)
    for (let i = 0; i < batch.length; i++) if (batch[i]!.type === "swap") swaps++
    const foldStart = performance.now()
    const cpuStart = process.cpuUsage()
    generateMs += foldStart - generateStart
    for (let i = 0; i < batch.length; i++) {
      engine.apply(batch[i]!)
      if ((i + 1) % batchSize === 0) engine.drainChanges()
    }
    engine.drainChanges()
    foldMs += performance.now() - foldStart
    const cpu = process.cpuUsage(cpuStart)
    foldCpuUs += cpu.user + cpu.system
    events += batch.length
  }
  const foldStart = performance.now()
  engine.advanceTo(engine.now)
  engine.drainChanges()
  foldMs += performance.now() - foldStart
  return { simulator, swaps, events, seconds: foldMs / 1000, cpuSeconds: foldCpuUs / 1e6, generateSeconds: generateMs / 1000 }
}

/**
 * An event as the service's ingest hands it to the engine: decoded from its JSON text, so every
 * string in it is the event's own copy. The simulator's events share their strings (addresses,
 * chain and venue names, asset symbols) with the simulator's own state; folded as they are, the
 * strings the engine keeps would count as the simulator's below, not the engine's.
 */
const ingested = (event: MarketEvent): MarketEvent => Events.decodeMarketEventFast(JSON.parse(Events.marketEventJson(event)))!

// Heap: what the engine alone keeps alive after one full fold (this run also warms the code up),
// of events as ingest decodes them (`ingested`). The events are gone by then (a service parses,
// folds and forgets them), so strings the engine keeps from them count; the figure is the heap
// with the engine minus the heap without it.
const heapOfFold = () => {
  let engine: MarketEngine | undefined = new MarketEngine()
  const { simulator } = run(engine, true)
  collect()
  const withEngine = process.memoryUsage()
  const tokens = engine.stats.tokens
  engine = undefined
  collect()
  const without = process.memoryUsage()
  void simulator // alive in both measurements: its own state is not the engine's
  return {
    tokens,
    heapBytes: withEngine.heapUsed - without.heapUsed,
    arrayBufferBytes: withEngine.arrayBuffers - without.arrayBuffers
  }
}
const heap = heapOfFold()
collect()

// Speed: a fresh engine folding the same events again, with the code already warm.
const engine = new MarketEngine()
const timed = run(engine)
const { swaps, events, seconds } = timed
console.log(`generated ${events} events (${swaps} swaps) in ${timed.generateSeconds.toFixed(1)} s (not timed)`)
const tokens = engine.stats.tokens

const result = {
  bench: "engine",
  events,
  trades: swaps,
  seconds: Number(seconds.toFixed(3)),
  eventsPerSec: Math.round(events / seconds),
  tradesPerSec: Math.round(swaps / seconds),
  /** CPU time of the process (all threads: the collector's helpers too) while folding; steadier on a busy machine. */
  cpuSeconds: Number(timed.cpuSeconds.toFixed(3)),
  tradesPerCpuSec: Math.round(swaps / timed.cpuSeconds),
  liveTokens: tokens,
  positions: engine.stats.positions,
  heapBytesPerToken: gc === undefined ? null : Math.round(heap.heapBytes / heap.tokens),
  /** Typed-array backing stores outside the JS heap (the trade tapes), per token. */
  arrayBufferBytesPerToken: gc === undefined ? null : Math.round(heap.arrayBufferBytes / heap.tokens),
  targets: { tradesPerSec: 100_000, heapBytesPerToken: 16_384 }
}
console.log(`folded ${result.events} events in ${result.seconds} s: ${result.tradesPerSec} trades/s, ${result.eventsPerSec} events/s; ${tokens} tokens, ${result.heapBytesPerToken} heap bytes per token (+${result.arrayBufferBytesPerToken} in array buffers)`)
console.log(JSON.stringify(result))
