/**
 * The live market: one engine, fed by event sources (the simulator, the ingest interface), read by
 * every use case, and observed by the stream hub. Single writer: JavaScript runs one fold at a time,
 * and readers see the state between batches. Every change (a fold, the clock's tick) is made under
 * `writeLock`, which a snapshot holds while it writes the engine out across event-loop turns.
 */
import { Context, Layer, Semaphore } from "effect"
import type { EngineChanges, EngineOptions, MarketEvent, Rejection } from "@spot/domain"
import { MarketEngine } from "@spot/domain"

export interface IngestOutcome {
  readonly applied: number
  /** Events not applied, with their position in the batch and the reason. */
  readonly rejected: ReadonlyArray<{ readonly index: number; readonly reason: Rejection }>
}

export type ChangeListener = (changes: EngineChanges) => void

export interface MarketShape {
  readonly engine: MarketEngine
  /**
   * Folds a batch in order, then tells every listener what changed (once per batch; a big batch's
   * trades also slice by slice, {@link publishEvery}). With `now` (the service's clock), no event
   * moves the clock past it (an event dated ahead is its own token's present, not every token's),
   * and the clock moves there after the fold and before listeners hear of it (trailing windows
   * roll to the present, not to the batch's last event).
   */
  readonly apply: (events: ReadonlyArray<MarketEvent>, now?: number) => IngestOutcome
  /** Moves the clock (trailing windows roll), then tells listeners what changed. */
  readonly advanceTo: (now: number) => void
  /** Registers a listener; returns its removal. */
  readonly listen: (listener: ChangeListener) => () => void
  /**
   * Held by whoever changes the market (`apply`, `advanceTo`: ingest's fold, the clock's tick)
   * and by a snapshot while it writes the engine out a step per event-loop turn (Snapshots.ts):
   * reads go on between the steps, changes wait for the end.
   */
  readonly writeLock: Semaphore.Semaphore
}

export class Market extends Context.Service<Market, MarketShape>()("@spot/application/Market") {}

/**
 * In a batch longer than this many events, listeners (the stream) hear of each slice's new trades
 * as soon as the slice is folded, so the first trades of a big batch (an ingest request of
 * thousands of events, a feed catching up after a stall) do not wait for the whole batch's fold.
 * Changed tokens and positions are still told once, with the batch's last slice: a token changing
 * in every slice is encoded and pushed once per batch, not once per slice. A slice ends only where the
 * next event's timestamp is later (events of one millisecond stay together).
 */
export const publishEvery = 128

export const makeMarket = (options?: EngineOptions): MarketShape => {
  const engine = new MarketEngine(options)
  const listeners = new Set<ChangeListener>()
  const tell = (changes: EngineChanges) => {
    if (changes.tokens.length === 0 && changes.trades.length === 0 && changes.positions.length === 0 && changes.leftMemory.length === 0) return
    for (const listener of listeners) listener(changes)
  }
  const publish = () => tell(engine.drainChanges())
  return {
    engine,
    apply: (events, now) => {
      let applied = 0
      const rejected: Array<{ index: number; reason: Rejection }> = []
      const sliced = listeners.size > 0
      let slice = 0
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!
        // with the service's clock, no event moves the market's clock past it (MarketEngine.apply)
        const reason = engine.apply(event, now)
        if (reason === undefined) applied++
        else rejected.push({ index: i, reason })
        if (sliced && ++slice >= publishEvery && i + 1 < events.length && events[i + 1]!.timestamp > event.timestamp) {
          // the slice's trades now; its tokens and positions stay in the engine (each once) for the last drain
          tell(engine.drainTrades())
          slice = 0
        }
      }
      if (now !== undefined) engine.advanceTo(now)
      publish()
      return { applied, rejected }
    },
    advanceTo: (now) => {
      engine.advanceTo(now)
      publish()
    },
    listen: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    writeLock: Semaphore.makeUnsafe(1)
  }
}

export const layer = (options?: EngineOptions): Layer.Layer<Market> => Layer.sync(Market, () => makeMarket(options))
