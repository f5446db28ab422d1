/**
 * Port: the durable event log, the service's source of truth. Every accepted market event is
 * stored once, under its identity `id`, with a sequence number the store assigns in append order;
 * the in-memory engine is a projection rebuilt by replaying the log in that order
 * (docs/storage.md).
 */
import { Context, Data } from "effect"
import type { Effect, Stream } from "effect"
import { Events } from "@spot/domain"
import type { MarketEvent } from "@spot/domain"

/**
 * The store cannot answer right now (database down, connection lost, timeout). Nothing was
 * committed by the call that failed: the caller may retry the same events (ids make it idempotent).
 */
export class StoreUnavailable extends Data.TaggedError("StoreUnavailable")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface AppendResult {
  /** The events stored by this call, in the order given (ids new to the log). */
  readonly accepted: ReadonlyArray<MarketEvent>
  /** Events not stored because their id was already in the log (or earlier in the same call). */
  readonly duplicates: number
  /** The lowest seq this call assigned; 0 when it stored nothing. */
  readonly firstSeq: number
  /** The highest seq this call assigned; 0 when it stored nothing. */
  readonly lastSeq: number
}

/** One stored event and its position in the log. */
export interface StoredEvent {
  readonly seq: number
  readonly event: MarketEvent
}

/**
 * One stored event as its stored JSON text: it decodes with {@link decodeStoredText} to the event
 * `replay` gives at that seq.
 */
export interface StoredText {
  readonly seq: number
  readonly text: string
}

/**
 * A stored event's text decoded by the schema's own decoder, as a replay reads it. A stored event
 * that no longer decodes is a broken deployment (an incompatible schema change), not an outage:
 * it throws, to stop loudly rather than serve a market missing events.
 */
export const decodeStoredText = (text: string, seq?: number): MarketEvent => {
  const decoded = Events.decodeMarketEvent(JSON.parse(text))
  if (decoded._tag === "Success") return decoded.value
  throw new Error(`${seq === undefined ? "a stored event" : `stored event seq ${seq}`} does not decode: ${String(decoded.cause)}`)
}

/** The newest stored event's position and time. */
export interface LogHead {
  readonly seq: number
  readonly timestamp: number
}

export interface EventStoreShape {
  /**
   * Stores the events whose ids are new, all in one transaction: when this succeeds they are
   * committed; when it fails none is. `bodies[i]`, when given, is the JSON text to keep for
   * `events[i]` as it came from the indexer: it decodes to exactly that event and holds no other
   * field (`Events.carriesOnlyEventFields`); without it the store writes the event's canonical
   * JSON (`Events.marketEventJson`).
   */
  readonly append: (
    events: ReadonlyArray<MarketEvent>,
    bodies?: ReadonlyArray<string | undefined>
  ) => Effect.Effect<AppendResult, StoreUnavailable>
  /** The stored events with `seq > afterSeq`, in sequence order, in chunks of at most `batchSize`. */
  readonly replay: (afterSeq: number, batchSize: number) => Stream.Stream<ReadonlyArray<StoredEvent>, StoreUnavailable>
  /**
   * As `replay`, each event's stored text instead of the decoded event: for a reader that decodes
   * elsewhere (a snapshot built in a worker thread, Snapshots.ts), so this thread only reads.
   */
  readonly replayText: (afterSeq: number, batchSize: number) => Stream.Stream<ReadonlyArray<StoredText>, StoreUnavailable>
  /** The newest event's seq and timestamp, null when the log is empty. */
  readonly head: Effect.Effect<LogHead | null, StoreUnavailable>
}

export class EventStore extends Context.Service<EventStore, EventStoreShape>()("@spot/application/EventStore") {}
