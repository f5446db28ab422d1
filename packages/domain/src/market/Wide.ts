/**
 * Exact integers kept in `Float64Array` columns, for state that changes on every trade.
 *
 * A BigInt stored in a long-lived object is a heap object of its own: every update allocates a new
 * one that survives into the old generation, and the garbage collector then spends more time than
 * the arithmetic. A wide integer is instead three float64 limbs in a typed array, base 2^52:
 *
 *   value = l0 + l1 × 2^52 + l2 × 2^104,   l0, l1 ∈ [0, 2^52),   l2 an integer with |l2| < 2^52
 *
 * so every signed integer below 2^156 in magnitude (token base units of any supply, 10^-18 money
 * far beyond any market) is held exactly. Sums of limbs stay below 2^53, so additions are exact
 * double arithmetic with carries: no allocation at all. Values enter and leave as BigInt (the
 * engine's arithmetic type) at the edges: `add` splits its operand once, `read` rebuilds one.
 */

/** Doubles per wide integer. */
export const LIMBS = 3

const BASE = 4_503_599_627_370_496 // 2^52
const BASE_BIG = 4_503_599_627_370_496n
const BITS = 52n
const TOP_LIMIT = 4_503_599_627_370_496 // 2^52: |l2| stays below it, so |value| < 2^156

/** Scratch of `split`: the limbs of the value being split, read by its caller at once (nothing kept between calls). */
const scratch = new Float64Array(LIMBS)

/**
 * A value split once into limbs, to be added to several columns (`addSplit`): the split is the
 * costly part of an addition, and a trade adds the same amounts to several sums.
 */
export class Split {
  l0 = 0
  l1 = 0
  l2 = 0
  /** Sets this to `value`'s limbs; returns this. */
  of(value: bigint): Split {
    const limbs = split(value)
    this.l0 = limbs[0]!
    this.l1 = limbs[1]!
    this.l2 = limbs[2]!
    return this
  }
}

/** Adds a split value to the integer at `at`. */
export const addSplit = (column: Float64Array, at: number, value: Split): void => {
  if (value.l0 === 0 && value.l1 === 0 && value.l2 === 0) return
  addLimbs(column, at, value.l0, value.l1, value.l2)
}

/**
 * Scratch of `write` and `read`: a BigInt's low 128 bits as four 32-bit words, read without allocating: storing a BigInt into a
 * BigUint64Array truncates it in place (no new BigInt), where `asUintN` and `>>` each build one.
 */
const wordsScratch = new BigUint64Array(2)
const halvesScratch = new Uint32Array(wordsScratch.buffer)
const TWO_32 = 4_294_967_296
const TWO_64 = 18_446_744_073_709_551_616n
const TWO_128 = TWO_64 * TWO_64
/** The word layout above holds on little-endian machines (all Node targets); others take BigInt shifts. */
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** Splits `value` into `scratch`; throws beyond the representable range. */
const split = (value: bigint): Float64Array => {
  if (value >= 0n) {
    splitMagnitude(value)
    return scratch
  }
  // Negative: zero minus the magnitude, borrowing (l0, l1 back into [0, 2^52), l2 negative).
  splitMagnitude(-value)
  const l0 = scratch[0]!
  const l1 = scratch[1]!
  const l2 = scratch[2]!
  clear(scratch, 0)
  subtractLimbs(scratch, 0, l0, l1, l2)
  return scratch
}

/** The limbs of a non-negative `value` into `scratch`. */
const splitMagnitude = (value: bigint): void => {
  if (value < BASE_BIG) {
    scratch[0] = Number(value)
    scratch[1] = 0
    scratch[2] = 0
    return
  }
  if (value < TWO_128 && littleEndian) {
    // Below 2^64 (native amounts, token base units of most tokens) no BigInt is made at all;
    // below 2^128 (money in 10^-18 units) one, the high word.
    wordsScratch[0] = value
    wordsScratch[1] = value < TWO_64 ? 0n : value >> 64n
    const a1 = halvesScratch[1]!
    const a2 = halvesScratch[2]!
    const a3 = halvesScratch[3]!
    scratch[0] = halvesScratch[0]! + (a1 & 0xfffff) * TWO_32 // bits 0-51
    scratch[1] = (a1 >>> 20) + a2 * 4096 + (a3 & 0xff) * 17_592_186_044_416 // bits 52-103: 12 + 32 + 8
    scratch[2] = a3 >>> 8 // bits 104-127
    return
  }
  scratch[0] = Number(BigInt.asUintN(52, value))
  const rest = value >> BITS
  scratch[1] = Number(BigInt.asUintN(52, rest))
  const top = Number(rest >> BITS)
  if (!(top < TOP_LIMIT)) throw new RangeError(`integer out of the wide range: ${value}`)
  scratch[2] = top
}

/** The integer at `at`. */
export const read = (column: Float64Array, at: number): bigint => {
  const l0 = column[at]!
  const l1 = column[at + 1]!
  const l2 = column[at + 2]!
  if (l1 === 0 && l2 === 0) return BigInt(l0)
  if (l2 === 0 && l1 < 4096 && littleEndian) {
    // Below 2^64: the two wordsScratch of the limbs, one BigInt instead of four.
    const high = Math.floor(l0 / TWO_32)
    halvesScratch[0] = l0 - high * TWO_32
    halvesScratch[1] = high + l1 * 1_048_576 // l0's top 20 bits, then l1's 12
    return wordsScratch[0]!
  }
  return BigInt(l0) + (BigInt(l1) << BITS) + (BigInt(l2) << 104n)
}

/** Largest magnitude a wide integer holds: 2^156 − 1. */
export const MAX: bigint = (1n << 156n) - 1n

/**
 * Stores `value` at `at`. Derived figures beyond the range (an average cost of a dust amount at an
 * absurd price) are stored saturated at ±MAX; sums never get there (the engine bounds its inputs).
 */
export const write = (column: Float64Array, at: number, value: bigint): void => {
  if (value >= 0n && value < BASE_BIG) {
    column[at] = Number(value)
    column[at + 1] = 0
    column[at + 2] = 0
    return
  }
  const limbs = split(value > MAX ? MAX : value < -MAX ? -MAX : value)
  column[at] = limbs[0]!
  column[at + 1] = limbs[1]!
  column[at + 2] = limbs[2]!
}

/** Adds `value` to the integer at `at`. */
export const add = (column: Float64Array, at: number, value: bigint): void => addSigned(column, at, value, false)

/** Subtracts `value` from the integer at `at`. */
export const subtract = (column: Float64Array, at: number, value: bigint): void => addSigned(column, at, value, true)

/** Adds `value` (its negation when `negate`): its magnitude's limbs, carried or borrowed, so no BigInt is negated for a positive value. */
const addSigned = (column: Float64Array, at: number, value: bigint, negate: boolean): void => {
  if (value === 0n) return
  const negative = value < 0n
  splitMagnitude(negative ? -value : value)
  if (negative === negate) addLimbs(column, at, scratch[0]!, scratch[1]!, scratch[2]!)
  else subtractLimbs(column, at, scratch[0]!, scratch[1]!, scratch[2]!)
}

/** Adds the wide integer at `from` of `source` to the one at `at` of `column`. */
export const addFrom = (column: Float64Array, at: number, source: Float64Array, from: number): void =>
  addLimbs(column, at, source[from]!, source[from + 1]!, source[from + 2]!)

const addLimbs = (column: Float64Array, at: number, l0: number, l1: number, l2: number): void => {
  let s0 = column[at]! + l0
  let carry = 0
  if (s0 >= BASE) {
    s0 -= BASE
    carry = 1
  }
  let s1 = column[at + 1]! + l1 + carry
  carry = 0
  if (s1 >= BASE) {
    s1 -= BASE
    carry = 1
  }
  const s2 = column[at + 2]! + l2 + carry
  if (!(s2 < TOP_LIMIT && s2 >= -TOP_LIMIT)) throw new RangeError("wide integer overflow")
  column[at] = s0
  column[at + 1] = s1
  column[at + 2] = s2
}

/** Subtracts non-negative limbs (a magnitude's) from the integer at `at`, borrowing. */
const subtractLimbs = (column: Float64Array, at: number, l0: number, l1: number, l2: number): void => {
  let s0 = column[at]! - l0
  let borrow = 0
  if (s0 < 0) {
    s0 += BASE
    borrow = 1
  }
  let s1 = column[at + 1]! - l1 - borrow
  borrow = 0
  if (s1 < 0) {
    s1 += BASE
    borrow = 1
  }
  const s2 = column[at + 2]! - l2 - borrow
  if (!(s2 < TOP_LIMIT && s2 >= -TOP_LIMIT)) throw new RangeError("wide integer overflow")
  column[at] = s0
  column[at + 1] = s1
  column[at + 2] = s2
}

/** Sets the integer at `at` to zero. */
export const clear = (column: Float64Array, at: number): void => {
  column[at] = 0
  column[at + 1] = 0
  column[at + 2] = 0
}

export const isZero = (column: Float64Array, at: number): boolean =>
  column[at] === 0 && column[at + 1] === 0 && column[at + 2] === 0

/** Sign of the integer at `at`: -1, 0 or 1. */
export const sign = (column: Float64Array, at: number): number => {
  const top = column[at + 2]!
  if (top !== 0) return top < 0 ? -1 : 1
  return column[at] === 0 && column[at + 1] === 0 ? 0 : 1
}

/** Compares the integers at `a` and `b` of one column: negative, zero or positive. */
export const compare = (column: Float64Array, a: number, b: number): number =>
  column[a + 2]! - column[b + 2]! || column[a + 1]! - column[b + 1]! || column[a]! - column[b]!

/** Compares the integer at `a` of `left` with the one at `b` of `right`. */
export const compareAcross = (left: Float64Array, a: number, right: Float64Array, b: number): number =>
  left[a + 2]! - right[b + 2]! || left[a + 1]! - right[b + 1]! || left[a]! - right[b]!
