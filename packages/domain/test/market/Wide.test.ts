import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Wide from "../../src/market/Wide.js"

/** Integers across the whole range, with the limb boundaries (2^52, 2^104) and their neighbours. */
const edge = fc.constantFrom(
  0n, 1n, -1n, 2n ** 52n, 2n ** 52n - 1n, -(2n ** 52n), 2n ** 104n, 2n ** 104n - 1n, -(2n ** 104n), 10n ** 36n, -(10n ** 36n),
  // the word boundaries of the split (2^64, 2^128)
  2n ** 64n, 2n ** 64n - 1n, -(2n ** 64n), -(2n ** 64n) + 1n, 2n ** 128n, 2n ** 128n - 1n, -(2n ** 128n)
)
const value = fc.oneof(
  edge,
  fc.bigInt({ min: -(2n ** 150n), max: 2n ** 150n }),
  fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.bigInt({ min: -(2n ** 130n), max: 2n ** 130n })
)

describe("Wide integers", () => {
  it("reads back what was written, and sums and differences equal BigInt arithmetic", () => {
    fc.assert(
      fc.property(value, fc.array(fc.tuple(fc.boolean(), value), { maxLength: 30 }), (start, steps) => {
        const column = new Float64Array(2 * Wide.LIMBS)
        Wide.write(column, Wide.LIMBS, start)
        expect(Wide.read(column, Wide.LIMBS)).toBe(start)
        let expected = start
        const split = new Wide.Split()
        for (const [subtract, step] of steps) {
          if (subtract) Wide.subtract(column, Wide.LIMBS, step)
          else if (step % 2n === 0n) Wide.add(column, Wide.LIMBS, step)
          else Wide.addSplit(column, Wide.LIMBS, split.of(step))
          expected += subtract ? -step : step
          expect(Wide.read(column, Wide.LIMBS)).toBe(expected)
          expect(Wide.isZero(column, Wide.LIMBS)).toBe(expected === 0n)
          expect(Wide.sign(column, Wide.LIMBS)).toBe(expected === 0n ? 0 : expected < 0n ? -1 : 1)
        }
        // the neighbour slot was never touched
        expect(Wide.read(column, 0)).toBe(0n)
      })
    )
  })

  it("compares like BigInt", () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        const column = new Float64Array(2 * Wide.LIMBS)
        Wide.write(column, 0, a)
        Wide.write(column, Wide.LIMBS, b)
        expect(Math.sign(Wide.compare(column, 0, Wide.LIMBS))).toBe(a === b ? 0 : a < b ? -1 : 1)
        const other = new Float64Array(Wide.LIMBS)
        Wide.write(other, 0, b)
        expect(Math.sign(Wide.compareAcross(column, 0, other, 0))).toBe(a === b ? 0 : a < b ? -1 : 1)
      })
    )
  })

  it("saturates a written value beyond the range and refuses a sum beyond it", () => {
    const column = new Float64Array(Wide.LIMBS)
    Wide.write(column, 0, 2n ** 200n)
    expect(Wide.read(column, 0)).toBe(Wide.MAX)
    Wide.write(column, 0, -(2n ** 200n))
    expect(Wide.read(column, 0)).toBe(-Wide.MAX)
    Wide.write(column, 0, Wide.MAX)
    expect(() => Wide.add(column, 0, Wide.MAX)).toThrow(RangeError)
  })
})
