/**
 * The reusable write block: the bytes of a flush are the same with and without it, and a slice
 * Node still holds (a slow reader's pending write) is never overwritten by later flushes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { FrameQueue, WriteArena } from "../src/Framing.js"

// Sizes drawn uniformly (fast-check's strings favour tiny ones), so flushes fill and wrap blocks.
const frame = fc.record({
  // Each frame's own fill character, so an overwrite by a later flush changes the bytes.
  fill: fc.integer({ min: 33, max: 126 }).map((c) => String.fromCharCode(c)),
  prefix: fc.integer({ min: 1, max: 40 }),
  data: fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 300 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1500, max: 4500 }) }
  ),
  text: fc.boolean()
})

describe("WriteArena", () => {
  it("gives the same bytes as a fresh buffer and never overwrites a slice still held", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ frames: fc.array(frame, { minLength: 1, maxLength: 6 }), kept: fc.boolean() }), { minLength: 60, maxLength: 200 }), (flushes) => {
        const arena = new WriteArena(4096)
        const held: Array<{ bytes: Buffer; copy: Buffer }> = []
        for (const { frames, kept } of flushes) {
          const plain = new FrameQueue()
          const pooled = new FrameQueue()
          for (const f of frames) {
            const prefix = Buffer.from(f.fill.repeat(f.prefix))
            if (f.text) {
              plain.pushText(prefix)
              pooled.pushText(prefix)
            } else {
              const data = Buffer.from(f.fill.repeat(f.data))
              plain.pushUpdate(prefix, data)
              pooled.pushUpdate(prefix, data)
            }
          }
          const expected = plain.drain()
          const actual = pooled.drain(arena)
          expect(actual.equals(expected)).toBe(true)
          if (kept) held.push({ bytes: actual, copy: Buffer.from(actual) })
          else arena.releaseLast()
          for (const h of held) expect(h.bytes.equals(h.copy)).toBe(true)
        }
      }),
      { numRuns: 60 }
    )
    // CPU-bound: room for a shared, busy machine
  }, 30_000)
})
