/**
 * Port: request budgets per API key and per client IP (spec "Limits": 12,000/min per key,
 * 60,000/min per IP, refilling evenly, a full minute spendable at once, counted per server).
 *
 * The methods are synchronous on purpose: the spec counts limits per server, so the budget is
 * in-process state, and these calls sit on the path of every request, where wrapping a Map
 * lookup in an Effect would cost more than the lookup.
 */
import { Context } from "effect"

export interface RateDecision {
  readonly allowed: boolean
  /** Whole requests left after this one: the `X-RateLimit-Remaining` value. */
  readonly remaining: number
  /** Whole seconds to wait when refused (at least 1); 0 when allowed. */
  readonly retryAfterSeconds: number
}

export interface RateLimiterShape {
  /** Spends one request of the key's budget if any is left. */
  readonly takeKey: (keyId: string, now: number) => RateDecision
  /** Spends one request of the client IP's budget if any is left. */
  readonly takeIp: (ip: string, now: number) => RateDecision
  /**
   * Whether the key's budget has a request left, spending nothing: a caller that must not spend
   * the IP's budget on a request the key's budget would refuse asks this first.
   */
  readonly keyHasBudget: (keyId: string, now: number) => boolean
}

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterShape>()("@spot/application/RateLimiter") {}

/** Budgets per minute; the spec's values are the defaults. */
export interface RateLimits {
  readonly keyPerMinute: number
  readonly ipPerMinute: number
}

export const specRateLimits: RateLimits = { keyPerMinute: 12_000, ipPerMinute: 60_000 }
