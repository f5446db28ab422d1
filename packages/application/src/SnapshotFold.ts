/**
 * What a snapshot builder runs (ports/SnapshotBuilder.ts), on whichever thread it runs: a market
 * restored from a snapshot's engine bytes (or empty), the log's events after it folded in as a
 * restart's catch-up folds them (`Market.apply` per page of the log, no clock given: Ingest.ts,
 * `foldLog`), then the engine serialized. No I/O and no clock: the caller feeds it and times it.
 */
import { Effect } from "effect"
import type { EngineOptions, MarketEvent } from "@spot/domain"
import { makeMarket } from "./Market.js"
import type { EngineCodecShape, EngineDecodeFailed, EngineEncodeFailed } from "./ports/EngineCodec.js"
import { decodeStoredText } from "./ports/EventStore.js"

export interface SnapshotFold {
  /** Folds the next page of the log's stored texts, in order; returns the events folded so far. */
  readonly fold: (texts: ReadonlyArray<string>) => number
  /** The engine's bytes (`EngineCodec.serialize`'s chunks), all at once. */
  readonly finish: Effect.Effect<ReadonlyArray<Uint8Array>, EngineEncodeFailed>
}

export const start = (codec: EngineCodecShape, base: Uint8Array | null, options: EngineOptions): Effect.Effect<SnapshotFold, EngineDecodeFailed> =>
  Effect.gen(function*() {
    const market = makeMarket(options)
    if (base !== null) yield* codec.restoreInto(market.engine, base)
    let folded = 0
    return {
      fold: (texts) => {
        const events = new Array<MarketEvent>(texts.length)
        for (let i = 0; i < texts.length; i++) events[i] = decodeStoredText(texts[i]!)
        market.apply(events)
        folded += events.length
        return folded
      },
      finish: codec.serialize(market.engine)
    }
  })
