/**
 * The admission use case: whether a request may be served, the same for every transport (the
 * REST pipeline, the direct reads, the stream's handshake). In order (spec "Authentication" and
 * "Limits"):
 *
 *   1. the client IP's budget: spent, or refused (`IpBudgetSpent`) before the key is looked at;
 *   2. the key: none presented (missing, malformed, or also carried where keys must not be: the
 *      adapter decides), unknown, revoked or expired → one refusal (`KeyRefused`, rule 5: the
 *      cases are not told apart); the key store unavailable → `KeyCheckUnavailable`, never
 *      `KeyRefused`. Both spend the IP's budget only;
 *   3. the key's budget: spent, or refused (`KeyBudgetSpent`).
 *
 * Each refusal carries the budget its answer reports (`X-RateLimit-Remaining`, `Retry-After`): the
 * IP's for the first three, the key's for the last. Statuses and envelopes are the adapters'.
 *
 * Every request runs this, so its core (`decide`) is plain code: budgets and the key cache are
 * synchronous, and a key store that answers with an Exit is branched on at once. Only a store that
 * must really wait leaves a `KeyLookup` to run. `admit` is the same as an Effect.
 */
import { Cause, Context, Data, Effect, Exit, Layer, Redacted } from "effect"
import * as ApiKey from "./auth/ApiKey.js"
import type { ApiKeyRecord } from "./auth/ApiKey.js"
import { KeyCache } from "./ports/KeyCache.js"
import type { KeyCacheShape } from "./ports/KeyCache.js"
import { KeyStore } from "./ports/KeyStore.js"
import type { KeyStoreShape } from "./ports/KeyStore.js"
import { RateLimiter } from "./ports/RateLimiter.js"
import type { RateDecision, RateLimiterShape } from "./ports/RateLimiter.js"

/** What a request presents, as its adapter read it. */
export interface AdmissionRequest {
  /** The client's address, whose budget the request spends. */
  readonly clientIp: string
  /**
   * The API key, or undefined when the request presents none it may use: no key, a malformed
   * one, or a key also carried somewhere keys must not be (the adapter's credential rules).
   */
  readonly key: string | undefined
  /**
   * Whether the key cache takes part (default true): an answer it holds stands in for the
   * store's, and the store's answer is kept for the next requests. A stream's handshake, whose
   * connection holds the key for long, passes false: it asks the store and leaves the cache alone.
   */
  readonly useKeyCache?: boolean
}

/** The request may be served. */
export interface Admitted {
  readonly _tag: "Admitted"
  readonly key: ApiKeyRecord
  /** The key's budget after this request. */
  readonly budget: RateDecision
}

/** The client IP's budget is spent; `budget` is the IP's. */
export class IpBudgetSpent extends Data.TaggedClass("IpBudgetSpent")<{ readonly budget: RateDecision }> {}

/** No usable key: none presented, unknown, revoked or expired (not told apart); `budget` is the IP's. */
export class KeyRefused extends Data.TaggedClass("KeyRefused")<{ readonly budget: RateDecision }> {}

/**
 * The key store could not answer (`cause`, interruption included); never means "bad key".
 * `budget` is the IP's.
 */
export class KeyCheckUnavailable extends Data.TaggedClass("KeyCheckUnavailable")<{
  readonly budget: RateDecision
  readonly cause: Cause.Cause<unknown>
}> {}

/** The key's budget is spent; `budget` is the key's. */
export class KeyBudgetSpent extends Data.TaggedClass("KeyBudgetSpent")<{ readonly budget: RateDecision }> {}

export type Refusal = IpBudgetSpent | KeyRefused | KeyCheckUnavailable | KeyBudgetSpent

/** The key store is still to answer: `answer` finishes the admission once it has. */
export interface KeyLookup {
  readonly _tag: "KeyLookup"
  readonly answer: Effect.Effect<Admitted, Refusal>
}

export type Decision = Admitted | Refusal | KeyLookup

/** An operator key accepted; `budget` is the IP's (operator keys have no budget of their own). */
export interface OperatorAdmitted {
  readonly _tag: "OperatorAdmitted"
  readonly budget: RateDecision
}

export interface AdmissionShape {
  /** The admission of one request, as an Effect. */
  readonly admit: (request: AdmissionRequest) => Effect.Effect<Admitted, Refusal>
  /** The same in plain code: the answer, or the key lookup still to run. */
  readonly decide: (request: AdmissionRequest) => Decision
  /**
   * The admission when it needs no one's answer (the key cache holds a record for the key, usable
   * now, and both budgets have a request left): both budgets are spent as `decide` spends them.
   * Otherwise undefined, having spent nothing: the caller then takes `decide`.
   */
  readonly admitCached: (request: AdmissionRequest) => Admitted | undefined
  /**
   * A request for an operator's interface: the IP's budget, then `isOperatorKey` instead of the
   * key store, and no key budget. The refusals are those of `decide`'s first two steps.
   */
  readonly admitOperator: (
    request: AdmissionRequest,
    isOperatorKey: (key: string) => boolean
  ) => OperatorAdmitted | IpBudgetSpent | KeyRefused
  /**
   * Whether an admitted key may still be used now, asking the store: a long-lived connection's
   * re-check. True, false (revoked or expired), or undefined when the store cannot tell now.
   */
  readonly stillUsable: (key: Redacted.Redacted<string>) => Effect.Effect<boolean | undefined>
  /**
   * Spends a request of the IP's budget for a request refused before it could be read (a
   * malformed request): such requests count like any refused one.
   */
  readonly spendIpBudget: (clientIp: string) => RateDecision
}

export class Admission extends Context.Service<Admission, AdmissionShape>()("@spot/application/Admission") {}

export interface AdmissionOptions {
  /** The clock of budgets, expiry and the key cache, in Unix ms; default `Date.now` (tests pass their own). */
  readonly now?: () => number
}

const admittedWith = (key: ApiKeyRecord, budget: RateDecision): Admitted => ({ _tag: "Admitted", key, budget })

/**
 * The use case over its ports. `keyCache` undefined: every admission asks the store.
 * (`Date.now` rather than the Clock service: it runs on every request.)
 */
export const make = (
  keyStore: KeyStoreShape,
  limiter: RateLimiterShape,
  keyCache: KeyCacheShape | undefined,
  options: AdmissionOptions = {}
): AdmissionShape => {
  const clock = options.now ?? Date.now

  const afterKeyCheck = (record: ApiKeyRecord | null, ip: RateDecision, now: number): Admitted | Refusal => {
    if (record === null || !ApiKey.isUsable(record, now)) return new KeyRefused({ budget: ip })
    const budget = limiter.takeKey(record.id, now)
    return budget.allowed ? admittedWith(record, budget) : new KeyBudgetSpent({ budget })
  }

  const afterLookup = (
    checked: Exit.Exit<ApiKeyRecord | null, unknown>,
    key: string,
    cached: boolean,
    ip: RateDecision,
    now: number
  ): Admitted | Refusal => {
    if (Exit.isFailure(checked)) return new KeyCheckUnavailable({ budget: ip, cause: checked.cause })
    const record = checked.value
    // The time the store answered, which may be later than the request's.
    if (cached && record !== null) keyCache!.remember(key, record, clock())
    return afterKeyCheck(record, ip, now)
  }

  const decide = (request: AdmissionRequest): Decision => {
    const now = clock()
    const ip = limiter.takeIp(request.clientIp, now)
    if (!ip.allowed) return new IpBudgetSpent({ budget: ip })
    const key = request.key
    if (key === undefined) return new KeyRefused({ budget: ip })
    const cached = keyCache !== undefined && request.useKeyCache !== false
    if (cached) {
      const record = keyCache!.lookup(key, now)
      if (record !== undefined) return afterKeyCheck(record, ip, now)
    }
    const checked = keyStore.verify(Redacted.make(key))
    // A store may answer with an Exit: branch on it now instead of scheduling a continuation.
    if (Exit.isExit(checked)) return afterLookup(checked as Exit.Exit<ApiKeyRecord | null, unknown>, key, cached, ip, now)
    return {
      _tag: "KeyLookup",
      answer: Effect.flatMap(Effect.exit(checked), (exit) => {
        const decided = afterLookup(exit, key, cached, ip, now)
        return decided._tag === "Admitted" ? Effect.succeed(decided) : Effect.fail(decided)
      })
    }
  }

  const admit = Effect.fn("Admission.admit")(function*(request: AdmissionRequest) {
    const decided = decide(request)
    switch (decided._tag) {
      case "Admitted":
        return decided
      case "KeyLookup":
        return yield* decided.answer
      default:
        return yield* Effect.fail(decided)
    }
  })

  const admitCached = (request: AdmissionRequest): Admitted | undefined => {
    const key = request.key
    if (keyCache === undefined || key === undefined || request.useKeyCache === false) return undefined
    const now = clock()
    const record = keyCache.lookup(key, now)
    if (record === undefined || !ApiKey.isUsable(record, now) || !limiter.keyHasBudget(record.id, now)) return undefined
    if (!limiter.takeIp(request.clientIp, now).allowed) return undefined
    return admittedWith(record, limiter.takeKey(record.id, now))
  }

  const admitOperator = (
    request: AdmissionRequest,
    isOperatorKey: (key: string) => boolean
  ): OperatorAdmitted | IpBudgetSpent | KeyRefused => {
    const ip = limiter.takeIp(request.clientIp, clock())
    if (!ip.allowed) return new IpBudgetSpent({ budget: ip })
    if (request.key === undefined || !isOperatorKey(request.key)) return new KeyRefused({ budget: ip })
    return { _tag: "OperatorAdmitted", budget: ip }
  }

  const stillUsable = Effect.fn("Admission.stillUsable")(function*(key: Redacted.Redacted<string>) {
    const checked = yield* Effect.exit(keyStore.verify(key))
    return Exit.isFailure(checked) ? undefined : checked.value !== null && ApiKey.isUsable(checked.value, clock())
  })

  return Admission.of({
    admit,
    decide,
    admitCached,
    admitOperator,
    stillUsable,
    spendIpBudget: (clientIp) => limiter.takeIp(clientIp, clock())
  })
}

/** The use case over the KeyStore and RateLimiter in context, and the KeyCache when one is provided. */
export const layer = (options: AdmissionOptions = {}): Layer.Layer<Admission, never, KeyStore | RateLimiter> =>
  Layer.effect(
    Admission,
    Effect.gen(function*() {
      const keyCache = yield* Effect.serviceOption(KeyCache)
      return make(yield* KeyStore, yield* RateLimiter, keyCache._tag === "Some" ? keyCache.value : undefined, options)
    })
  )
