/**
 * In-process `RateLimiter` (spec "Limits", rule 4: counted per server). One GCRA bucket per key
 * and per IP in a Map. Memory stays bounded: when a map grows past `maxTrackedBuckets`, buckets
 * that have refilled completely are dropped (forgetting a full bucket changes nothing: a missing
 * bucket reads as full); if that is not enough (a flood from many addresses), the oldest entries
 * go too, which at worst hands those clients a fresh budget early.
 */
import { Config, Effect, Layer, Schema } from "effect"
import { RateLimiter, specRateLimits } from "@spot/application"
import type { RateDecision, RateLimits } from "@spot/application"
import * as Gcra from "./Gcra.js"

export interface RateLimiterOptions extends RateLimits {
  /** Buckets kept per map before sweeping; default 100,000. */
  readonly maxTrackedBuckets?: number
}

class BucketTable {
  private readonly buckets = new Map<string, Gcra.Bucket>()
  constructor(private readonly limit: Gcra.Limit, private readonly maxTracked: number) {}

  take(id: string, now: number): RateDecision {
    const current = this.buckets.get(id)
    const decision = Gcra.take(this.limit, current ?? Gcra.full(this.limit, now), now)
    if (decision.bucket !== current) {
      if (current === undefined && this.buckets.size >= this.maxTracked) this.sweep(now)
      this.buckets.set(id, decision.bucket)
    }
    return decision
  }

  /** Whether one request would be allowed now (a bucket not tracked is full). */
  allows(id: string, now: number): boolean {
    const current = this.buckets.get(id)
    return current === undefined || Gcra.peek(this.limit, current, now) >= 1
  }

  get size(): number {
    return this.buckets.size
  }

  private sweep(now: number): void {
    for (const [id, bucket] of this.buckets) {
      if (Gcra.isFull(this.limit, bucket, now)) this.buckets.delete(id)
    }
    const target = Math.floor(this.maxTracked * 0.9)
    if (this.buckets.size <= target) return
    // Map iteration follows insertion order: the first entries are the longest-tracked.
    let excess = this.buckets.size - target
    for (const id of this.buckets.keys()) {
      if (excess-- <= 0) break
      this.buckets.delete(id)
    }
  }
}

export const make = (options: RateLimiterOptions = specRateLimits) => {
  const maxTracked = options.maxTrackedBuckets ?? 100_000
  const keys = new BucketTable({ perMinute: options.keyPerMinute }, maxTracked)
  const ips = new BucketTable({ perMinute: options.ipPerMinute }, maxTracked)
  return RateLimiter.of({
    takeKey: (keyId, now) => keys.take(keyId, now),
    takeIp: (ip, now) => ips.take(ip, now),
    keyHasBudget: (keyId, now) => keys.allows(keyId, now)
  })
}

/** The limiter with the given budgets (the spec's by default). */
export const layer = (options: RateLimiterOptions = specRateLimits): Layer.Layer<RateLimiter> =>
  Layer.sync(RateLimiter, () => make(options))

/** Budgets from `SPOT_RATE_LIMIT_KEY_PER_MINUTE` / `SPOT_RATE_LIMIT_IP_PER_MINUTE`, spec values by default. */
/** A budget of at least one request a minute: zero or less would refuse every request forever. */
const perMinute = (name: string, fallback: number) =>
  Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), name).pipe(Config.withDefault(fallback))

export const limitsConfig: Config.Config<RateLimits> = Config.all({
  keyPerMinute: perMinute("SPOT_RATE_LIMIT_KEY_PER_MINUTE", specRateLimits.keyPerMinute),
  ipPerMinute: perMinute("SPOT_RATE_LIMIT_IP_PER_MINUTE", specRateLimits.ipPerMinute)
})

export const layerConfig: Layer.Layer<RateLimiter, Config.ConfigError> = Layer.effect(
  RateLimiter,
  Effect.map(limitsConfig, (limits) => make(limits))
)

/** Exposed for tests of the eviction rule. */
export const makeTable = (perMinute: number, maxTracked: number) => new BucketTable({ perMinute }, maxTracked)
