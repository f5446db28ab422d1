/**
 * The hand-written fast paths of MarketEventJson.ts against the `MarketEvent` schema they shadow:
 *
 * - encoding: `marketEventJson(e)` is `JSON.stringify(encodeMarketEvent(e))` byte for byte, for
 *   any event the schema admits;
 * - decoding: whatever `decodeMarketEventFast` accepts, the schema accepts too and decodes to the
 *   same value (fields, their order, bigints, -0); what it declines goes to the schema, so
 *   `fast ?? schema` is the schema. Checked on events the schema generates and on simulated
 *   events broken in many ways (wrong types, bounds, missing and extra fields, odd amounts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Exit } from "effect"
import * as fc from "fast-check"
import type { MarketEvent } from "../../src/events/MarketEvent.js"
import {
  carriesOnlyEventFields,
  decodeMarketEvent,
  decodeMarketEventFast,
  encodeMarketEvent,
  encodeMarketEventFast,
  fieldCounts,
  marketEventJson,
  MarketEvent as MarketEventSchema
} from "../../src/events/Events.js"
import { MarketSimulator } from "../../src/simulator/MarketSimulator.js"

/** A value's exact shape: key order, bigints and -0 included (JSON.stringify alone loses them). */
const exact = (value: unknown): string =>
  JSON.stringify(value, (_key, v) =>
    typeof v === "bigint" ? `${v}n` : Object.is(v, -0) ? "-0" : v === undefined ? "<undefined>" : v)

const schemaDecode = (raw: unknown) => decodeMarketEvent(raw, { errors: "all" })

/** Simulated events of every type, in their wire form. */
const simulated: Array<MarketEvent> = new MarketSimulator({
  seed: 17,
  startTime: 1_750_000_000_000,
  tradesPerSecond: 30,
  launchesPerMinute: 60
}).runFor(6 * 60_000)
const samples: Array<MarketEvent> = (() => {
  // A few of each type (the rare ones all), so mutations hit every decoder.
  const byType = new Map<string, Array<MarketEvent>>()
  for (const event of simulated) {
    const list = byType.get(event.type) ?? []
    if (list.length < 8) list.push(event)
    byType.set(event.type, list)
  }
  return [...byType.values()].flat()
})()

describe("marketEventJson / encodeMarketEventFast", () => {
  it("covers every event type of the simulator", () => {
    // Every type but curveProgressed (the simulator's swaps carry curve progress in poolAfter), and
    // in a run this short perhaps one rare one.
    expect(new Set(samples.map((e) => e.type)).size).toBeGreaterThanOrEqual(11)
  })

  it("is the schema's encoding, byte for byte, on simulated events", () => {
    for (const event of simulated) {
      expect(marketEventJson(event)).toBe(JSON.stringify(encodeMarketEvent(event)))
      expect(exact(encodeMarketEventFast(event))).toBe(exact(encodeMarketEvent(event)))
    }
  })

  it.prop("is the schema's encoding, byte for byte, on any event the schema admits", [MarketEventSchema], ([event]) => {
    expect(marketEventJson(event)).toBe(JSON.stringify(encodeMarketEvent(event)))
  })
})

describe("decodeMarketEventFast", () => {
  it("takes the fast path for the simulator's events and gives the schema's value", () => {
    for (const event of simulated) {
      const wire = encodeMarketEvent(event)
      const fast = decodeMarketEventFast(wire)
      expect(fast).toBeDefined()
      const slow = schemaDecode(wire)
      expect(Exit.isSuccess(slow)).toBe(true)
      if (Exit.isSuccess(slow)) expect(exact(fast)).toBe(exact(slow.value))
    }
  })

  it.prop("takes the fast path for the JSON form of any event the schema admits, and gives the schema's value", [MarketEventSchema], ([event]) => {
    const wire = JSON.parse(JSON.stringify(encodeMarketEvent(event)))
    const fast = decodeMarketEventFast(wire)
    expect(fast).toBeDefined()
    const slow = schemaDecode(wire)
    expect(Exit.isSuccess(slow)).toBe(true)
    if (Exit.isSuccess(slow)) expect(exact(fast)).toBe(exact(slow.value))
  })

  // Values that sit on or just past the schema's rules, and plain wrong types.
  const long = (n: number) => "a".repeat(n)
  const odd: ReadonlyArray<unknown> = [
    null, undefined, true, false, 0, -0, 1, -1, 1.5, 36, 37, 10_000, 10_001, 2 ** 53, 2 ** 53 - 1, Number.NaN, Number.POSITIVE_INFINITY, 1e21,
    "", "0", "00", "007", "-0", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1.5", ".5", "1.", "１", "12345678901234567890123456789",
    "buy", "sell", "cex", "wallet", "solana", "Solana", "base", "x", long(64), long(65), long(128), long(129), long(160), long(161),
    long(256), long(257), long(2048), long(2049), [], ["a"], [1], [null], {}, { name: "n" }, new Date(0)
  ]
  const fieldNames = [
    ...new Set(samples.flatMap((e) => Object.keys(encodeMarketEvent(e)))),
    "extra", "__proto__", "constructor", "toString"
  ]
  const nestedNames = ["liquidityNative", "bondingCurvePct", "transaction", "validator", "platform", "dex", "name", "symbol", "image", "description", "website", "twitter", "telegram", "discord", "extra"]

  type Mutation = (wire: Record<string, any>) => unknown
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    // One of the event's own fields, most often: every rule of every type gets hit.
    fc.tuple(fc.nat(), fc.constantFrom(...odd)).map(([index, value]): Mutation => (w) => {
      const keys = Object.keys(w)
      if (keys.length > 0) w[keys[index % keys.length]!] = value
      return w
    }),
    fc.tuple(fc.nat(), fc.constantFrom(...odd)).map(([index, value]): Mutation => (w) => {
      const keys = Object.keys(w)
      if (keys.length > 0) w[keys[index % keys.length]!] = value
      return w
    }),
    fc.tuple(fc.constantFrom(...fieldNames), fc.constantFrom(...odd)).map(([key, value]): Mutation => (w) => {
      // an own property, as JSON.parse makes one (`w.__proto__ = ...` would set the prototype instead)
      Object.defineProperty(w, key, { value, enumerable: true, writable: true, configurable: true })
      return w
    }),
    fc.constantFrom(...fieldNames).map((key): Mutation => (w) => {
      delete w[key]
      return w
    }),
    fc.tuple(fc.constantFrom("fees", "metadata", "poolAfter"), fc.constantFrom(...nestedNames), fc.constantFrom(...odd)).map(([outer, key, value]): Mutation => (w) => {
      if (typeof w[outer] === "object" && w[outer] !== null) w[outer] = { ...w[outer], [key]: value }
      return w
    }),
    fc.tuple(fc.constantFrom("fees", "metadata", "poolAfter"), fc.constantFrom(...nestedNames)).map(([outer, key]): Mutation => (w) => {
      if (typeof w[outer] === "object" && w[outer] !== null) {
        const copy = { ...w[outer] }
        delete copy[key]
        w[outer] = copy
      }
      return w
    }),
    fc.constantFrom(...samples.map((e) => e.type), "unknown", "").map((type): Mutation => (w) => ({ ...w, type })),
    fc.constantFrom<Mutation>(
      (w) => Object.assign(Object.create(null), w),
      (w) => Object.assign(Object.create({ inherited: true }), w),
      (w) => Object.values(w),
      (w) => JSON.stringify(w),
      () => null,
      (w) => ({ ...w, annotations: Array.isArray(w.annotations) ? [...w.annotations, undefined] : w.annotations }),
      // eslint-disable-next-line no-sparse-arrays
      (w) => ({ ...w, annotations: [, "a"] }),
      (w) => Object.fromEntries(Object.entries(w).reverse())
    )
  )

  /** The fast path's promise on one input: declined, or the schema's own value. */
  const agrees = (raw: unknown, what: string) => {
    const fast = decodeMarketEventFast(raw)
    if (fast === undefined) return
    const slow = schemaDecode(raw)
    expect(Exit.isSuccess(slow), what).toBe(true)
    if (Exit.isSuccess(slow)) expect(exact(fast), what).toBe(exact(slow.value))
  }

  it("agrees with the schema when any one field, nested ones included, takes any of the odd values or goes missing", () => {
    const oneOfEachType = [...new Map(samples.map((e) => [e.type, e])).values()]
    for (const event of oneOfEachType) {
      const wire = JSON.parse(JSON.stringify(encodeMarketEvent(event))) as Record<string, any>
      for (const key of [...Object.keys(wire), "extra"]) {
        for (const value of odd) agrees({ ...wire, [key]: value }, `${event.type}.${key} = ${String(value)}`)
        const without = { ...wire }
        delete without[key]
        agrees(without, `${event.type} without ${key}`)
        const inner = wire[key]
        if (typeof inner !== "object" || inner === null || Array.isArray(inner)) continue
        for (const innerKey of [...Object.keys(inner), "extra"]) {
          for (const value of odd) agrees({ ...wire, [key]: { ...inner, [innerKey]: value } }, `${event.type}.${key}.${innerKey} = ${String(value)}`)
          const innerWithout = { ...inner }
          delete innerWithout[innerKey]
          agrees({ ...wire, [key]: innerWithout }, `${event.type}.${key} without ${innerKey}`)
        }
      }
    }
  })

  it("declines what the schema refuses, and agrees with it on what both accept", () =>
    fc.assert(
      fc.property(fc.constantFrom(...samples), fc.array(mutation, { minLength: 1, maxLength: 4 }), (event, mutations) => {
        let raw: unknown = JSON.parse(JSON.stringify(encodeMarketEvent(event)))
        for (const mutate of mutations) raw = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? mutate(raw as Record<string, any>) : raw
        const fast = decodeMarketEventFast(raw)
        if (fast === undefined) return // the schema decides (and reports)
        const slow = schemaDecode(raw)
        expect(Exit.isSuccess(slow)).toBe(true)
        if (Exit.isSuccess(slow)) expect(exact(fast)).toBe(exact(slow.value))
      }),
      { numRuns: 5_000 }
    ))

  it("declines the values just past each rule (so the schema reports them)", () => {
    const swap = encodeMarketEvent(samples.find((e) => e.type === "swap")!) as Record<string, any>
    const refused: Array<Record<string, unknown>> = [
      { tokenAmount: "0" }, { tokenAmount: "-1" }, { quoteAmount: "1.5" }, { token: "" }, { token: long(129) }, { transactionHash: long(161) },
      { id: long(257) }, { timestamp: -1 }, { timestamp: 1.5 }, { quoteDecimals: 37 }, { nativeUsd: "1e3" }, { side: "hold" }, { chain: "eth" },
      { fees: { ...swap.fees, dex: "x" } }, { terminal: 1 }
    ]
    for (const change of refused) {
      const raw = { ...swap, ...change }
      expect(decodeMarketEventFast(raw), JSON.stringify(change)).toBeUndefined()
      expect(Exit.isFailure(schemaDecode(raw)), JSON.stringify(change)).toBe(true)
    }
    // Accepted by the schema, left to it by the fast path: the combined decoder still accepts.
    const signedZero = { ...swap, quoteAmount: "-0" }
    expect(decodeMarketEventFast(signedZero)).toBeUndefined()
    expect(Exit.isSuccess(schemaDecode(signedZero))).toBe(true)
    // Leading zeros: both read the same amount (the stored body is then the canonical "7").
    const padded = { ...swap, tokenAmount: "007" }
    expect(decodeMarketEventFast(padded)?.type === "swap" && decodeMarketEventFast(padded)).toMatchObject({ tokenAmount: 7n })
    expect(marketEventJson(decodeMarketEventFast(padded)!)).toContain(`"tokenAmount":"7"`)
    // Extra fields are dropped, as by the schema.
    const extra = decodeMarketEventFast({ ...swap, extra: 1 })
    expect(extra).toBeDefined()
    expect(Object.keys(extra!)).toEqual(Object.keys(swap))
    // A swap without poolAfter (an indexer that does not know it, or a log written before the
    // field existed): both read it as null, and it is stored re-encoded, with the field.
    const { poolAfter: _, ...older } = swap
    const decoded = decodeMarketEventFast(older)
    expect(decoded).toMatchObject({ poolAfter: null })
    const slow = schemaDecode(older)
    expect(Exit.isSuccess(slow) && exact(slow.value)).toBe(exact(decoded))
    expect(carriesOnlyEventFields(older, decoded!)).toBe(false)
    expect(marketEventJson(decoded!)).toContain(`"poolAfter":null`)
    // poolAfter's own rules.
    for (const poolAfter of [{ liquidityNative: "-1", bondingCurvePct: null }, { liquidityNative: "1", bondingCurvePct: "1e2" }, { liquidityNative: "1" }, "x"]) {
      expect(decodeMarketEventFast({ ...swap, poolAfter }), JSON.stringify(poolAfter)).toBeUndefined()
      expect(Exit.isFailure(schemaDecode({ ...swap, poolAfter })), JSON.stringify(poolAfter)).toBe(true)
    }
  })
})

describe("carriesOnlyEventFields", () => {
  it("knows each type's number of fields (the schema's)", () => {
    for (const member of MarketEventSchema.members) {
      const type = (member.fields.type as unknown as { readonly literal: MarketEvent["type"] }).literal
      expect(fieldCounts[type], type).toBe(Object.keys(member.fields).length)
    }
  })

  it("is true for an event's JSON form in any key order, false once any object in it has a field more", () => {
    for (const event of samples) {
      const wire = JSON.parse(JSON.stringify(encodeMarketEvent(event))) as Record<string, any>
      expect(carriesOnlyEventFields(wire, event), event.type).toBe(true)
      expect(carriesOnlyEventFields(Object.fromEntries(Object.entries(wire).reverse()), event)).toBe(true)
      expect(carriesOnlyEventFields({ ...wire, note: "x" }, event), event.type).toBe(false)
      for (const key of ["fees", "metadata", "poolAfter"]) {
        if (typeof wire[key] !== "object" || wire[key] === null) continue
        expect(carriesOnlyEventFields({ ...wire, [key]: { ...wire[key], note: "x" } }, event), `${event.type}.${key}`).toBe(false)
      }
    }
  })
})
