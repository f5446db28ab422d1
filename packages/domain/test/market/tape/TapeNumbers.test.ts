import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { nearestDouble } from "./tapeModel.js"
import * as FixedMath from "../../../src/Fixed.js"
import {
  addSplit,
  fixedFromDouble,
  fixedToDouble,
  formatVolumeUnits,
  splitToFixed,
  splitToNumber,
  splitToUnits,
  subtractSplit,
  WORD,
  writeVolumeUnits
} from "../../../src/market/TapeNumbers.js"
import { nanoUnits, shortDecimal } from "./tapeModel.js"

const anyFixed = fc.oneof(
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
  fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
  shortDecimal
)


describe("TapeNumbers", () => {
  it("fixedToDouble is the nearest double, what JSON.parse of the decimal string gives (a candle's close is the price read as a number)", () => {
    fc.assert(
      fc.property(anyFixed, (value) => {
        expect(fixedToDouble(value)).toBe(JSON.parse(FixedMath.format(value)))
      })
    )
    // A price Fixed.toNumber, rounding twice, gives as 0.01679483617892209, one unit in the last place off
    expect(fixedToDouble(16_794_836_178_922_087n)).toBe(0.016794836178922086)
  })

  it("fixedFromDouble gives back every Fixed of at most 15 significant digits", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 15n - 1n }),
        fc.integer({ min: -10, max: 30 }),
        fc.boolean(),
        (digits, exponent, negative) => {
          const magnitude = exponent >= 0 ? digits * 10n ** BigInt(exponent) : digits / 10n ** BigInt(-exponent)
          const value = negative ? -magnitude : magnitude
          expect(fixedFromDouble(fixedToDouble(value))).toBe(value)
        }
      )
    )
    // Doubles whose shortest spelling uses exponent form.
    expect(fixedFromDouble(1.5e-7)).toBe(150_000_000_000n)
    expect(fixedFromDouble(2e21)).toBe(2n * 10n ** 39n)
    expect(fixedFromDouble(fixedToDouble(FixedMath.unsafeParse("6.935")))).toBe(FixedMath.unsafeParse("6.935"))
  })

  it("formatVolumeUnits spells nano-units exactly like Fixed.format", () => {
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.bigInt({ min: 0n, max: 10n ** 12n })), (units) => {
        expect(formatVolumeUnits(units)).toBe(FixedMath.format(units * 10n ** 9n))
      })
    )
  })

  it("writeVolumeUnits stores whole nano-units, saturating at 2^64 - 1", () => {
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 30n }), fc.bigInt({ min: 0n, max: 10n ** 20n })), (volume) => {
        const words = new Uint32Array(4)
        writeVolumeUnits(words, 2, volume)
        expect(splitToUnits(words[2]!, words[3]!)).toBe(nanoUnits(volume))
        expect(words[0]).toBe(0)
      })
    )
  })

  it("split sums stay exact through any sequence of adds and subtracts, across carries", () => {
    const part = fc.tuple(fc.integer({ min: 0, max: WORD - 1 }), fc.integer({ min: 0, max: WORD - 1 }))
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 52) + 1, max: 2 ** 52 - 1 }),
        fc.integer({ min: 0, max: 2 ** 30 }),
        fc.array(fc.tuple(fc.boolean(), part), { maxLength: 50 }),
        (startLow, startHigh, operations) => {
          const sums = new Float64Array([startLow, startHigh])
          let exact = BigInt(startHigh) * BigInt(WORD) + BigInt(startLow)
          for (const [add, [low, high]] of operations) {
            const amount = BigInt(high) * BigInt(WORD) + BigInt(low)
            if (add) {
              addSplit(sums, 0, low, high)
              exact += amount
            } else {
              subtractSplit(sums, 0, low, high)
              exact -= amount
            }
            expect(Number.isSafeInteger(sums[0]!) && Number.isSafeInteger(sums[1]!)).toBe(true)
            expect(splitToUnits(sums[0]!, sums[1]!)).toBe(exact)
            expect(splitToFixed(sums[0]!, sums[1]!)).toBe(exact * 10n ** 9n)
            expect(splitToNumber(sums[0]!, sums[1]!)).toBe(nearestDouble(exact))
          }
        }
      )
    )
  })
})
