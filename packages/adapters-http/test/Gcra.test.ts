import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Gcra from "../src/Gcra.js"

const intBetween = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const perMinute = intBetween(1, 60_000)
const startTime = intBetween(0, 2_000_000_000_000)

describe("Gcra", () => {
  it.prop("a burst from full allows exactly perMinute requests, then refuses", [perMinute, startTime], ([x, now]) => {
    const limit = { perMinute: x }
    let bucket = Gcra.full(limit, now)
    let allowed = 0
    for (let i = 0; i < x + 5; i++) {
      const decision = Gcra.take(limit, bucket, now)
      if (decision.allowed) allowed++
      bucket = decision.bucket
    }
    expect(allowed).toBe(x)
  })

  it.prop(
    "remaining counts down by one per allowed request, and is what peek reports",
    [intBetween(1, 500), startTime],
    ([x, now]) => {
      const limit = { perMinute: x }
      let bucket = Gcra.full(limit, now)
      for (let expected = x - 1; expected >= 0; expected--) {
        const decision = Gcra.take(limit, bucket, now)
        expect(decision.allowed).toBe(true)
        expect(decision.remaining).toBe(expected)
        bucket = decision.bucket
        expect(Gcra.peek(limit, bucket, now)).toBe(expected)
      }
    }
  )

  it.prop(
    "over any schedule, allowed requests never exceed perMinute + perMinute * elapsed / 60s",
    [
      intBetween(1, 2_000),
      startTime,
      Schema.Array(intBetween(0, 5_000)).check(Schema.isBetweenLength(1, 400))
    ],
    ([x, start, gaps]) => {
      const limit = { perMinute: x }
      let bucket = Gcra.full(limit, start)
      let now = start
      let allowed = 0
      for (const gap of gaps) {
        now += gap
        // Several attempts at the same instant, as a client hammering the server would.
        for (let i = 0; i < 3; i++) {
          const decision = Gcra.take(limit, bucket, now)
          if (decision.allowed) allowed++
          bucket = decision.bucket
        }
        const ceiling = x + (x * (now - start)) / 60_000
        expect(allowed).toBeLessThanOrEqual(Math.floor(ceiling + 1e-6))
      }
    }
  )

  it.prop(
    "a refusal says to wait at least one whole second, and after that wait one request passes",
    [perMinute, startTime, intBetween(0, 120_000)],
    ([x, start, later]) => {
      const limit = { perMinute: x }
      let bucket = Gcra.full(limit, start)
      // Drain, then let an arbitrary amount of time pass and drain again: refusals from any phase.
      for (let i = 0; i < x; i++) bucket = Gcra.take(limit, bucket, start).bucket
      const now = start + later
      let decision = Gcra.take(limit, bucket, now)
      while (decision.allowed) {
        bucket = decision.bucket
        decision = Gcra.take(limit, bucket, now)
      }
      expect(Number.isInteger(decision.retryAfterSeconds)).toBe(true)
      expect(decision.retryAfterSeconds).toBeGreaterThanOrEqual(1)
      expect(decision.bucket).toBe(bucket)
      expect(Gcra.take(limit, bucket, now + decision.retryAfterSeconds * 1000).allowed).toBe(true)
      // And the wait is not overstated by a whole second or more.
      if (decision.retryAfterSeconds > 1) {
        expect(Gcra.take(limit, bucket, now + (decision.retryAfterSeconds - 1) * 1000).allowed).toBe(false)
      }
    }
  )

  it.prop("a refused request spends nothing", [perMinute, startTime], ([x, now]) => {
    const limit = { perMinute: x }
    let bucket = Gcra.full(limit, now)
    for (let i = 0; i < x; i++) bucket = Gcra.take(limit, bucket, now).bucket
    const refused = Gcra.take(limit, bucket, now)
    expect(refused.allowed).toBe(false)
    expect(refused.remaining).toBe(0)
    expect(refused.bucket).toEqual(bucket)
  })

  it("refills evenly: the spec's 12,000/min refills one request every 5 ms", () => {
    const limit = { perMinute: 12_000 }
    let bucket = Gcra.full(limit, 0)
    for (let i = 0; i < 12_000; i++) bucket = Gcra.take(limit, bucket, 0).bucket
    expect(Gcra.take(limit, bucket, 4).allowed).toBe(false)
    expect(Gcra.take(limit, bucket, 4).retryAfterSeconds).toBe(1)
    expect(Gcra.take(limit, bucket, 5).allowed).toBe(true)
    expect(Gcra.peek(limit, bucket, 30_000)).toBe(6_000)
    expect(Gcra.isFull(limit, bucket, 59_999)).toBe(false)
    expect(Gcra.isFull(limit, bucket, 60_000)).toBe(true)
  })

  it("a slow budget reports the whole-second wait, rounded up", () => {
    const limit = { perMinute: 2 } // one request per 30 s
    let bucket = Gcra.full(limit, 0)
    bucket = Gcra.take(limit, bucket, 0).bucket
    bucket = Gcra.take(limit, bucket, 0).bucket
    expect(Gcra.take(limit, bucket, 0).retryAfterSeconds).toBe(30)
    expect(Gcra.take(limit, bucket, 100).retryAfterSeconds).toBe(30)
    expect(Gcra.take(limit, bucket, 29_001).retryAfterSeconds).toBe(1)
  })

  it("a clock going backwards neither refills nor moves the bucket back", () => {
    const limit = { perMinute: 60 }
    const bucket = Gcra.take(limit, Gcra.full(limit, 10_000), 10_000).bucket
    const decision = Gcra.take(limit, bucket, 5_000)
    expect(decision.remaining).toBe(58)
    expect(decision.bucket.updatedAt).toBe(10_000)
  })
})
