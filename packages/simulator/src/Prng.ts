/**
 * A small, fast, seeded pseudo-random generator (sfc32, Chris Doty-Humphrey's "small fast
 * counting" generator). The simulator draws every random choice from one of these so a seed
 * fixes the whole market. Its state is four 32-bit words; nothing here allocates.
 */
export class Prng {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: number) {
    // Split the seed into its low and high 32 bits so any safe integer gives a distinct stream.
    const low = seed >>> 0
    const high = Math.floor(Math.abs(seed) / 4294967296) >>> 0
    this.a = 0x9e3779b9 ^ high
    this.b = 0x243f6a88
    this.c = 0xb7e15162 ^ Math.imul(high, 0x85ebca6b)
    this.d = low
    // sfc32 needs a few rounds before nearby seeds decorrelate.
    for (let i = 0; i < 16; i++) this.nextUint32()
  }

  /** A uniform integer in [0, 2^32). */
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** A uniform float in [0, 1). */
  float(): number {
    return this.nextUint32() / 4294967296
  }

  /** A uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n)
  }

  /** A uniform integer in [low, high]. */
  between(low: number, high: number): number {
    return low + Math.floor(this.float() * (high - low + 1))
  }

  /** A uniform float in [low, high). */
  uniform(low: number, high: number): number {
    return low + this.float() * (high - low)
  }

  chance(probability: number): boolean {
    return this.float() < probability
  }

  /** An exponentially distributed value with the given mean (gaps of a Poisson process). */
  exponential(mean: number): number {
    return -Math.log(1 - this.float()) * mean
  }

  /** A standard normal value (Box–Muller; the second value is dropped to keep no hidden state). */
  normal(): number {
    const u = 1 - this.float()
    const v = this.float()
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
  }

  /** A log-normal value with the given median and shape (trade sizes are heavy-tailed). */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal())
  }

  /** An element of a non-empty array. */
  pick<A>(items: ReadonlyArray<A>): A {
    return items[Math.floor(this.float() * items.length)]!
  }

  /** An independent generator seeded from this one. */
  fork(): Prng {
    return new Prng(this.nextUint32() + this.nextUint32() * 4294967296)
  }
}

/**
 * Index of a weighted choice: `cumulative` holds running totals of the weights (last entry is
 * the total), so the pick is one uniform draw and a short linear scan.
 */
export const pickWeighted = (prng: Prng, cumulative: ReadonlyArray<number>): number => {
  const target = prng.float() * cumulative[cumulative.length - 1]!
  for (let i = 0; i < cumulative.length; i++) if (target < cumulative[i]!) return i
  return cumulative.length - 1
}

/** Running totals of `weights`, the form `pickWeighted` takes. */
export const cumulativeWeights = (weights: ReadonlyArray<number>): ReadonlyArray<number> => {
  const out: Array<number> = []
  let total = 0
  for (const w of weights) {
    total += w
    out.push(total)
  }
  return out
}
