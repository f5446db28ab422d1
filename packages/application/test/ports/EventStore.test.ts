/**
 * The port's memory log keeps the contract the PostgreSQL store is tested for in adapters-storage:
 * ids stored once, seq from 1 in append order, replay in chunks after a seq, stored texts that
 * decode to the replayed events, the head, and an outage that stores nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { decodeStoredText, EventStore } from "@spot/application"
import * as Simulator from "@spot/simulator"

const events = new Simulator.MarketSimulator({ seed: 5, startTime: 1_700_000_000_000, tradesPerSecond: 20, launchesPerMinute: 20 }).runFor(30_000)

describe("EventStore.layerMemory", () => {
  it.effect("stores new ids once, in append order, and replays them in chunks after a seq", () =>
    Effect.gen(function*() {
      const store = yield* EventStore
      expect(yield* store.head).toBeNull()
      const first = yield* store.append(events.slice(0, 100))
      expect(first).toMatchObject({ duplicates: 0, firstSeq: 1, lastSeq: 100 })
      expect(first.accepted).toEqual(events.slice(0, 100))
      // a repeat within the call and ids already stored are duplicates
      const second = yield* store.append([...events.slice(50, 150), events[120]!])
      expect(second).toMatchObject({ duplicates: 51, firstSeq: 101, lastSeq: 150 })
      expect(second.accepted).toEqual(events.slice(100, 150))
      expect(yield* store.append(events.slice(0, 10))).toEqual({ accepted: [], duplicates: 10, firstSeq: 0, lastSeq: 0 })
      expect(yield* store.head).toEqual({ seq: 150, timestamp: events[149]!.timestamp })

      const chunks = yield* Stream.runCollect(store.replay(20, 60))
      expect(chunks.map((chunk) => chunk.length)).toEqual([60, 60, 10])
      expect(chunks.flat().map((stored) => stored.seq)).toEqual(Array.from({ length: 130 }, (_, i) => 21 + i))
      expect(chunks.flat().map((stored) => stored.event)).toEqual(events.slice(20, 150))
      const texts = (yield* Stream.runCollect(store.replayText(20, 60))).flat()
      expect(texts.map(({ seq, text }) => ({ seq, event: decodeStoredText(text, seq) }))).toEqual(chunks.flat())
    }).pipe(Effect.provide(EventStore.layerMemory)))

  it.effect("while unavailable, every call fails and nothing is stored", () => {
    const store = EventStore.makeMemory()
    return Effect.gen(function*() {
      const port = yield* EventStore
      yield* port.append(events.slice(0, 5))
      store.unavailable = true
      expect((yield* Effect.flip(port.append(events.slice(5, 10))))._tag).toBe("StoreUnavailable")
      expect((yield* Effect.flip(port.head))._tag).toBe("StoreUnavailable")
      expect((yield* Effect.flip(Stream.runCollect(port.replay(0, 10))))._tag).toBe("StoreUnavailable")
      store.unavailable = false
      expect(store.log.map((stored) => stored.event)).toEqual(events.slice(0, 5))
    }).pipe(Effect.provide(Layer.succeed(EventStore, store)))
  })
})
