/**
 * The test kit's events are valid market events: the factories' defaults and every draw of the
 * arbitraries decode under the MarketEvent schema, and a pinned field keeps its value.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as fc from "fast-check"
import { MarketEvent } from "../../src/events/MarketEvent.js"
import { EventArbitraries, Events } from "../../testing/index.js"

const valid = (event: MarketEvent): boolean => Schema.is(MarketEvent)(event)

describe("@spot/domain/testing events", () => {
  it("each factory's defaults make a valid event", () => {
    expect(valid(Events.launch({ id: "l", token: "T", timestamp: 0 }))).toBe(true)
    expect(valid(Events.swap({ id: "s", token: "T", timestamp: 0 }))).toBe(true)
    expect(valid(Events.transfer({ id: "t", token: "T", timestamp: 0 }))).toBe(true)
    expect(valid(Events.swap({ id: "s", token: "T", timestamp: 0, tokenAmount: 0n })), "the check itself refuses a swap of nothing").toBe(false)
  })

  it("an override replaces the default and keeps the schema's key order", () => {
    const swap = Events.swap({ id: "s", token: "T", timestamp: 0, quoteAmount: 7n, side: "sell" })
    expect([swap.side, swap.quoteAmount, swap.nativeAmount]).toEqual(["sell", 7n, 7n])
    expect(Object.keys(swap)).toEqual(Object.keys(Events.swap({ id: "s", token: "T", timestamp: 0 })))
  })

  it("every drawn event is valid", () => {
    fc.assert(fc.property(fc.oneof(EventArbitraries.tokenLaunched(), EventArbitraries.swap(), EventArbitraries.transfer()), valid))
  })

  it("a pinned field keeps its value", () => {
    fc.assert(fc.property(EventArbitraries.swap({ token: fc.constant("Pinned"), side: fc.constant("buy") }), (swap) => swap.token === "Pinned" && swap.side === "buy"))
  })
})
