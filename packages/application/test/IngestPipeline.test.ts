/**
 * Ingest with batches in flight (docs/ingest.md "Throughput"): admitted one at a time in arrival
 * order, appended in that order, folded in that order, the next batch's append sent before the
 * previous batch is folded; a failed append fails the batches admitted behind it without
 * appending them; an admitted batch completes even if its request is interrupted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { EventStore, Ingest, Market, StoreUnavailable } from "@spot/application"
import { Events } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import type { MarketEvent } from "@spot/domain"
import { firstDifference, readsOf } from "@spot/domain/testing"

/** The service's clock at the wall clock's time (the test clock starts at 0, before every event here): ingest refuses events dated past it. */
const serviceClockNow = Layer.effectDiscard(TestClock.setTime(Date.now()))

interface AppendCall {
  readonly firstId: string
  readonly size: number
  /** Events the market had folded when the append started. */
  readonly foldedAtStart: number
}

/** The port's memory log with its appends made controllable: held at a gate, made to fail, or to fail after committing. */
const controlledStore = (market: Market.MarketShape) => {
  const memory = EventStore.makeMemory()
  const calls: Array<AppendCall> = []
  const control = {
    log: memory.log,
    calls,
    /** When set, the next append waits for it. */
    gate: undefined as Deferred.Deferred<void> | undefined,
    /** Resolved when an append reaches the gate. */
    reached: undefined as Deferred.Deferred<void> | undefined,
    /** What the next append does once past the gate. */
    next: "commit" as "commit" | "fail" | "commitThenFail"
  }
  /** Stores events as an append whose client gave up would, committing after all (late). */
  const commitLate = (events: ReadonlyArray<MarketEvent>) => void Effect.runSync(memory.append(events))
  const service = EventStore.of({
    replay: memory.replay,
    replayText: memory.replayText,
    head: memory.head,
    append: (events) =>
      Effect.gen(function*() {
        calls.push({ firstId: events[0]?.id ?? "", size: events.length, foldedAtStart: market.engine.stats.events })
        const gate = control.gate
        control.gate = undefined
        if (gate !== undefined) {
          if (control.reached !== undefined) yield* Deferred.succeed(control.reached, undefined)
          yield* Deferred.await(gate)
        }
        const outcome = control.next
        control.next = "commit"
        if (outcome === "fail") return yield* new StoreUnavailable({ message: "down" })
        const result = yield* memory.append(events)
        if (outcome === "commitThenFail") return yield* new StoreUnavailable({ message: "connection lost during COMMIT" })
        return result
      })
  })
  return { control: Object.assign(control, { commitLate }), service }
}

const simulated = new Simulator.MarketSimulator({ seed: 12, startTime: 1_700_100_000_000, tradesPerSecond: 20, launchesPerMinute: 20 }).runFor(2 * 60_000)
const wire = simulated.map((e) => Events.encodeMarketEvent(e))

/** Batches cut right after a launch, so the next batch trades a token launched by the one before. */
const batches = (() => {
  const launchAt = simulated.findIndex((e) => e.type === "tokenLaunched")
  const launched = simulated[launchAt] as Events.TokenLaunched
  const usesLaunch = simulated.findIndex((e, i) => i > launchAt && Events.subjectTokenOf(e)?.token === launched.token)
  const cuts = [0, launchAt + 1, Math.floor((launchAt + 1 + simulated.length) / 2), simulated.length]
  expect(usesLaunch).toBeGreaterThan(launchAt)
  expect(usesLaunch).toBeLessThan(cuts[2]!)
  return cuts.slice(1).map((end, i) => wire.slice(cuts[i], end))
})()

const setup = () => {
  const market = Market.makeMarket()
  const { control, service } = controlledStore(market)
  const layer = Ingest.layer.pipe(Layer.provide([Layer.succeed(Market.Market, market), Layer.succeed(EventStore, service)]), Layer.merge(serviceClockNow))
  return { market, control, layer }
}

/**
 * The market is one fold of `events` at the service's clock: every read equals that fold's, each
 * token's updatedAt aside (it counts the changes told, so the batches: see EngineReads).
 */
const expectOneFold = (market: Market.MarketShape, events: ReadonlyArray<MarketEvent>) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const reference = Market.makeMarket()
    reference.apply(events, now)
    expect(market.engine.now).toBe(now)
    expect(market.engine.stats).toEqual(reference.engine.stats)
    expect(firstDifference(readsOf(market.engine, { withoutTokenUpdatedAt: true }), readsOf(reference.engine, { withoutTokenUpdatedAt: true }))).toBeUndefined()
  })

describe("Ingest with batches in flight", () => {
  it.effect("appends in arrival order, the next batch's append sent before the previous batch is folded; the market is one fold of the log", () => {
    const { market, control, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      // All sent at once: the second and third are validated while the first is in flight (the
      // second trades a token the first launches).
      const results = yield* Effect.all(batches.map((batch) => ingest.ingest(batch)), { concurrency: "unbounded" })
      expect(results).toEqual(batches.map((batch) => ({ accepted: batch.length, duplicates: 0 })))
      expect(control.calls.map((c) => c.firstId)).toEqual(batches.map((b) => (b[0] as { id: string }).id))
      // Batch 2's append started before batch 1 was folded: the database works while the market folds.
      expect(control.calls[1]!.foldedAtStart).toBe(0)
      expect(control.log.map((s) => s.event.id)).toEqual(simulated.map((e) => e.id))
      yield* expectOneFold(market, simulated)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a batch waits for the fold of the batches ahead of it before it answers", () => {
    const { market, control, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const gate = yield* Deferred.make<void>()
      control.gate = gate
      control.reached = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(ingest.ingest(batches[0]!))
      yield* Deferred.await(control.reached)
      const second = yield* Effect.forkChild(ingest.ingest(batches[1]!))
      yield* Effect.yieldNow
      expect(control.calls.length).toBe(1) // the second waits for the first's commit
      yield* Deferred.succeed(gate, undefined)
      const answered = yield* Fiber.join(second)
      expect(answered).toEqual({ accepted: batches[1]!.length, duplicates: 0 })
      // Answering the second means both are folded.
      expect(market.engine.stats.events).toBe(batches[0]!.length + batches[1]!.length)
      yield* Fiber.join(first)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a failed append (committed or not) fails the batches admitted behind it unappended; the retries apply everything once", () => {
    const { market, control, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const gate = yield* Deferred.make<void>()
      control.gate = gate
      control.reached = yield* Deferred.make<void>()
      control.next = "commitThenFail" // ambiguous: it did commit
      const first = yield* Effect.forkChild(Effect.exit(ingest.ingest(batches[0]!)))
      yield* Deferred.await(control.reached)
      // Admitted while the first is in flight, counting on the first's launch.
      const second = yield* Effect.forkChild(Effect.exit(ingest.ingest(batches[1]!)))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      const [firstExit, secondExit] = [yield* Fiber.join(first), yield* Fiber.join(second)]
      for (const exit of [firstExit, secondExit]) {
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("Unavailable")
      }
      expect(control.calls.length).toBe(1) // the second was never appended
      expect(market.engine.stats.events).toBe(0)

      // The indexer resends both: the first comes back as duplicates (the catch-up folded what
      // the ambiguous append committed), the second is applied.
      expect(yield* ingest.ingest(batches[0]!)).toEqual({ accepted: 0, duplicates: batches[0]!.length })
      expect(yield* ingest.ingest(batches[1]!)).toEqual({ accepted: batches[1]!.length, duplicates: 0 })
      expect(yield* ingest.ingest(batches[2]!)).toEqual({ accepted: batches[2]!.length, duplicates: 0 })
      expect(control.log.map((s) => s.event.id)).toEqual(simulated.map((e) => e.id))
      yield* expectOneFold(market, simulated)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a batch stored by an append that failed on its way back is folded within a second, with no other batch to bring it in", () => {
    const { market, control, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      control.next = "commitThenFail"
      const refused = yield* Effect.flip(ingest.ingest(batches[0]!))
      // the answer does not claim that nothing was stored: it was
      expect(refused.message).not.toContain("nothing")
      expect(refused.message).toContain("duplicates")
      expect(control.log.length).toBe(batches[0]!.length)
      expect(market.engine.stats.events).toBe(0)
      // no batch comes: the market catches up with the log by itself
      yield* TestClock.adjust("1 second")
      yield* Effect.yieldNow
      expect(market.engine.stats.events).toBe(batches[0]!.length)
      // folded as the log holds it (the service's clock moves the market to the present on its own)
      const reference = Market.makeMarket()
      reference.apply(simulated.slice(0, batches[0]!.length))
      expect(firstDifference(readsOf(market.engine), readsOf(reference.engine))).toBeUndefined()
      // and the resent batch is all duplicates, the next one applied
      expect(yield* ingest.ingest(batches[0]!)).toEqual({ accepted: 0, duplicates: batches[0]!.length })
      expect(yield* ingest.ingest(batches[1]!)).toEqual({ accepted: batches[1]!.length, duplicates: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a failed append that commits after all, while the next batch is being stored: folded before that batch, in log order", () => {
    const { market, control, layer } = setup()
    // another market's events (tokens of their own), after the first batch's
    const first = simulated.slice(0, batches[0]!.length)
    const laterStart = simulated[simulated.length - 1]!.timestamp + 1_000
    const other = new Simulator.MarketSimulator({ seed: 99, startTime: laterStart, tradesPerSecond: 20, launchesPerMinute: 20 }).runFor(30_000)
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      control.next = "fail"
      expect((yield* Effect.flip(ingest.ingest(batches[0]!)))._tag).toBe("Unavailable")
      const gate = yield* Deferred.make<void>()
      control.gate = gate
      control.reached = yield* Deferred.make<void>()
      const next = yield* Effect.forkChild(ingest.ingest(other.map((e) => Events.encodeMarketEvent(e))))
      // admitted (the catch-up before it found nothing: the failed batch had not committed yet)
      yield* Deferred.await(control.reached)
      expect(market.engine.stats.events).toBe(0)
      // ... and now it does, below the seqs the next batch is about to take
      control.commitLate(first)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(next)).toEqual({ accepted: other.length, duplicates: 0 })
      yield* expectOneFold(market, [...first, ...other])
      expect(yield* ingest.ingest(batches[0]!)).toEqual({ accepted: 0, duplicates: batches[0]!.length })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a store that refuses: the batch behind is refused too, nothing applied; then everything applies once", () => {
    const { market, control, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const gate = yield* Deferred.make<void>()
      control.gate = gate
      control.reached = yield* Deferred.make<void>()
      control.next = "fail"
      const first = yield* Effect.forkChild(Effect.exit(ingest.ingest(batches[0]!)))
      yield* Deferred.await(control.reached)
      const second = yield* Effect.forkChild(Effect.exit(ingest.ingest(batches[1]!)))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      expect(Exit.isFailure(yield* Fiber.join(first))).toBe(true)
      expect(Exit.isFailure(yield* Fiber.join(second))).toBe(true)
      expect(control.log.length).toBe(0)
      expect(market.engine.stats.events).toBe(0)
      const results = yield* Effect.all(batches.map((batch) => ingest.ingest(batch)), { concurrency: "unbounded" })
      expect(results.map((r) => r.accepted)).toEqual(batches.map((b) => b.length))
      yield* expectOneFold(market, simulated)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a request interrupted while its batch is being stored: the batch is still stored and folded, and the next one goes through", () => {
    const { market, control, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const gate = yield* Deferred.make<void>()
      control.gate = gate
      control.reached = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(ingest.ingest(batches[0]!))
      yield* Deferred.await(control.reached)
      const interrupting = yield* Effect.forkChild(Fiber.interrupt(first))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(interrupting)
      expect(market.engine.stats.events).toBe(batches[0]!.length)
      expect(yield* ingest.ingest(batches[1]!)).toEqual({ accepted: batches[1]!.length, duplicates: 0 })
      expect(control.log.length).toBe(batches[0]!.length + batches[1]!.length)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a batch refused by validation while others are in flight takes no place in the order", () => {
    const { market, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const swapAt = batches[1]!.findIndex((e) => (e as { type: string }).type === "swap")
      const broken = batches[1]!.map((e, i) => (i === swapAt ? { ...(e as object), tokenAmount: "0" } : e))
      const [a, b, c] = yield* Effect.all(
        [ingest.ingest(batches[0]!), Effect.flip(ingest.ingest(broken)), ingest.ingest(batches[1]!)],
        { concurrency: "unbounded" }
      )
      expect(a.accepted).toBe(batches[0]!.length)
      expect(b._tag).toBe("ValidationFailed")
      expect(c.accepted).toBe(batches[1]!.length)
      yield* expectOneFold(market, simulated.slice(0, batches[0]!.length + batches[1]!.length))
    }).pipe(Effect.provide(layer))
  })
})

describe("Ingest with the events' JSON texts (NDJSON)", () => {
  it.effect("stores a text as sent when it holds just its event's fields; re-encodes the others", () => {
    const market = Market.makeMarket()
    const appended: Array<{ ids: Array<string>; bodies: ReadonlyArray<string | undefined> | undefined }> = []
    const memory = EventStore.makeMemory()
    const store = EventStore.of({
      replay: memory.replay,
      replayText: memory.replayText,
      head: memory.head,
      append: (events, bodies) => {
        appended.push({ ids: events.map((e) => e.id), bodies })
        return memory.append(events, bodies)
      }
    })
    const layer = Ingest.layer.pipe(Layer.provide([Layer.succeed(Market.Market, market), Layer.succeed(EventStore, store)]), Layer.merge(serviceClockNow))
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const batch = wire.slice(0, 40) as Array<Record<string, unknown>>
      const swapAt = batch.findIndex((e) => e.type === "swap")
      const raws: Array<Record<string, unknown>> = batch.map((e) => ({ ...e }))
      // Spacing and key order of its own: still stored as sent.
      const texts = raws.map((e) => JSON.stringify(Object.fromEntries(Object.entries(e).reverse()), null, 1).replace(/\n/g, " "))
      // A field the schema does not know: re-encoded without it.
      raws[1] = { ...raws[1], note: "ignored" }
      texts[1] = JSON.stringify(raws[1])
      // A form only the schema decodes (a signed zero): re-encoded.
      raws[swapAt] = { ...raws[swapAt], quoteAmount: "-0" }
      texts[swapAt] = JSON.stringify(raws[swapAt])
      const parsed = texts.map((text) => JSON.parse(text))
      expect(yield* ingest.ingest(parsed, texts)).toEqual({ accepted: batch.length, duplicates: 0 })
      const bodies = appended[0]!.bodies!
      expect(bodies.length).toBe(batch.length)
      for (let i = 0; i < batch.length; i++) {
        if (i === 1 || i === swapAt) expect(bodies[i], `event ${i}`).toBeUndefined()
        else expect(bodies[i], `event ${i}`).toBe(texts[i])
      }
      // Without texts (a JSON array): nothing given, the store encodes every event.
      yield* ingest.ingest(wire.slice(40, 60))
      expect(appended[1]!.bodies).toBeUndefined()
    }).pipe(Effect.provide(layer))
  })
})
