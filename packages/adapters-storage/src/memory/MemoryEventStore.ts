/**
 * In-memory `EventStore`: the log in an array, ids in a set. For unit tests and for running
 * without persistence; same contract as the PostgreSQL store (ids unique, seq from 1 in append
 * order, all-or-nothing appends). `failWith` lets tests simulate an outage.
 */
import { Effect, Layer, Stream } from "effect"
import { EventStore, StoreUnavailable } from "@spot/application"
import type { AppendResult, EventStoreShape, StoredEvent } from "@spot/application"
import { Events } from "@spot/domain"
import type { MarketEvent } from "@spot/domain"

export interface MemoryEventStore extends EventStoreShape {
  /** Every stored event, in seq order. */
  readonly log: ReadonlyArray<StoredEvent>
  /** While set, every call fails with `StoreUnavailable`. */
  unavailable: boolean
}

export const makeUnsafe = (): MemoryEventStore => {
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

export const layer = (store: MemoryEventStore = makeUnsafe()): Layer.Layer<EventStore> => Layer.succeed(EventStore, store)
