/**
 * Exact fixed-point decimals: a `Fixed` is a bigint counting 10^-18 units, so every native
 * amount (lamports, wei) and every USD amount is held exactly, and rounding happens only in
 * division (toward zero, deterministic). Decimal strings never use exponent form.
 */
export type Fixed = bigint

export const SCALE_DIGITS = 18
export const ONE: Fixed = 10n ** 18n
export const ZERO: Fixed = 0n

const pow10Cache: Array<bigint> = []
export const pow10 = (n: number): bigint => {
  let v = pow10Cache[n]
  if (v === undefined) {
    v = 10n ** BigInt(n)
    pow10Cache[n] = v
  }
  return v
}

/** An integer amount of base units with `decimals` decimals, as a Fixed. */
export const fromBaseUnits = (amount: bigint, decimals: number): Fixed =>
  decimals <= SCALE_DIGITS ? amount * pow10(SCALE_DIGITS - decimals) : amount / pow10(decimals - SCALE_DIGITS)

/** A Fixed as an integer amount of base units with `decimals` decimals (truncated). */
export const toBaseUnits = (value: Fixed, decimals: number): bigint =>
  decimals <= SCALE_DIGITS ? value / pow10(SCALE_DIGITS - decimals) : value * pow10(decimals - SCALE_DIGITS)

export const fromInt = (n: number | bigint): Fixed => BigInt(n) * ONE

export const mul = (a: Fixed, b: Fixed): Fixed => (a * b) / ONE
/** a / b, truncated toward zero; 0 when b is 0. */
export const div = (a: Fixed, b: Fixed): Fixed => (b === 0n ? 0n : (a * ONE) / b)
/** a × b / c computed with one rounding; 0 when c is 0. */
export const mulDiv = (a: bigint, b: bigint, c: bigint): bigint => (c === 0n ? 0n : (a * b) / c)
/**
 * The USD value of `quantity` (Fixed) at a trade of `amount` (Fixed) for `valueNative`, at
 * `usdPerNative`: quantity × valueNative × usdPerNative ÷ amount with one rounding (not through the
 * trade's USD value or price, each already truncated); 0 when amount is 0.
 */
export const usdAtTrade = (quantity: Fixed, valueNative: Fixed, usdPerNative: Fixed, amount: Fixed): Fixed =>
  mulDiv(valueNative * usdPerNative, quantity, amount * ONE)
/** a / b × 100 as a percentage Fixed; 0 when b is 0. */
export const pct = (a: Fixed, b: Fixed): Fixed => (b === 0n ? 0n : (a * ONE * 100n) / b)

export const min = (a: Fixed, b: Fixed): Fixed => (a < b ? a : b)
export const max = (a: Fixed, b: Fixed): Fixed => (a > b ? a : b)
export const abs = (a: Fixed): Fixed => (a < 0n ? -a : a)

/** Digits a double holds exactly as an integer (< 2^53). */
const EXACT_DIGITS = 15

/** The value of the decimal digits `text[from, to)` (all digits, at most EXACT_DIGITS of them). */
const digitsValue = (text: string, from: number, to: number): number => {
  let n = 0
  for (let i = from; i < to; i++) n = n * 10 + (text.charCodeAt(i) - 48)
  return n
}

/** Index of the first non-digit of `text` from `from` on. */
const digitsEnd = (text: string, from: number): number => {
  let i = from
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c < 48 || c > 57) break
    i++
  }
  return i
}

/**
 * Parses a plain decimal string, `-?digits(.digits)?` (no exponent, no sign "+", ASCII digits);
 * digits past 18 decimals are truncated. On the hot path (every swap's prices and curve progress):
 * a scan instead of a regular expression, and short digit runs read as doubles (exact below 2^53)
 * before one BigInt each.
 */
export const parse = (text: string): Fixed | undefined => {
  const negative = text.charCodeAt(0) === 45 // "-"
  const intStart = negative ? 1 : 0
  const intEnd = digitsEnd(text, intStart)
  if (intEnd === intStart) return undefined
  let fracEnd = intEnd
  if (intEnd < text.length) {
    if (text.charCodeAt(intEnd) !== 46) return undefined // "."
    fracEnd = digitsEnd(text, intEnd + 1)
    if (fracEnd === intEnd + 1 || fracEnd !== text.length) return undefined
  }
  const whole = intEnd - intStart <= EXACT_DIGITS ? BigInt(digitsValue(text, intStart, intEnd)) : BigInt(text.slice(intStart, intEnd))
  let v = whole * ONE
  if (fracEnd > intEnd) {
    const fracStart = intEnd + 1
    const kept = Math.min(fracEnd, fracStart + SCALE_DIGITS)
    const digits = kept - fracStart
    v += digits <= EXACT_DIGITS
      ? BigInt(digitsValue(text, fracStart, kept)) * pow10(SCALE_DIGITS - digits)
      : BigInt(text.slice(fracStart, kept)) * pow10(SCALE_DIGITS - digits)
  }
  return negative && v !== 0n ? -v : v
}

/** Parses a decimal string, throwing on malformed input (for trusted internal constants). */
export const unsafeParse = (text: string): Fixed => {
  const v = parse(text)
  if (v === undefined) throw new Error(`not a decimal string: ${text}`)
  return v
}

const ZEROS = "000000000000000000"

/** Index after the last non-'0' character of `text` from `from` on (`from` when all zeros). */
const trimZerosEnd = (text: string, from: number): number => {
  let end = text.length
  while (end > from && text.charCodeAt(end - 1) === 48) end--
  return end
}

/** Formats as a plain decimal string without exponent and without trailing zeros: "0.000123", "42", "-1.5". */
export const format = (value: Fixed): string => {
  if (value === 0n) return "0"
  const negative = value < 0n
  const digits = (negative ? -value : value).toString()
  const sign = negative ? "-" : ""
  if (digits.length <= SCALE_DIGITS) {
    const frac = ZEROS.slice(0, SCALE_DIGITS - digits.length) + digits
    return `${sign}0.${frac.slice(0, trimZerosEnd(frac, 0))}`
  }
  const intEnd = digits.length - SCALE_DIGITS
  const end = trimZerosEnd(digits, intEnd)
  return end === intEnd ? sign + digits.slice(0, intEnd) : `${sign}${digits.slice(0, intEnd)}.${digits.slice(intEnd, end)}`
}

/** Formats rounded toward zero to at most `places` decimals (for percentages). */
export const formatPlaces = (value: Fixed, places: number): string => {
  const unit = pow10(SCALE_DIGITS - places)
  return format((value / unit) * unit)
}

/** Formats an integer base-unit amount with `decimals` decimals as a decimal string. */
export const formatUnits = (amount: bigint, decimals: number): string => format(fromBaseUnits(amount, decimals))

/** Nearest JSON number (for candle values, which the spec sends as numbers). */
export const toNumber = (value: Fixed): number => {
  const int = value / ONE
  const frac = value - int * ONE
  return Number(int) + Number(frac) / 1e18
}

/**
 * A finite JSON number as a Fixed, read as written (0.07 is exactly 0.07, not the nearest binary
 * double's expansion); digits past 18 decimals are truncated. Non-finite numbers read as 0.
 */
export const fromNumber = (n: number): Fixed => {
  if (!Number.isFinite(n)) return 0n
  if (Math.abs(n) >= 1e21) return BigInt(n) * ONE
  const text = String(n)
  return parse(text.includes("e") ? n.toFixed(SCALE_DIGITS) : text) ?? 0n
}
