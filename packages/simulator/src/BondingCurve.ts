/**
 * Launchpad bonding curves and graduated pools, both constant product (x·y = k).
 *
 * pump.fun: 1B supply with 6 decimals, 793.1M tokens sold on the curve, virtual reserves start at
 * 30 SOL / 1.073B tokens; progress = (1 − realTokenReserves / 793.1M) × 100; the curve completes
 * when the real token reserves reach zero (about 85 SOL raised) and the token migrates.
 * The other curve launchpads reuse the shape with their own virtual quote reserve.
 */

export interface CurveParameters {
  readonly decimals: number
  readonly supply: bigint
  /** Tokens sold along the curve (the initial real token reserves). */
  readonly curveTokens: bigint
  readonly virtualTokens: bigint
  /** Initial virtual quote reserves, in native base units. */
  readonly virtualQuote: bigint
}

const wholeTokens = (count: bigint, decimals: number): bigint => count * 10n ** BigInt(decimals)

/** Curve parameters with pump.fun's token split and the given virtual quote reserve. */
export const pumpStyleCurve = (decimals: number, virtualQuote: bigint): CurveParameters => ({
  decimals,
  supply: wholeTokens(1_000_000_000n, decimals),
  curveTokens: (wholeTokens(7_931n, decimals) * 100_000n),
  virtualTokens: wholeTokens(1_073_000_000n, decimals),
  virtualQuote
})

export const pumpFunCurve: CurveParameters = pumpStyleCurve(6, 30n * 10n ** 9n)

/** Progress units: 1,000,000 units = 100% (four decimals of a percent). */
export const progressScale = 1_000_000

/** Curve completion in progress units, per the pump.fun formula (rounded toward completion). */
export const progressUnits = (realTokenReserves: bigint, curveTokens: bigint): number =>
  progressScale - Number((realTokenReserves * BigInt(progressScale)) / curveTokens)

const fractionPrefixes = ["", "0", "00", "000"] as const

/** Progress units as a plain decimal percentage string ("37.1234", "100"). */
export const formatProgress = (units: number): string => {
  const whole = Math.floor(units / 10_000)
  let fraction = units % 10_000
  if (fraction === 0) return String(whole)
  let digits = 4
  while (fraction % 10 === 0) {
    fraction /= 10
    digits--
  }
  return `${whole}.${fractionPrefixes[digits - String(fraction).length]}${fraction}`
}

/** Mutable reserves of a curve or pool. `real*` are only meaningful on a curve. */
export class Reserves {
  constructor(
    public tokens: bigint,
    public quote: bigint,
    public realTokens: bigint,
    public realQuote: bigint
  ) {}

  static curve(parameters: CurveParameters): Reserves {
    return new Reserves(parameters.virtualTokens, parameters.virtualQuote, parameters.curveTokens, 0n)
  }

  static pool(tokens: bigint, quote: bigint): Reserves {
    return new Reserves(tokens, quote, tokens, quote)
  }
}

/**
 * Swap math on a curve or pool. Mutates the reserves and leaves the result in `tokens` and
 * `quote` (one reusable instance, so a swap allocates no result object). `tokens` is 0n when the
 * amount buys nothing; a curve buy that empties the curve spends less than offered.
 */
export class CurveTrade {
  tokens = 0n
  quote = 0n

  curveBuy(reserves: Reserves, quoteIn: bigint): void {
    const k = reserves.tokens * reserves.quote
    let tokensOut = reserves.tokens - ceilDiv(k, reserves.quote + quoteIn)
    let spent = quoteIn
    if (tokensOut >= reserves.realTokens) {
      // The buy empties the curve: take exactly what is left and charge what that costs.
      tokensOut = reserves.realTokens
      spent = ceilDiv(k, reserves.tokens - tokensOut) - reserves.quote
    }
    if (tokensOut <= 0n) {
      this.tokens = 0n
      this.quote = 0n
      return
    }
    reserves.tokens -= tokensOut
    reserves.quote += spent
    reserves.realTokens -= tokensOut
    reserves.realQuote += spent
    this.tokens = tokensOut
    this.quote = spent
  }

  curveSell(reserves: Reserves, tokensIn: bigint): void {
    const k = reserves.tokens * reserves.quote
    let quoteOut = reserves.quote - ceilDiv(k, reserves.tokens + tokensIn)
    if (quoteOut > reserves.realQuote) quoteOut = reserves.realQuote
    if (quoteOut < 0n) quoteOut = 0n
    reserves.tokens += tokensIn
    reserves.quote -= quoteOut
    reserves.realTokens += tokensIn
    reserves.realQuote -= quoteOut
    this.tokens = tokensIn
    this.quote = quoteOut
  }

  /** Constant-product pool buy; the LP fee (bps of the input) stays in the pool. */
  poolBuy(reserves: Reserves, quoteIn: bigint, feeBps: bigint): void {
    const effective = (quoteIn * (10_000n - feeBps)) / 10_000n
    const tokensOut = (reserves.tokens * effective) / (reserves.quote + effective)
    if (tokensOut <= 0n || tokensOut >= reserves.tokens) {
      this.tokens = 0n
      this.quote = 0n
      return
    }
    reserves.tokens -= tokensOut
    reserves.quote += quoteIn
    this.tokens = tokensOut
    this.quote = quoteIn
  }

  poolSell(reserves: Reserves, tokensIn: bigint, feeBps: bigint): void {
    const effective = (tokensIn * (10_000n - feeBps)) / 10_000n
    const quoteOut = (reserves.quote * effective) / (reserves.tokens + effective)
    reserves.tokens += tokensIn
    reserves.quote -= quoteOut
    this.tokens = tokensIn
    this.quote = quoteOut
  }
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b
