/**
 * Port: the durable event log, the service's source of truth. Every accepted market event is
 * stored once, under its identity `id`, with a sequence number the store assigns in append order;
 * the in-memory engine is a projection rebuilt by replaying the log in that order
 * (docs/storage.md).
 */
import { Context, Data, Effect, Layer, Stream } from "effect"
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

/**
 * The log in memory, with what a test inspects and switches: the stored events, and an outage.
 * Same contract as the PostgreSQL store (ids unique, seq from 1 in append order, all-or-nothing
 * appends); it keeps the decoded events, so `replayText` gives each one's canonical JSON.
 */
export interface MemoryEventStore extends EventStoreShape {
  /** Every stored event, in seq order. */
  readonly log: ReadonlyArray<StoredEvent>
  /** While set, every call fails with `StoreUnavailable`. */
  unavailable: boolean
}

const makeMemory = (): MemoryEventStore => {
  const log: Array<StoredEvent> = []
  const ids = new Set<string>()
  const down = () => new StoreUnavailable({ message: "memory event store switched off" })
  const store: MemoryEventStore = {
    log,
    unavailable: false,
    append: (events) =>
      Effect.suspend(() => {
        if (store.unavailable) return Effect.fail(down())
        const accepted: Array<MarketEvent> = []
        for (const event of events) {
          if (ids.has(event.id)) continue
          ids.add(event.id)
          accepted.push(event)
          log.push({ seq: log.length + 1, event })
        }
        const result: AppendResult = { accepted, duplicates: events.length - accepted.length, firstSeq: accepted.length > 0 ? log.length - accepted.length + 1 : 0, lastSeq: accepted.length > 0 ? log.length : 0 }
        return Effect.succeed(result)
      }),
    replay: (afterSeq, batchSize) =>
      Stream.suspend(() => {
        if (store.unavailable) return Stream.fail(down())
        const chunks: Array<ReadonlyArray<StoredEvent>> = []
        for (let i = afterSeq; i < log.length; i += batchSize) chunks.push(log.slice(i, i + batchSize))
        return Stream.fromIterable(chunks)
      }),
    replayText: (afterSeq, batchSize) =>
      Stream.map(store.replay(afterSeq, batchSize), (chunk) => chunk.map(({ event, seq }) => ({ seq, text: Events.marketEventJson(event) }))),
    head: Effect.suspend(() => {
      if (store.unavailable) return Effect.fail(down())
      const last = log[log.length - 1]
      return Effect.succeed(last === undefined ? null : { seq: last.seq, timestamp: last.event.timestamp })
    })
  }
  return store
}

export class EventStore extends Context.Service<EventStore, EventStoreShape>()("@spot/application/EventStore") {
  /** A new, empty log in memory, for a test that keeps its handle (`Layer.succeed(EventStore, store)`). */
  static readonly makeMemory: () => MemoryEventStore = makeMemory
  /** A new, empty log in memory each time the layer is built: for tests and for running without persistence. */
  static readonly layerMemory: Layer.Layer<EventStore> = Layer.sync(EventStore, makeMemory)
}
