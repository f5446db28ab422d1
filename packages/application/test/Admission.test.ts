import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import { Admission, KeyCache, KeyStore, KeyStoreUnavailable, RateLimiter } from "@spot/application"
import type { ApiKeyRecord, KeyCacheShape, KeyStoreShape, RateDecision, RateLimiterShape } from "@spot/application"

const now = 10_000
const record = (id: string, fields: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  name: id,
  createdAt: 0,
  expiresAt: null,
  revokedAt: null,
  ...fields
})
const records: Record<string, ApiKeyRecord> = {
  "sk-valid": record("key_valid"),
  "sk-revoked": record("key_revoked", { revokedAt: 1 }),
  "sk-expired": record("key_expired", { expiresAt: now })
}

/**
 * The ports, each recording what is asked of it in one log (the order of the checks), with budgets
 * counted down per id (what is spent against which budget).
 */
const makePorts = (options: { readonly budgets?: Record<string, number>; readonly store?: "exit" | "effect" | "failing" } = {}) => {
  const log: Array<string> = []
  const left = new Map(Object.entries(options.budgets ?? {}))
  const take = (id: string): RateDecision => {
    const budget = left.get(id) ?? 100
    if (budget <= 0) return { allowed: false, remaining: 0, retryAfterSeconds: 7 }
    left.set(id, budget - 1)
    return { allowed: true, remaining: budget - 1, retryAfterSeconds: 0 }
  }
  const limiter: RateLimiterShape = {
    takeIp: (ip) => (log.push(`takeIp ${ip}`), take(ip)),
    takeKey: (id) => (log.push(`takeKey ${id}`), take(id)),
    keyHasBudget: (id) => (left.get(id) ?? 100) > 0
  }
  const keyStore: KeyStoreShape = {
    verify: (presented) => {
      log.push("verify")
      if (options.store === "failing") return Effect.fail(new KeyStoreUnavailable({ message: "database down" }))
      const found = records[Redacted.value(presented)] ?? null
      return options.store === "effect" ? Effect.sync(() => found) : Exit.succeed(found)
    },
    create: () => Effect.die("not in tests"),
    list: Effect.succeed([]),
    revoke: () => Effect.succeed(null)
  }
  const remembered = new Map<string, ApiKeyRecord>()
  const keyCache: KeyCacheShape = {
    lookup: (key) => (log.push("cache lookup"), remembered.get(key)),
    remember: (key, found) => (log.push("cache remember"), void remembered.set(key, found))
  }
  return { log, left, limiter, keyStore, keyCache, remembered }
}

const admissionOf = (ports: ReturnType<typeof makePorts>, cached = false) =>
  Admission.make(ports.keyStore, ports.limiter, cached ? ports.keyCache : undefined, { now: () => now })

const request = (key: string | undefined, clientIp = "10.0.0.1"): Admission.AdmissionRequest => ({ clientIp, key })

describe("Admission", () => {
  it.effect("admits a usable key: the IP's budget, then the key, then the key's budget", () =>
    Effect.gen(function*() {
      const ports = makePorts({ budgets: { "10.0.0.1": 5, key_valid: 3 } })
      const admitted = yield* admissionOf(ports).admit(request("sk-valid"))
      expect(admitted.key.id).toBe("key_valid")
      expect(admitted.budget).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 0 })
      expect(ports.log).toEqual(["takeIp 10.0.0.1", "verify", "takeKey key_valid"])
      expect(ports.left.get("10.0.0.1")).toBe(4)
    }))

  it.effect("refuses a spent IP budget before looking at the key, with the IP's budget", () =>
    Effect.gen(function*() {
      const ports = makePorts({ budgets: { "10.0.0.1": 0 } })
      const refusal = yield* Effect.flip(admissionOf(ports).admit(request("sk-valid")))
      expect(refusal).toEqual(new Admission.IpBudgetSpent({ budget: { allowed: false, remaining: 0, retryAfterSeconds: 7 } }))
      expect(ports.log).toEqual(["takeIp 10.0.0.1"])
    }))

  it.effect("refuses no key, an unknown, a revoked and an expired key alike, spending the IP's budget only", () =>
    Effect.gen(function*() {
      for (const key of [undefined, "sk-unknown", "sk-revoked", "sk-expired"]) {
        const ports = makePorts({ budgets: { "10.0.0.1": 5 } })
        const refusal = yield* Effect.flip(admissionOf(ports).admit(request(key)))
        expect(refusal).toEqual(new Admission.KeyRefused({ budget: { allowed: true, remaining: 4, retryAfterSeconds: 0 } }))
        expect(ports.log).toEqual(key === undefined ? ["takeIp 10.0.0.1"] : ["takeIp 10.0.0.1", "verify"])
      }
    }))

  it.effect("answers a store failure as KeyCheckUnavailable with its cause, never KeyRefused, spending the IP's budget only", () =>
    Effect.gen(function*() {
      const ports = makePorts({ store: "failing", budgets: { "10.0.0.1": 5 } })
      const refusal = yield* Effect.flip(admissionOf(ports).admit(request("sk-valid")))
      expect(refusal._tag).toBe("KeyCheckUnavailable")
      expect(refusal.budget.remaining).toBe(4)
      expect(Cause.squash((refusal as Admission.KeyCheckUnavailable).cause)).toBeInstanceOf(KeyStoreUnavailable)
      expect(ports.log).toEqual(["takeIp 10.0.0.1", "verify"])
    }))

  it.effect("refuses a spent key budget with the key's budget, the IP's spent too", () =>
    Effect.gen(function*() {
      const ports = makePorts({ budgets: { "10.0.0.1": 5, key_valid: 0 } })
      const refusal = yield* Effect.flip(admissionOf(ports).admit(request("sk-valid")))
      expect(refusal).toEqual(new Admission.KeyBudgetSpent({ budget: { allowed: false, remaining: 0, retryAfterSeconds: 7 } }))
      expect(ports.log).toEqual(["takeIp 10.0.0.1", "verify", "takeKey key_valid"])
      expect(ports.left.get("10.0.0.1")).toBe(4)
    }))

  it.effect("decides in plain code when the store answers with an Exit, and leaves a KeyLookup when it must wait", () =>
    Effect.gen(function*() {
      const atOnce = admissionOf(makePorts()).decide(request("sk-valid"))
      expect(atOnce._tag).toBe("Admitted")
      const ports = makePorts({ store: "effect" })
      const waiting = admissionOf(ports).decide(request("sk-valid"))
      expect(waiting._tag).toBe("KeyLookup")
      // The key's budget is spent once the store has answered.
      expect(ports.log).toEqual(["takeIp 10.0.0.1", "verify"])
      const admitted = yield* (waiting as Admission.KeyLookup).answer
      expect(admitted.key.id).toBe("key_valid")
      expect(ports.log).toEqual(["takeIp 10.0.0.1", "verify", "takeKey key_valid"])
      const revoked = yield* Effect.flip((admissionOf(makePorts({ store: "effect" })).decide(request("sk-revoked")) as Admission.KeyLookup).answer)
      expect(revoked._tag).toBe("KeyRefused")
    }))

  describe("with a key cache", () => {
    it("reuses a record the store gave, and remembers neither an unknown key nor a failure", () => {
      const ports = makePorts()
      const admission = admissionOf(ports, true)
      expect(admission.decide(request("sk-valid"))._tag).toBe("Admitted")
      expect(admission.decide(request("sk-valid"))._tag).toBe("Admitted")
      expect(ports.log.filter((step) => step === "verify")).toHaveLength(1)
      expect(admission.decide(request("sk-unknown"))._tag).toBe("KeyRefused")
      expect([...ports.remembered.keys()]).toEqual(["sk-valid"])
      // A revoked key is a record: remembered, and refused from the cache as from the store.
      expect(admission.decide(request("sk-revoked"))._tag).toBe("KeyRefused")
      expect(admission.decide(request("sk-revoked"))._tag).toBe("KeyRefused")
      expect(ports.log.filter((step) => step === "verify")).toHaveLength(3)

      const failing = makePorts({ store: "failing" })
      expect(admissionOf(failing, true).decide(request("sk-valid"))._tag).toBe("KeyCheckUnavailable")
      expect(failing.remembered.size).toBe(0)
    })

    it("is left alone by a request that asks the store (useKeyCache false)", () => {
      const ports = makePorts()
      const admission = admissionOf(ports, true)
      expect(admission.decide({ ...request("sk-valid"), useKeyCache: false })._tag).toBe("Admitted")
      expect(ports.remembered.size).toBe(0)
      admission.decide(request("sk-valid"))
      expect(admission.decide({ ...request("sk-valid"), useKeyCache: false })._tag).toBe("Admitted")
      expect(ports.log.filter((step) => step.startsWith("verify") || step.startsWith("cache"))).toEqual([
        "verify",
        "cache lookup",
        "verify",
        "cache remember",
        "verify"
      ])
    })

    it("admits without asking anyone only when every check would pass, and otherwise spends nothing", () => {
      const ports = makePorts({ budgets: { "10.0.0.1": 2, key_valid: 5 } })
      const admission = admissionOf(ports, true)
      // Not cached yet: declined, nothing spent.
      expect(admission.admitCached(request("sk-valid"))).toBeUndefined()
      expect(ports.log).toEqual(["cache lookup"])
      admission.decide(request("sk-valid"))
      expect(ports.left.get("10.0.0.1")).toBe(1)
      const admitted = admission.admitCached(request("sk-valid"))
      expect(admitted?.key.id).toBe("key_valid")
      expect(admitted?.budget.remaining).toBe(3)
      expect(ports.left.get("10.0.0.1")).toBe(0)
      // The IP's budget is spent: declined, the key's budget untouched.
      expect(admission.admitCached(request("sk-valid"))).toBeUndefined()
      expect(ports.left.get("key_valid")).toBe(3)
      // A revoked key the cache holds, or no key: declined.
      admission.decide(request("sk-revoked", "10.0.0.2"))
      expect(admission.admitCached(request("sk-revoked", "10.0.0.2"))).toBeUndefined()
      expect(admission.admitCached(request(undefined, "10.0.0.2"))).toBeUndefined()
      expect(ports.left.get("10.0.0.2")).toBe(99)
      // The key's budget spent: declined before the IP's is touched.
      const spent = makePorts({ budgets: { key_valid: 1 } })
      const cachedSpent = admissionOf(spent, true)
      cachedSpent.decide(request("sk-valid"))
      expect(cachedSpent.admitCached(request("sk-valid"))).toBeUndefined()
      expect(spent.left.get("10.0.0.1")).toBe(99)
    })

    it("never admits without asking when there is no cache", () => {
      const ports = makePorts()
      const admission = admissionOf(ports)
      admission.decide(request("sk-valid"))
      expect(admission.admitCached(request("sk-valid"))).toBeUndefined()
    })
  })

  it("admits an operator key on the IP's budget, without the key store or a key budget", () => {
    const ports = makePorts({ budgets: { "10.0.0.1": 2 } })
    const admission = admissionOf(ports)
    const isOperatorKey = (key: string) => key === "op-key"
    expect(admission.admitOperator(request("op-key"), isOperatorKey)).toEqual({
      _tag: "OperatorAdmitted",
      budget: { allowed: true, remaining: 1, retryAfterSeconds: 0 }
    })
    expect(admission.admitOperator(request("sk-valid"), isOperatorKey)._tag).toBe("KeyRefused")
    expect(admission.admitOperator(request("op-key"), isOperatorKey)._tag).toBe("IpBudgetSpent")
    expect(ports.log).toEqual(["takeIp 10.0.0.1", "takeIp 10.0.0.1", "takeIp 10.0.0.1"])
  })

  it.effect("re-checks a key against the store: usable, not any more, or cannot tell", () =>
    Effect.gen(function*() {
      const admission = admissionOf(makePorts())
      expect(yield* admission.stillUsable(Redacted.make("sk-valid"))).toBe(true)
      expect(yield* admission.stillUsable(Redacted.make("sk-revoked"))).toBe(false)
      expect(yield* admission.stillUsable(Redacted.make("sk-expired"))).toBe(false)
      expect(yield* admission.stillUsable(Redacted.make("sk-unknown"))).toBe(false)
      expect(yield* admissionOf(makePorts({ store: "failing" })).stillUsable(Redacted.make("sk-valid"))).toBeUndefined()
    }))

  it("spends the IP's budget of a request refused before it could be read", () => {
    const ports = makePorts({ budgets: { "10.0.0.9": 1 } })
    const admission = admissionOf(ports)
    expect(admission.spendIpBudget("10.0.0.9").allowed).toBe(true)
    expect(admission.spendIpBudget("10.0.0.9").allowed).toBe(false)
  })

  it.effect("is a layer over the ports in context, with the key cache when one is provided", () => {
    const ports = makePorts()
    const portLayers = Layer.mergeAll(
      Layer.succeed(KeyStore)(ports.keyStore),
      Layer.succeed(RateLimiter)(ports.limiter),
      Layer.succeed(KeyCache)(ports.keyCache)
    )
    return Effect.gen(function*() {
      const admission = yield* Admission.Admission
      admission.decide(request("sk-valid"))
      expect(admission.admitCached(request("sk-valid"))?.key.id).toBe("key_valid")
      expect(ports.remembered.size).toBe(1)
    }).pipe(Effect.provide(Admission.layer({ now: () => now }).pipe(Layer.provide(portLayers))))
  })
})
