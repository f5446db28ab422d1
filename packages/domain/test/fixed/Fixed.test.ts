/**
 * Fixed.parse against its definition: the decimal grammar `-?digits(.digits)?` as a regular
 * expression, the fraction cut (not rounded) at 18 digits, "-0" read as 0.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Fixed from "../../src/Fixed.js"

const definition = (text: string): bigint | undefined => {
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text)
  if (m === null) return undefined
  const frac = (m[3] ?? "").slice(0, 18).padEnd(18, "0")
  const v = BigInt(m[2]!) * 10n ** 18n + BigInt(frac)
  return m[1] === "-" && v !== 0n ? -v : v
}

describe("Fixed.parse", () => {
  it("reads what the decimal grammar admits, exactly, and nothing else", () => {
    const digits = (max: number) => fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 0, maxLength: max })
    const decimal = fc.tuple(fc.boolean(), digits(40), fc.option(digits(40))).map(([neg, int, frac]) => `${neg ? "-" : ""}${int}${frac === null ? "" : `.${frac}`}`)
    const noise = fc.string({ unit: fc.constantFrom(..."0123456789.-+e ١x"), maxLength: 30 })
    fc.assert(
      fc.property(fc.oneof(decimal, noise), (text) => {
        expect(Fixed.parse(text)).toBe(definition(text))
      }),
      { numRuns: 20_000 }
    )
  })

  it("answers the edges", () => {
    const cases: Array<[string, bigint | undefined]> = [
      ["0", 0n], ["-0", 0n], ["-0.0", 0n], ["1", 10n ** 18n], ["000123.4500", 123450000000000000000n],
      ["0.000000000000000001", 1n], ["0.0000000000000000019", 1n], ["999999999999999.999999999999999999", 999999999999999999999999999999999n],
      ["1234567890123456789012345", 1234567890123456789012345n * 10n ** 18n], ["", undefined], ["-", undefined], [".5", undefined],
      ["5.", undefined], ["1e3", undefined], ["+1", undefined], [" 1", undefined], ["1 ", undefined], ["1.2.3", undefined], ["--1", undefined]
    ]
    for (const [text, value] of cases) expect(Fixed.parse(text), text).toBe(value)
  })
})
