/**
 * What a snapshot builder runs (ports/SnapshotBuilder.ts), on whichever thread it runs: a market
 * restored from a snapshot's engine bytes (or empty), the log's events after it folded in as a
 * restart's catch-up folds them (`Market.apply` per page of the log, no clock given: Ingest.ts,
 * `foldLog`), then the engine serialized. No I/O and no clock: the caller feeds it and times it.
 */
import { EngineSnapshot } from "@spot/domain"
import type { EngineOptions, MarketEvent } from "@spot/domain"
import { makeMarket } from "./Market.js"
import { decodeStoredText } from "./ports/EventStore.js"

export interface SnapshotFold {
  /** Folds the next page of the log's stored texts, in order; returns the events folded so far. */
  readonly fold: (texts: ReadonlyArray<string>) => number
  /** The engine's bytes (`EngineSnapshot.snapshotInSlices`' chunks), all at once. */
  readonly finish: () => ReadonlyArray<Uint8Array>
}

export const start = (base: Uint8Array | null, options: EngineOptions): SnapshotFold => {
  const market = makeMarket(options)
  if (base !== null) EngineSnapshot.restoreInto(market.engine, base)
  let folded = 0
  return {
    fold: (texts) => {
      const events = new Array<MarketEvent>(texts.length)
      for (let i = 0; i < texts.length; i++) events[i] = decodeStoredText(texts[i]!)
      market.apply(events)
      folded += events.length
      return folded
    },
    finish: () => {
      const steps = EngineSnapshot.snapshotInSlices(market.engine, { endStep: () => false })
      for (;;) {
        const step = steps.next()
        if (step.done === true) return step.value
      }
    }
  }
}
