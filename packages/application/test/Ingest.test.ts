import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { EventStore, Ingest, Market } from "@spot/application"
import { Events } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { firstDifference, readsOf } from "@spot/domain/testing"

/** The service's clock at the wall clock's time (the test clock starts at 0, before every event here): ingest refuses events dated past it. */
const serviceClockNow = Layer.effectDiscard(TestClock.setTime(Date.now()))

const simulated = new Simulator.MarketSimulator({ seed: 9, startTime: 1_700_000_000_000, tradesPerSecond: 20, launchesPerMinute: 20 }).runFor(2 * 60_000)
const wire = simulated.map((e) => Events.encodeMarketEvent(e))

/** The service's clock for the split property: every batch is folded up to this same present. */
const present = Date.now()
const liveClock = Clock.Clock.defaultValue()
/** Stopped at `present` (a TestClock needs fibers that may suspend; the property runs synchronously). */
const clockAtPresent: Clock.Clock = {
  currentTimeMillisUnsafe: () => present,
  currentTimeMillis: Effect.succeed(present),
  currentTimeNanosUnsafe: () => BigInt(present) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(present) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => liveClock.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: liveClock.monotonicTimeNanos,
  sleep: (duration) => liveClock.sleep(duration)
}

/**
 * What any split must give: the reads of one fold of the events moved to the same present, each
 * token's updatedAt aside (it counts the changes told, so the batches: see EngineReads).
 */
const oneFold = (() => {
  const reference = Market.makeMarket()
  reference.apply(simulated, present)
  return readsOf(reference.engine, { withoutTokenUpdatedAt: true })
})()

const setup = () => {
  const store = EventStore.makeMemory()
  const market = Market.makeMarket()
  const liveClockLayer = Ingest.layer.pipe(Layer.provide([Layer.succeed(Market.Market, market), Layer.succeed(EventStore, store)]))
  return { store, market, layer: Layer.merge(liveClockLayer, serviceClockNow), liveClockLayer }
}

describe("Ingest", () => {
  it("any split of the same events into batches, each sent twice, gives the state of one fold and a log without repeats", () =>
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: wire.length }), { minLength: 1, maxLength: 6 }), (cuts) => {
        const { store, market, liveClockLayer } = setup()
        const bounds = [0, ...[...new Set(cuts)].sort((a, b) => a - b), wire.length]
        Effect.runSync(Effect.provide(Effect.gen(function*() {
          const ingest = yield* Ingest.Ingest
          for (let i = 0; i + 1 < bounds.length; i++) {
            const batch = wire.slice(bounds[i], bounds[i + 1])
            const first = yield* ingest.ingest(batch)
            const again = yield* ingest.ingest(batch)
            if (first.accepted + first.duplicates !== batch.length) throw new Error("counts")
            if (again.accepted !== 0) throw new Error("second send accepted events")
          }
        }), liveClockLayer).pipe(Effect.provideService(Clock.Clock, clockAtPresent)))
        expect(market.engine.now).toBe(present)
        expect(firstDifference(readsOf(market.engine, { withoutTokenUpdatedAt: true }), oneFold)).toBeUndefined()
        expect(store.log.map((s) => s.event.id)).toEqual([...new Set(simulated.map((e) => e.id))])
      }),
      { numRuns: 8 }
    ))

  it.effect("an invalid event refuses the whole batch, nothing stored or applied", () => {
    const { store, market, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const swapAt = wire.findIndex((e) => e.type === "swap")
      const batch = wire.slice(0, swapAt + 1).map((e, i) => (i === swapAt ? { ...e, tokenAmount: "0" } : e))
      const error = yield* Effect.flip(ingest.ingest(batch))
      expect(error._tag).toBe("ValidationFailed")
      if (error._tag === "ValidationFailed") expect(error.issues.map((i) => i.field)).toEqual([`events[${swapAt}].tokenAmount`])
      // a negative amount is one problem, told once
      const negative = yield* Effect.flip(ingest.ingest(batch.map((e, i) => (i === swapAt ? { ...e, tokenAmount: "-5" } : e))))
      if (negative._tag === "ValidationFailed") expect(negative.issues.map((i) => i.field)).toEqual([`events[${swapAt}].tokenAmount`])
      else expect.fail(negative._tag)
      expect(store.log.length).toBe(0)
      expect(market.engine.stats.events).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("an event dated more than a minute past the service's clock refuses the batch; up to a minute is clock skew", () => {
    const { store, market, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const batch = wire.slice(0, 40)
      const times = simulated.slice(0, 40).map((e) => e.timestamp)
      const first = Math.min(...times)
      const last = Math.max(...times)
      yield* TestClock.setTime(first - Ingest.maxFutureMs - 1_000)
      const error = yield* Effect.flip(ingest.ingest(batch))
      expect(error._tag).toBe("ValidationFailed")
      if (error._tag === "ValidationFailed") {
        expect(error.issues.length).toBe(40)
        expect(error.issues[0]).toMatchObject({ field: "events[0].timestamp", message: expect.stringMatching(/ahead of the service's clock/) })
      }
      expect(store.log.length).toBe(0)
      expect(market.engine.stats.events).toBe(0)
      yield* TestClock.setTime(last - Ingest.maxFutureMs + 1_000)
      expect(yield* ingest.ingest(batch)).toEqual({ accepted: 40, duplicates: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a batch of old events is told with windows ending at the service's clock, not at its last event; updated when its last trade left the 24h window", () => {
    const { market, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const last = Math.max(...simulated.map((e) => e.timestamp))
      const now = last + 2 * 86_400_000
      yield* TestClock.setTime(now)
      const told: Array<{ readonly buys: number; readonly updatedAt: number; readonly leftAt: number | undefined }> = []
      market.listen((changes) => {
        for (const token of changes.tokens) {
          const wire = token.toWire()
          const lastTrade = token.tape.lastTradeAt()
          told.push({ buys: wire.stats["24h"].buyCount, updatedAt: wire.updatedAt, leftAt: lastTrade === undefined ? undefined : lastTrade + 86_400_000 })
        }
      })
      yield* ingest.ingest(wire)
      expect(told.filter((t) => t.leftAt !== undefined).length).toBeGreaterThan(10)
      // not the clock's time (a restart replaying the log would tell another): the moment it changed
      expect(told.filter((t) => t.leftAt !== undefined && (t.buys !== 0 || t.updatedAt !== t.leftAt))).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("store down: Unavailable, nothing applied; back up: the retry is applied once", () => {
    const { store, market, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      store.unavailable = true
      const error = yield* Effect.flip(ingest.ingest(wire.slice(0, 50)))
      expect(error._tag).toBe("Unavailable")
      expect(market.engine.stats.events).toBe(0)
      store.unavailable = false
      const result = yield* ingest.ingest(wire.slice(0, 50))
      expect(result).toEqual({ accepted: 50, duplicates: 0 })
    }).pipe(Effect.provide(layer))
  })
  it.effect("problems of decoding and of the engine's checks are reported together, in event order", () => {
    const { store, market, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const swap = wire.find((e) => e.type === "swap")! as { token: string; id: string; timestamp: number }
      const launch = wire.find((e) => e.type === "tokenLaunched" && (e as { token: string }).token === swap.token)!
      // 0: the swap before its token's launch (the engine's check); 1: a field that does not decode;
      // 2: the launch; 3: the swap, now fine; 4: missing field and a bad amount (two problems).
      const { timestamp: _, ...noTimestamp } = swap as { timestamp: unknown }
      const batch = [swap, { ...swap, id: "x:1", side: "sideways" }, launch, { ...swap, id: "x:2" }, { ...noTimestamp, id: "x:3", quoteAmount: "-x" }]
      const error = yield* Effect.flip(ingest.ingest(batch))
      expect(error._tag).toBe("ValidationFailed")
      if (error._tag !== "ValidationFailed") return
      const fields = error.issues.map((i) => i.field)
      expect(fields[0]).toBe("events[0].token") // "token … is unknown": the field a refusal starts with
      expect(fields[1]).toBe("events[1].side")
      expect(fields.slice(2).sort()).toEqual(["events[4].quoteAmount", "events[4].timestamp"])
      expect(error.issues[0]!.message).toContain(swap.id)
      expect(store.log.length).toBe(0)
      expect(market.engine.stats.events).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("an unknown or missing type is refused on the event's type field, naming the types there are", () => {
    const { store, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const swap = wire.find((e) => e.type === "swap")! as { id: string }
      const { type: _, ...untyped } = swap as unknown as { type: unknown; id: string }
      const error = yield* Effect.flip(ingest.ingest([{ ...swap, type: "Swap" }, { ...untyped, id: "x:untyped" }]))
      expect(error._tag === "ValidationFailed" && error.issues).toEqual([
        { field: "events[0].type", message: `event "${swap.id}": "Swap" is not an event type: one of tokenLaunched, swap, transfer, metadataResolved, walletFunded, curveProgressed, graduated, liquidityChanged, securityScored, tokenListed, walletLabeled, identityResolved, nativePrice` },
        { field: "events[1].type", message: expect.stringMatching(/^event "x:untyped": is required: one of tokenLaunched, swap, /) }
      ])
      expect(store.log.length).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a value that is not an object is refused as such, naming the event types (not the schema's \"Expected MarketEvent\")", () => {
    const { store, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const error = yield* Effect.flip(ingest.ingest([1, null, [1, 2], "swap", true]))
      expect(error._tag === "ValidationFailed" && error.issues.map((i) => [i.field, i.message.split(",")[0]])).toEqual([
        ["events[0]", `is a number`],
        ["events[1]", `is null`],
        ["events[2]", `is an array`],
        ["events[3]", `is a string`],
        ["events[4]", `is a boolean`]
      ])
      expect(error._tag === "ValidationFailed" && error.issues[0]!.message).toBe(
        `is a number, not an event: an event is a JSON object with a "type", one of ${Events.marketEventTypes.join(", ")}`
      )
      expect(store.log.length).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it("unreadableBatchIssues: the lines that are not JSON and what decoding finds in the others, in event order", () => {
    const swap = wire.find((e) => e.type === "swap")! as { id: string }
    const issues = Ingest.unreadableBatchIssues([undefined, { ...swap, side: "sideways" }, swap, undefined], new Set([0, 3]))
    expect(issues.map((i) => i.field)).toEqual(["events[0]", "events[1].side", "events[3]"])
    expect(issues[0]!.message).toBe("is not valid JSON")
    expect(issues[1]!.message).toMatch(new RegExp(`^event "${swap.id}": `))
  })

  it.effect("an event of a token launched earlier in the same batch gets every check but the unknown-token one", () => {
    const { store, market, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const swap = wire.find((e) => e.type === "swap")! as { token: string }
      const launch = wire.find((e) => e.type === "tokenLaunched" && (e as { token: string }).token === swap.token)!
      // each refused on its own, though its token is launched just before it in the batch
      // (on the field each refusal is about)
      const beyond: Array<[unknown, string]> = [
        [{ ...swap, tokenAmount: "1" + "0".repeat(37) }, "events[1].tokenAmount"],
        [{ ...swap, nativeUsd: "0" }, "events[1].nativeUsd"],
        [{ ...swap, trader: "not-an-address" }, "events[1].trader"],
        [{ ...swap, nativeAmount: "1" + "0".repeat(30) }, "events[1]"], // "a native amount beyond …": no field of that name
        [{ ...swap, timestamp: (launch as { timestamp: number }).timestamp - 60_001 }, "events[1].timestamp"] // over a minute before its token's launch
      ]
      for (const [bad, field] of beyond) {
        const error = yield* Effect.flip(ingest.ingest([launch, bad]))
        expect(error._tag).toBe("ValidationFailed")
        if (error._tag === "ValidationFailed") expect(error.issues.map((i) => i.field)).toEqual([field])
      }
      // a refused launch still counts for its token's events: they are not refused once more as of an unknown token
      const badLaunch = { ...launch, creator: "not-an-address" }
      const onlyLaunch = yield* Effect.flip(ingest.ingest([badLaunch, swap, { ...swap, id: "x:later" }]))
      if (onlyLaunch._tag === "ValidationFailed") expect(onlyLaunch.issues.map((i) => i.field)).toEqual(["events[0].creator"])
      else expect.fail(onlyLaunch._tag)
      // also a launch that does not decode, when it names its chain and token
      const undecodable = yield* Effect.flip(ingest.ingest([{ ...launch, decimals: 19 }, swap, { ...swap, id: "x:later" }]))
      if (undecodable._tag === "ValidationFailed") expect(undecodable.issues.map((i) => i.field)).toEqual(["events[0].decimals"])
      else expect.fail(undecodable._tag)
      // and its time still bounds theirs
      const early = { ...swap, id: "x:early", timestamp: (launch as { timestamp: number }).timestamp - 60_001 }
      const earlyAfterUndecodable = yield* Effect.flip(ingest.ingest([{ ...launch, decimals: 19 }, early]))
      if (earlyAfterUndecodable._tag === "ValidationFailed") expect(earlyAfterUndecodable.issues.map((i) => i.field)).toEqual(["events[0].decimals", "events[1].timestamp"])
      else expect.fail(earlyAfterUndecodable._tag)
      // the swap as it was is fine after its launch in the batch
      yield* ingest.ingest([launch, swap])
      expect(store.log.length).toBe(2)
      expect(market.engine.stats.trades).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a token launches once: a launch with another id is refused, in the same batch or a later one; the same launch again is a repeat", () => {
    const { store, market, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const launch = wire.find((e) => e.type === "tokenLaunched")! as { id: string }
      const relaunch = { ...launch, id: `${launch.id}:again` }
      const inOne = yield* Effect.flip(ingest.ingest([launch, relaunch]))
      expect(inOne._tag).toBe("ValidationFailed")
      if (inOne._tag === "ValidationFailed") {
        expect(inOne.issues.map((i) => i.field)).toEqual(["events[1].token"])
        expect(inOne.issues[0]!.message).toContain("already launched")
      }
      expect(store.log.length).toBe(0)
      yield* ingest.ingest([launch])
      const later = yield* Effect.flip(ingest.ingest([relaunch]))
      expect(later._tag).toBe("ValidationFailed")
      // a launch in a batch accepted but not folded yet comes first: a batch launching the token
      // again under another id is refused, though it carries its own launch
      const other = wire.find((e) => e.type === "tokenLaunched" && e.id !== launch.id)! as { id: string; chain: string; token: string }
      const pending = new Map([[`${other.chain}:${other.token}`, { id: other.id, timestamp: 0 }]])
      const checked = Ingest.checkBatch(market, Ingest.decodeBatch([{ ...other, id: `${other.id}:again` }]), pending)
      expect("issues" in checked && checked.issues.map((i) => i.message).join()).toContain("already launched by another event")
      const same = Ingest.checkBatch(market, Ingest.decodeBatch([other]), pending)
      expect("events" in same).toBe(true)
      // sent again, whole or inside a batch with itself: a repeat, not an error
      const again = yield* ingest.ingest([launch, launch])
      expect(again.accepted).toBe(0)
      expect(store.log.map((e) => e.event.id)).toEqual([launch.id])
      expect(market.engine.stats.tokens).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("an id names one event: a repeat in a batch is a duplicate when it is the same event, refused when it is another", () => {
    const { store, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const at = wire.findIndex((e) => e.type === "swap")
      const head = wire.slice(0, at)
      const swap = wire[at] as Record<string, unknown>
      // another event under the same id (an amount changed): refused whole, on the repeat's id
      const changed = { ...swap, tokenAmount: `${String(swap.tokenAmount)}0` }
      const refused = yield* Effect.flip(ingest.ingest([...head, swap, changed]))
      expect(refused._tag).toBe("ValidationFailed")
      if (refused._tag === "ValidationFailed") {
        expect(refused.issues.map((i) => i.field)).toEqual([`events[${at + 1}].id`])
        expect(refused.issues[0]!.message).toContain(`is the id of events[${at}], a different event`)
      }
      expect(store.log.length).toBe(0)
      // the first copy does not decode: the second is another event too, and says so
      const broken = { ...swap, tokenAmount: "abc" }
      const both = yield* Effect.flip(ingest.ingest([...head, broken, swap]))
      expect(both._tag === "ValidationFailed" && both.issues.map((i) => i.field)).toEqual([`events[${at}].tokenAmount`, `events[${at + 1}].id`])
      expect(store.log.length).toBe(0)
      // the same event again, its fields in another order: a duplicate
      const reordered = Object.fromEntries(Object.entries(swap).reverse())
      expect(yield* ingest.ingest([...head, swap, reordered])).toEqual({ accepted: at + 1, duplicates: 1 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("the raw values are decoded when ingest is called: the effect runs again (duplicates) without reading them", () => {
    const { store, layer } = setup()
    return Effect.gen(function*() {
      const ingest = yield* Ingest.Ingest
      const batch: Array<unknown> = wire.slice(0, 40).map((e) => ({ ...e }))
      const texts = batch.map((e) => JSON.stringify(e))
      const effect = ingest.ingest(batch, texts)
      // The caller's arrays and objects may change or go once the call returned.
      for (const raw of batch) for (const key of Object.keys(raw as object)) delete (raw as Record<string, unknown>)[key]
      batch.length = 0
      texts.length = 0
      expect(yield* effect).toEqual({ accepted: 40, duplicates: 0 })
      expect(yield* effect).toEqual({ accepted: 0, duplicates: 40 })
      expect(store.log.map((s) => s.event)).toEqual(simulated.slice(0, 40))
    }).pipe(Effect.provide(layer))
  })
})
