/**
 * Request budgets (spec "Limits", rule 2): "a key's budget refills evenly over each minute and a
 * full minute's budget can be spent at once".
 *
 * That is GCRA with emission interval T = 60 000 / X ms and burst tolerance 60 000 − T, which is
 * the same thing as a token bucket of capacity X refilled continuously at X per minute. It is
 * written in the bucket form because the numbers stay small and exact: a bucket holds at most X
 * tokens and a burst from full subtracts whole tokens, so "never more than X at once" holds with
 * no floating-point drift. (The TAT form adds T to an absolute millisecond clock near 1.7e12,
 * where each addition of a T such as 60 000 / 7 rounds.)
 *
 * Pure: time comes in as Unix milliseconds; nothing is read from a clock.
 */

/** A budget: `perMinute` requests per minute, refilling evenly, all spendable at once. */
export interface Limit {
  readonly perMinute: number
}

/** State of one budget. Immutable: `take` returns the next state. */
export interface Bucket {
  /** Tokens available at `updatedAt`; fractional between whole refills. */
  readonly tokens: number
  /** Unix ms of the last refill computation. */
  readonly updatedAt: number
}

export interface Decision {
  readonly allowed: boolean
  /** Whole requests left after this one (the `X-RateLimit-Remaining` value). */
  readonly remaining: number
  /** Whole seconds until one request is allowed again: at least 1 when refused, 0 when allowed. */
  readonly retryAfterSeconds: number
  /** The bucket to store for the next request. */
  readonly bucket: Bucket
}

const MINUTE_MS = 60_000

/**
 * Float slack when comparing token counts: elapsed × rate can land a hair under a whole token
 * that the arithmetic says has been earned (for example 8571.428… ms × 7 / 60 000).
 */
const EPSILON = 1e-9

/** A bucket with the whole minute's budget available. */
export const full = (limit: Limit, now: number): Bucket => ({ tokens: limit.perMinute, updatedAt: now })

/** Tokens available at `now` (a clock going backwards refills nothing). */
const tokensAt = (limit: Limit, bucket: Bucket, now: number): number => {
  const elapsed = now - bucket.updatedAt
  if (elapsed <= 0) return bucket.tokens
  const refilled = bucket.tokens + (elapsed * limit.perMinute) / MINUTE_MS
  return refilled >= limit.perMinute ? limit.perMinute : refilled
}

const wholeTokens = (tokens: number): number => {
  const whole = Math.floor(tokens + EPSILON)
  return whole < 0 ? 0 : whole
}

/**
 * Spends `cost` requests of the budget if available. `cost` must not exceed `limit.perMinute`
 * (such a request could never pass). A refused request spends nothing.
 */
export const take = (limit: Limit, bucket: Bucket, now: number, cost = 1): Decision => {
  const tokens = tokensAt(limit, bucket, now)
  const updatedAt = now > bucket.updatedAt ? now : bucket.updatedAt
  if (tokens + EPSILON >= cost) {
    const left = tokens - cost
    return {
      allowed: true,
      remaining: wholeTokens(left),
      retryAfterSeconds: 0,
      bucket: { tokens: left, updatedAt }
    }
  }
  const waitMs = ((cost - tokens) * MINUTE_MS) / limit.perMinute
  const seconds = Math.ceil(waitMs / 1000)
  return {
    allowed: false,
    remaining: wholeTokens(tokens),
    retryAfterSeconds: seconds < 1 ? 1 : seconds,
    bucket
  }
}

/** Whole requests available at `now`, without spending any. */
export const peek = (limit: Limit, bucket: Bucket, now: number): number =>
  wholeTokens(tokensAt(limit, bucket, now))

/** True when the bucket has refilled completely: it can be forgotten and recreated with `full`. */
export const isFull = (limit: Limit, bucket: Bucket, now: number): boolean =>
  tokensAt(limit, bucket, now) >= limit.perMinute
