/**
 * The live market: one engine, fed by event sources (the simulator, the ingest interface), read by
 * every use case, and observed by the stream hub. Single writer: JavaScript runs one fold at a time,
 * and readers see the state between batches.
 */
import { Context, Layer } from "effect"
import type { EngineChanges, EngineOptions, MarketEvent } from "@spot/domain"
import { MarketEngine } from "@spot/domain"

export interface IngestOutcome {
  readonly applied: number
  /** Events not applied, with their position in the batch and the reason. */
  readonly rejected: ReadonlyArray<{ readonly index: number; readonly reason: string }>
}

export type ChangeListener = (changes: EngineChanges) => void

export interface MarketShape {
  readonly engine: MarketEngine
  /** Folds a batch in order, then tells every listener what changed (once per batch). */
  readonly apply: (events: ReadonlyArray<MarketEvent>) => IngestOutcome
  /** Moves the clock (trailing windows roll), then tells listeners what changed. */
  readonly advanceTo: (now: number) => void
  /** Registers a listener; returns its removal. */
  readonly listen: (listener: ChangeListener) => () => void
}

export class Market extends Context.Service<Market, MarketShape>()("@spot/application/Market") {}

export const makeMarket = (options?: EngineOptions): MarketShape => {
  const engine = new MarketEngine(options)
  const listeners = new Set<ChangeListener>()
  const publish = () => {
    const changes = engine.drainChanges()
    if (changes.tokens.length === 0 && changes.trades.length === 0 && changes.positions.length === 0) return
    for (const listener of listeners) listener(changes)
  }
  return {
    engine,
    apply: (events) => {
      let applied = 0
      const rejected: Array<{ index: number; reason: string }> = []
      for (let i = 0; i < events.length; i++) {
        const reason = engine.apply(events[i]!)
        if (reason === undefined) applied++
        else rejected.push({ index: i, reason })
      }
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
    }
  }
}

export const layer = (options?: EngineOptions): Layer.Layer<Market> => Layer.sync(Market, () => makeMarket(options))
