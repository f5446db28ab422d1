/**
 * Engine snapshots: fold simulated events into engine A, snapshot it, restore B, and require that
 * every read is byte-identical — then keep folding the same events into both and require that
 * they stay identical (reads, and both whole object graphs compared side by side): internal state
 * a restore lost shows up there even when no read shows it yet. A sabotaged registry (a field left out)
 * must be caught by the same comparison, so the comparison is known to be able to fail.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Events, MarketEngine, TokenBook } from "@spot/domain"
import type { MarketEvent } from "@spot/domain"
import { WalletRecord } from "@spot/domain/engine-state"
import { MarketSimulator } from "@spot/simulator"
import * as EngineSnapshot from "../../src/snapshot/EngineSnapshot.js"
import * as Codec from "../../src/snapshot/ObjectGraphCodec.js"
import { firstDifference, readsOf } from "@spot/domain/testing"

const { decodeMarketEvent, encodeMarketEvent } = Events

const start = 1_767_000_000_000
const minute = 60_000

/** Simulated events, one array per simulated minute. */
const simulate = (seed: number, minutes: number, tradesPerSecond = 20): Array<Array<MarketEvent>> => {
  const simulator = new MarketSimulator({ seed, startTime: start, tradesPerSecond, launchesPerMinute: 30 })
  const out: Array<Array<MarketEvent>> = []
  for (let m = 1; m <= minutes; m++) out.push(simulator.advance(start + m * minute))
  return out
}

/** Folds one minute the way the service does: the batch, its changes drained, the clock moved. */
const foldMinute = (engine: MarketEngine, events: ReadonlyArray<MarketEvent>, minuteEnd: number, drain = true) => {
  for (const event of events) engine.apply(event)
  if (drain) engine.drainChanges()
  engine.advanceTo(minuteEnd)
  if (drain) engine.drainChanges()
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i])

const transientFields = new Set(EngineSnapshot.registryEntries().classes.flatMap((entry) => Object.keys(entry.transient ?? {})))

/** A frozen list of strings: the engine's interned trade flag lists, compared by content (see EngineSnapshot.ts). */
const isInternedList = (value: unknown): boolean =>
  Array.isArray(value) && Object.isFrozen(value) && value.every((item) => typeof item === "string")

/**
 * The two engines' whole object graphs side by side: the same prototypes, keys, primitives (-0
 * and NaN exactly), typed-array bytes, map and set orders, and the same sharing (an object met
 * twice in one graph is met twice in the other at the same places), transient caches aside. The
 * path to the first difference, or undefined.
 */
const graphDifference = (rootA: object, rootB: object): string | undefined => {
  const pairs = new Map<object, object>()
  const reverse = new Map<object, object>()
  const stack: Array<[unknown, unknown, string]> = [[rootA, rootB, "engine"]]
  while (stack.length > 0) {
    const [a, b, path] = stack.pop()!
    if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) {
      if (!Object.is(a, b)) return `${path}: ${String(a)} against ${String(b)}`
      continue
    }
    if (isInternedList(a) || isInternedList(b)) {
      if (JSON.stringify(a) !== JSON.stringify(b)) return `${path}: ${JSON.stringify(a)} against ${JSON.stringify(b)}`
      continue
    }
    const known = pairs.get(a)
    if (known !== undefined) {
      if (known !== b) return `${path}: shared differently`
      continue
    }
    if (reverse.has(b)) return `${path}: shared differently`
    pairs.set(a, b)
    reverse.set(b, a)
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${path}: different prototypes`
    if (Object.isFrozen(a) !== Object.isFrozen(b)) return `${path}: frozen in one only`
    if (ArrayBuffer.isView(a)) {
      const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
      const y = new Uint8Array((b as ArrayBufferView).buffer, (b as ArrayBufferView).byteOffset, (b as ArrayBufferView).byteLength)
      if (!sameBytes(x, y) || a.buffer.byteLength !== (b as ArrayBufferView).buffer.byteLength) return `${path}: typed arrays differ`
      stack.push([a.buffer, (b as ArrayBufferView).buffer, `${path}.buffer`])
      continue
    }
    if (a instanceof ArrayBuffer) continue
    if (a instanceof Map) {
      const mb = b as Map<unknown, unknown>
      if (a.size !== mb.size) return `${path}: map sizes ${a.size} and ${mb.size}`
      const ea = [...a.entries()]
      const eb = [...mb.entries()]
      ea.forEach(([k, v], i) => stack.push([k, eb[i]![0], `${path}.<key ${i}>`], [v, eb[i]![1], `${path}.get(${String(k)})`]))
      continue
    }
    if (a instanceof Set) {
      const sa = [...a]
      const sb = [...(b as Set<unknown>)]
      if (sa.length !== sb.length) return `${path}: set sizes`
      sa.forEach((v, i) => stack.push([v, sb[i], `${path}.<member ${i}>`]))
      continue
    }
    const keysA = Object.keys(a)
    const keysB = Object.keys(b)
    if (keysA.join() !== keysB.join()) return `${path}: keys ${keysA.join()} against ${keysB.join()}`
    if (Array.isArray(a)) {
      for (let i = 0; i < a.length; i++) {
        if ((i in a) !== (i in (b as Array<unknown>))) return `${path}[${i}]: a hole in one only`
      }
    }
    for (const key of keysA) {
      if (transientFields.has(key) && !Array.isArray(a)) continue
      stack.push([(a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`])
    }
  }
  return undefined
}

interface Scenario {
  readonly seed: number
  readonly minutes: number
  readonly cut: number
  readonly drainAtCut: boolean
}

type RoundTrip = (engine: MarketEngine) => MarketEngine

/**
 * A and B (B = roundTrip(A) at the cut) compared after the cut and after folding the rest into
 * both; the first difference found, or undefined.
 */
const divergence = (scenario: Scenario, roundTrip: RoundTrip): string | undefined => {
  const minutes = simulate(scenario.seed, scenario.minutes)
  const a = new MarketEngine()
  for (let m = 0; m < scenario.cut; m++) foldMinute(a, minutes[m]!, start + (m + 1) * minute, m < scenario.cut - 1 || scenario.drainAtCut)
  const b = roundTrip(a)
  const atCut = firstDifference(readsOf(a), readsOf(b))
  if (atCut !== undefined) return `at the cut: ${atCut}`
  for (let m = scenario.cut; m < scenario.minutes; m++) {
    foldMinute(a, minutes[m]!, start + (m + 1) * minute)
    foldMinute(b, minutes[m]!, start + (m + 1) * minute)
  }
  // the same late advance for both: trailing windows roll
  a.advanceTo(start + (scenario.minutes + 90) * minute)
  b.advanceTo(start + (scenario.minutes + 90) * minute)
  const after = firstDifference(readsOf(a), readsOf(b))
  if (after !== undefined) return `after folding on: ${after}`
  const internal = graphDifference(a, b)
  if (internal !== undefined) return `after folding on, inside: ${internal}`
  return undefined
}

const viaSnapshot: RoundTrip = (engine) => EngineSnapshot.restore(EngineSnapshot.snapshot(engine, { strict: true }))

const scenarioArbitrary = fc
  .record({ seed: fc.integer({ min: 1, max: 1_000_000 }), minutes: fc.integer({ min: 3, max: 5 }), cutFraction: fc.double({ min: 0.2, max: 0.8, noNaN: true }), drainAtCut: fc.boolean() })
  .map(({ cutFraction, drainAtCut, minutes, seed }): Scenario => ({ seed, minutes, cut: Math.max(1, Math.min(minutes - 1, Math.round(minutes * cutFraction))), drainAtCut }))

describe("EngineSnapshot", () => {
  it("restores an engine whose every read is identical, and that stays identical as both fold on", () => {
    fc.assert(
      fc.property(scenarioArbitrary, (scenario) => {
        expect(divergence(scenario, viaSnapshot)).toBeUndefined()
      }),
      { numRuns: 6 }
    )
  }, 300_000)

  it("a snapshot of the restored engine is byte-identical to the original's", () => {
    const a = new MarketEngine()
    const minutes = simulate(11, 3, 40)
    minutes.forEach((events, m) => foldMinute(a, events, start + (m + 1) * minute))
    const bytes = EngineSnapshot.snapshot(a)
    const b = EngineSnapshot.restore(bytes)
    expect(sameBytes(EngineSnapshot.snapshot(b), bytes)).toBe(true)
    expect(b.stats).toEqual(a.stats)
    expect(b.stats.trades).toBeGreaterThan(1_000)
  }, 120_000)

  it("in slices, with everything read between the steps, writes the state snapshot writes", () => {
    const a = new MarketEngine()
    simulate(12, 3, 40).forEach((events, m) => foldMinute(a, events, start + (m + 1) * minute))
    const bytes = EngineSnapshot.snapshot(a)
    const reads = readsOf(a)
    const steps = EngineSnapshot.snapshotInSlices(a, { endStep: () => true, chunkBytes: 4096 })
    let count = 0
    let chunks: ReadonlyArray<Uint8Array> = []
    for (;;) {
      const next = steps.next()
      if (next.done === true) {
        chunks = next.value
        break
      }
      // reads (which fill the transient caches) between steps change nothing the steps write
      if (count++ % 400 === 0) expect(firstDifference(readsOf(a), reads)).toBeUndefined()
    }
    expect(count).toBeGreaterThan(1_000)
    const joined = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0))
    chunks.reduce((at, chunk) => (joined.set(chunk, at), at + chunk.length), 0)
    const b = EngineSnapshot.restore(joined)
    expect(sameBytes(EngineSnapshot.snapshot(b), bytes)).toBe(true)
    expect(firstDifference(readsOf(b), reads)).toBeUndefined()
  }, 120_000)

  it("restores into an empty engine readers already hold, and refuses a used one or other options", () => {
    const a = new MarketEngine()
    simulate(3, 2).forEach((events, m) => foldMinute(a, events, start + (m + 1) * minute))
    const bytes = EngineSnapshot.snapshot(a)
    const target = new MarketEngine()
    EngineSnapshot.restoreInto(target, bytes)
    expect(firstDifference(readsOf(target), readsOf(a))).toBeUndefined()
    expect(() => EngineSnapshot.restoreInto(target, bytes)).toThrow(/folded nothing/)
    const other = new MarketEngine({ tapeRetainMs: 24 * 3_600_000, recentTradesPerToken: 10, identityFeedSize: 100 })
    expect(() => EngineSnapshot.restoreInto(other, bytes)).toThrow(/options/)
    expect(other.stats.events).toBe(0)
  }, 120_000)

  it("restores module-level sentinels as the running code's own objects (compared by identity)", () => {
    const a = new MarketEngine()
    simulate(5, 3).forEach((events, m) => foldMinute(a, events, start + (m + 1) * minute))
    const b = EngineSnapshot.restore(EngineSnapshot.snapshot(a))
    const freshWallet = new WalletRecord("solana", "x")
    const freshToken = new TokenBook("solana", "y", "z", 6, 1n, null, false, 0, 0, [], 1)
    const noAddresses = (freshToken.positions as unknown as { addresses: unknown }).addresses
    let unscored = 0
    let withoutPositions = 0
    for (const token of b.allTokens()) {
      if (token.security === freshToken.security) unscored++
      if (token.positions.size === 0) {
        expect((token.positions as unknown as { addresses: unknown }).addresses).toBe(noAddresses)
        withoutPositions++
      }
      for (const slot of token.positions.slots()) {
        const wallet = b.wallet(token.chain, token.positions.walletAt(slot))!
        if (wallet.labels.length === 0) expect(wallet.labels).toBe(freshWallet.labels)
        if (wallet.identities.length === 0) expect(wallet.identities).toBe(freshWallet.identities)
      }
    }
    expect(unscored).toBeGreaterThan(0)
    // a token launched with no trade yet: its empty position book holds the shared sentinel
    const launchOnly = simulate(6, 1)[0]!
    const upToLaunch = launchOnly.slice(0, launchOnly.findIndex((event) => event.type === "tokenLaunched") + 1)
    const c = new MarketEngine()
    for (const event of upToLaunch) c.apply(event)
    const restoredC = EngineSnapshot.restore(EngineSnapshot.snapshot(c))
    for (const token of restoredC.allTokens()) {
      expect(token.positions.size).toBe(0)
      expect((token.positions as unknown as { addresses: unknown }).addresses).toBe(noAddresses)
      withoutPositions++
    }
    expect(withoutPositions).toBeGreaterThan(0)
    // The restored engine keeps folding: a token's first position goes into an array of its own (a
    // shared copy of the empty sentinel would be written into by every token).
    simulate(5, 5).slice(3).forEach((events, m) => foldMinute(b, events, start + (m + 4) * minute))
    const a2 = new MarketEngine()
    simulate(5, 5).forEach((events, m) => foldMinute(a2, events, start + (m + 1) * minute))
    expect(firstDifference(readsOf(b), readsOf(a2))).toBeUndefined()
  }, 120_000)

  it("every object two independently built engines share is registered as well-known (or is an interned trade flag list)", () => {
    // Events decoded from their wire form, as from the log: nothing shared through the events.
    const wire = simulate(21, 4, 40).flat().map((event) => JSON.stringify(encodeMarketEvent(event)))
    const build = () => {
      const engine = new MarketEngine()
      for (const text of wire) {
        const decoded = decodeMarketEvent(JSON.parse(text))
        if (decoded._tag !== "Success") throw new Error("event does not decode")
        engine.apply(decoded.value)
      }
      engine.advanceTo(start + 10 * minute)
      engine.drainChanges()
      return engine
    }
    const reachable = (root: object): Map<object, string> => {
      const seen = new Map<object, string>()
      const stack: Array<[unknown, string]> = [[root, "engine"]]
      while (stack.length > 0) {
        const [value, path] = stack.pop()!
        if (typeof value !== "object" || value === null || seen.has(value)) continue
        seen.set(value, path)
        if (ArrayBuffer.isView(value)) stack.push([value.buffer, `${path}.buffer`])
        else if (value instanceof Map) value.forEach((v, k) => stack.push([k, `${path}.<key>`], [v, `${path}.get(${String(k)})`]))
        else if (value instanceof Set) value.forEach((v) => stack.push([v, `${path}.<member>`]))
        else if (!(value instanceof ArrayBuffer)) for (const key of Object.keys(value)) stack.push([(value as Record<string, unknown>)[key], `${path}.${key}`])
      }
      return seen
    }
    const first = reachable(build())
    const second = reachable(build())
    const wellKnown = new Set(EngineSnapshot.registryEntries().wellKnown.map(([, value]) => value))
    const unexplained: Array<string> = []
    let internedFlagLists = 0
    for (const [value, path] of second) {
      if (!first.has(value) || wellKnown.has(value)) continue
      // MarketEngine's per-process interned trade flag lists (documented in EngineSnapshot.ts)
      if (/\.flags$/.test(path) && Array.isArray(value) && Object.isFrozen(value) && value.every((f) => typeof f === "string")) {
        internedFlagLists++
        continue
      }
      unexplained.push(path)
    }
    expect(unexplained).toEqual([])
    void internedFlagLists
  }, 120_000)

  it("carries the engine's trade feed codes: restored where another engine numbered other terminals and lists first, it reads as the writer", () => {
    const a = new MarketEngine()
    simulate(8, 3, 40).forEach((events, m) => foldMinute(a, events, start + (m + 1) * minute))
    const bytes = EngineSnapshot.snapshot(a)
    const expected = readsOf(a)
    // another engine of this process, folding other trades first, numbers its own codes
    const other = new MarketEngine()
    simulate(9, 3, 40).forEach((events, m) => foldMinute(other, events, start + (m + 1) * minute))
    const otherReads = readsOf(other)
    const b = EngineSnapshot.restore(bytes)
    expect(firstDifference(readsOf(b), expected)).toBeUndefined()
    const c = new MarketEngine()
    EngineSnapshot.restoreInto(c, bytes)
    expect(firstDifference(readsOf(c), expected)).toBeUndefined()
    expect(firstDifference(readsOf(other), otherReads)).toBeUndefined()
  }, 120_000)

  it("leaves the engine's interned texts out: a restored engine starts an empty table and folds on as the writer", () => {
    const minutes = simulate(10, 3)
    const a = new MarketEngine()
    minutes.slice(0, 2).forEach((events, m) => foldMinute(a, events, start + (m + 1) * minute))
    expect(a.internedTexts).toBeGreaterThan(0)
    const b = EngineSnapshot.restore(EngineSnapshot.snapshot(a))
    expect(b.internedTexts).toBe(0)
    foldMinute(a, minutes[2]!, start + 3 * minute)
    foldMinute(b, minutes[2]!, start + 3 * minute)
    expect(b.internedTexts).toBeGreaterThan(0)
    expect(firstDifference(readsOf(b), readsOf(a))).toBeUndefined()
  }, 120_000)

  it("refuses state it cannot restore exactly, naming the path", () => {
    const engine = new MarketEngine()
    simulate(2, 1).forEach((events, m) => foldMinute(engine, events, start + (m + 1) * minute))
    const token = engine.allTokens().next().value as TokenBook
    const holders = token.holders as unknown as { exclusions: unknown }
    const exclusions = holders.exclusions
    holders.exclusions = { isExcludedFromTop10: () => false }
    expect(() => EngineSnapshot.snapshot(engine)).toThrow(
      `a function (isExcludedFromTop10) cannot be snapshotted at snapshot.engine.tokens.get("${token.key}").holders.exclusions.isExcludedFromTop10`
    )
    holders.exclusions = exclusions
    class Unknown {}
    ;(token as unknown as { extra: unknown }).extra = new Unknown()
    expect(() => EngineSnapshot.snapshot(engine)).toThrow(/unregistered class \(Unknown\) cannot be snapshotted at snapshot\.engine\.tokens\.get\(".*"\)\.extra$/)
  }, 60_000)

  it("refuses another format version, other code, and corrupt or truncated bytes, with clear errors", () => {
    const engine = new MarketEngine()
    simulate(4, 1).forEach((events, m) => foldMinute(engine, events, start + (m + 1) * minute))
    const bytes = EngineSnapshot.snapshot(engine)
    expect(EngineSnapshot.describe(bytes)).toEqual({ formatVersion: Codec.FORMAT_VERSION, context: EngineSnapshot.fingerprint() })
    const otherVersion = bytes.slice()
    otherVersion[4] = 99
    expect(() => EngineSnapshot.restore(otherVersion)).toThrow(/unsupported snapshot format version 99/)
    const registry = Codec.prepareRegistry(EngineSnapshot.registryEntries())
    const otherCode = Codec.encode(registry, engine, { context: "engine-v0-someoneelse" })
    expect(() => EngineSnapshot.restore(otherCode)).toThrow(/written by other code/)
    for (const cut of [0, 10, bytes.length >> 1, bytes.length - 1]) {
      expect(() => EngineSnapshot.restore(bytes.subarray(0, cut))).toThrow(Codec.SnapshotDecodeError)
    }
  }, 60_000)

  it("the comparison catches lost state (a sabotaged registry leaving one field out is detected)", () => {
    const entries = EngineSnapshot.registryEntries()
    const sabotaged = (className: string, field: string, reset: number | undefined): RoundTrip => {
      const registry = Codec.prepareRegistry({
        classes: entries.classes.map((entry) =>
          entry.name === className ? { ...entry, transient: { ...entry.transient, [field]: reset } } : entry
        ),
        wellKnown: entries.wellKnown
      })
      return (engine) => (Codec.decode(registry, Codec.encode(registry, { engine, terminalNames: [], flagLists: [] }, { context: "x" }), "x") as { engine: MarketEngine }).engine
    }
    const scenario: Scenario = { seed: 7, minutes: 4, cut: 2, drainAtCut: true }
    expect(divergence(scenario, viaSnapshot)).toBeUndefined()
    // visible in reads at once
    expect(divergence(scenario, sabotaged("HolderBook", "holders", 0))).toMatch(/^at the cut/)
    // invisible at the cut, visible once both fold on
    expect(divergence(scenario, sabotaged("MarketEngine", "seq", 0))).toMatch(/^after folding on/)
    expect(divergence(scenario, sabotaged("MarketEngine", "tradeCount", 0))).toBeDefined()
  }, 300_000)
})
