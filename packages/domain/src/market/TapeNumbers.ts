/**
 * Number representations used by the trade tape: prices as doubles (candle values are JSON
 * numbers) and volumes as exact integers of nano-units split over two 32-bit words, so per-trade
 * storage fits typed arrays and running sums never allocate a bigint on the hot path.
 */
import type { Fixed } from "../Fixed.js"
import { format, pow10, SCALE_DIGITS } from "../Fixed.js"

/** Volumes are stored in units of 10^-9 (nano-native, nano-USD): a Fixed divided by 10^9. */
export const VOLUME_UNIT_DIGITS = 9
const fixedPerVolumeUnit = 10n ** BigInt(SCALE_DIGITS - VOLUME_UNIT_DIGITS)
const volumeUnitsPerOne = 10 ** VOLUME_UNIT_DIGITS

/** 2^32: the weight of the high word of a split integer. */
export const WORD = 4_294_967_296
/** Past this magnitude a running low word is carried into the high word (keeps doubles exact). */
const CARRY_AT = 4_503_599_627_370_496 // 2^52
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER)
const maxUnits = (1n << 64n) - 1n
const lowMask = 0xffff_ffffn

/**
 * Writes a non-negative Fixed volume as nano-units into `words[index]` (low 32 bits) and
 * `words[index + 1]` (high 32 bits). Truncates below 10^-9, treats negatives as 0 and saturates
 * at 2^64 - 1 units (≈ 1.8e10 per trade), so storage stays 8 bytes per volume.
 */
export const writeVolumeUnits = (words: Uint32Array, index: number, volume: Fixed): void => {
  if (volume <= 0n) {
    words[index] = 0
    words[index + 1] = 0
    return
  }
  const units = volume / fixedPerVolumeUnit
  if (units <= maxSafe) {
    const n = Number(units)
    const low = n % WORD
    words[index] = low
    words[index + 1] = (n - low) / WORD
  } else if (units >= maxUnits) {
    words[index] = 0xffff_ffff
    words[index + 1] = 0xffff_ffff
  } else {
    words[index] = Number(units & lowMask)
    words[index + 1] = Number(units >> 32n)
  }
}

/**
 * Adds `low + high × 2^32` to the split sum held at `sums[index]` (low) and `sums[index + 1]`
 * (high). Both halves stay exact doubles: the low half is carried when it nears 2^52.
 */
export const addSplit = (sums: Float64Array, index: number, low: number, high: number): void => {
  let sumLow = sums[index] + low
  let sumHigh = sums[index + 1] + high
  if (sumLow >= CARRY_AT || sumLow <= -CARRY_AT) {
    const carry = Math.floor(sumLow / WORD)
    sumLow -= carry * WORD
    sumHigh += carry
  }
  sums[index] = sumLow
  sums[index + 1] = sumHigh
}

/** Subtracts `low + high × 2^32` from the split sum at `sums[index]`. */
export const subtractSplit = (sums: Float64Array, index: number, low: number, high: number): void => {
  addSplit(sums, index, -low, -high)
}

/** The exact split sum as an integer of nano-units. */
export const splitToUnits = (low: number, high: number): bigint =>
  high === 0 ? BigInt(low) : (BigInt(high) << 32n) + BigInt(low)

/** The exact split sum as a Fixed (nano-units × 10^9). */
export const splitToFixed = (low: number, high: number): Fixed => splitToUnits(low, high) * fixedPerVolumeUnit

/**
 * Nano-units as the decimal string `Fixed.format` gives for the same amount ("0.000000001",
 * "42", "-1.5"), spelled directly from the digits: the stats object formats 30 of these.
 */
export const formatVolumeUnits = (units: bigint): string => {
  if (units === 0n) return "0"
  const negative = units < 0n
  const digits = (negative ? -units : units).toString()
  const integerDigits = digits.length - VOLUME_UNIT_DIGITS
  let end = digits.length
  while (end > 0 && end > integerDigits && digits.charCodeAt(end - 1) === 48) end-- // trailing "0"
  let text: string
  if (integerDigits <= 0) text = `0.${"0".repeat(-integerDigits)}${digits.slice(0, end)}`
  else if (end === integerDigits) text = digits.slice(0, integerDigits)
  else text = `${digits.slice(0, integerDigits)}.${digits.slice(integerDigits, end)}`
  return negative ? `-${text}` : text
}

/**
 * The split sum as a JSON number in whole units: the nearest double of the exact sum divided by
 * 10^9, so it depends on the sum only, never on how the sum is split (a bucket computed two ways
 * gives the same number). Below 2^53 units the sum is an exact double and one division rounds
 * once; above (a volume past about 9 million whole units), `high × 2^32 + low` would round before
 * the division rounds again (one step off), so the exact sum is spelled
 * as a decimal and parsed, which rounds once.
 */
export const splitToNumber = (low: number, high: number): number => {
  // `high × 2^32` is exact; the sum is exact when its rounded magnitude stays below 2^53
  const approx = high * WORD + low
  if (approx < TWO_53 && approx > -TWO_53) return approx / volumeUnitsPerOne
  const exact = BigInt(high) * WORD_BIG + BigInt(low)
  const digits = (exact < 0n ? -exact : exact).toString() // 16 digits or more
  const sign = exact < 0n ? "-" : ""
  return Number(`${sign}${digits.slice(0, -VOLUME_UNIT_DIGITS)}.${digits.slice(-VOLUME_UNIT_DIGITS)}`)
}
const TWO_53 = 2 ** 53
const WORD_BIG = BigInt(WORD)

const safeDouble = Number.MAX_SAFE_INTEGER

/**
 * The nearest double to a Fixed (what `JSON.parse` of its decimal string gives). Below 2^53 units
 * the bigint converts exactly and one division rounds once. Beyond, `Fixed.toNumber` rounds twice
 * (the integer and fraction halves, then their sum) and is one unit in the last place off for
 * about one value in twenty: a candle's close would differ from the token's price read as a
 * number. There the decimal text is read, rounding once.
 */
export const fixedToDouble = (value: Fixed): number => {
  const estimate = Number(value)
  return estimate <= safeDouble && estimate >= -safeDouble ? estimate / 1e18 : Number(format(value))
}

/**
 * The Fixed a double came from, when that Fixed had at most 15 significant digits: the
 * 15-digit spelling of the double is checked by converting it back, since distinct 15-digit
 * decimals never share a double even with `toNumber`'s last-place error. Otherwise the
 * double's shortest spelling (`String(n)`, 17 digits at most), within a unit in the last place.
 */
export const fixedFromDouble = (n: number): Fixed => {
  if (!Number.isFinite(n) || n === 0) return 0n
  const short = parseDecimalText(n.toPrecision(15))
  return fixedToDouble(short) === n ? short : parseDecimalText(String(n))
}

/** Parses JavaScript's number spelling, exponent form included ("1.5e-7", "1e+21"). */
const parseDecimalText = (text: string): Fixed => {
  const e = text.indexOf("e")
  const mantissa = e < 0 ? text : text.slice(0, e)
  const exponent = e < 0 ? 0 : Number(text.slice(e + 1))
  const negative = mantissa.charCodeAt(0) === 45 // "-"
  const body = negative ? mantissa.slice(1) : mantissa
  const dot = body.indexOf(".")
  const digits = dot < 0 ? body : body.slice(0, dot) + body.slice(dot + 1)
  const fractionDigits = dot < 0 ? 0 : body.length - dot - 1
  const shift = SCALE_DIGITS + exponent - fractionDigits
  const magnitude = shift >= 0 ? BigInt(digits) * pow10(shift) : BigInt(digits) / pow10(-shift)
  return negative ? -magnitude : magnitude
}
