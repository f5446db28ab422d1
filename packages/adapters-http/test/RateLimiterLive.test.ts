import { describe, expect, it } from "@effect/vitest"
import * as RateLimiterLive from "../src/RateLimiterLive.js"

describe("RateLimiterLive", () => {
  it("keeps key and IP budgets apart, one bucket per key and per address", () => {
    const limiter = RateLimiterLive.make({ keyPerMinute: 2, ipPerMinute: 3 })
    expect(limiter.takeKey("a", 0).remaining).toBe(1)
    expect(limiter.takeKey("a", 0).remaining).toBe(0)
    expect(limiter.takeKey("a", 0).allowed).toBe(false)
    expect(limiter.takeKey("b", 0).allowed).toBe(true)
    expect(limiter.takeIp("a", 0).remaining).toBe(2)
    expect(limiter.takeKey("a", 30_000).allowed).toBe(true)
  })

  it("stays within its bucket bound: full buckets are dropped first, then the oldest", () => {
    const table = RateLimiterLive.makeTable(60, 100)
    for (let i = 0; i < 100; i++) table.take(`ip${i}`, 0)
    // A minute later every bucket is full again: the sweep can drop them all.
    table.take("late", 60_000)
    expect(table.size).toBe(1)
    for (let i = 0; i < 1_000; i++) table.take(`flood${i}`, 60_000)
    expect(table.size).toBeLessThanOrEqual(100)
    // A client just seen keeps its spent budget.
    table.take("recent", 60_000)
    expect(table.take("recent", 60_000).remaining).toBe(58)
  })

  it("a forgotten full bucket reads as full", () => {
    const table = RateLimiterLive.makeTable(2, 1)
    expect(table.take("x", 0).remaining).toBe(1)
    table.take("y", 60_000) // sweeps x, full again by now
    expect(table.take("x", 60_000).remaining).toBe(1)
  })
})
