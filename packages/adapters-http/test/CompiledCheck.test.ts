/**
 * The compiled wire check against the schema it is compiled from. For every wire schema the
 * service encodes: (a) every object a simulated market makes is accepted and stringifies as
 * `Schema.encodeSync`'s output does; (b) mutations of those objects (keys deleted, added, moved;
 * values of the wrong type, null, NaN, "1e5", negative, huge, broken decimal strings, nested or
 * sparse arrays) get the schema's verdict: the check accepts exactly when `encodeSync` accepts
 * AND its output stringifies as the value does (an unknown key is dropped and a moved key put
 * back in place by `encodeSync`, so those values must go to it), and the encoder returns what
 * `encodeSync` returns or throws its error; (c) schemas with a transformation or a node the
 * compiler does not handle fall back entirely. Small schemas cover what the wire schemas do not
 * use (tuples with rest, optional elements, `Schema.optional`, recursion, numeric literals).
 *
 * The simulator makes the objects (a devDependency of this package).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Schema } from "effect"
import { Candle, CandlesResponse, DiscoveryRequest, DiscoveryResponse, MarketEngine, Money, Position, PositionsPage, Token, Trade } from "@spot/domain"
import { MarketSimulator, defaultSimulatorOptions } from "@spot/simulator"
import * as CompiledCheck from "../src/CompiledCheck.js"

type AnySchema = Schema.Codec<unknown, unknown>
const any = (schema: unknown): AnySchema => schema as AnySchema

// --- the reference: what Schema.encodeSync does with a value ---------------------------------

type Outcome = { readonly ok: true; readonly json: string | undefined } | { readonly ok: false; readonly error: string }

const outcome = (encode: () => unknown): Outcome => {
  try {
    return { ok: true, json: JSON.stringify(encode()) }
  } catch (error) {
    const e = error as Error
    return { ok: false, error: `${e.message}: ${String(e.cause)}` }
  }
}

/**
 * `output` is a replica of `value`: the same primitives (`Object.is`: -0 stays -0), objects of
 * the same prototype with the same own enumerable keys in the same order, arrays of the same
 * length. What the check claims of a value it accepts: `encodeSync`'s output is its replica, so
 * both stringify alike (undefined-valued keys included, which JSON would hide).
 */
const replica = (value: unknown, output: unknown): boolean => {
  if (typeof value !== "object" || value === null) return Object.is(value, output)
  if (typeof output !== "object" || output === null) return false
  if (Object.getPrototypeOf(value) !== Object.getPrototypeOf(output)) return false
  if (Array.isArray(value)) {
    const out = output as ReadonlyArray<unknown>
    return value.length === out.length && value.every((item, i) => replica(item, out[i]))
  }
  const keys = Object.keys(value)
  const outKeys = Object.keys(output)
  return keys.length === outKeys.length &&
    keys.every((key, i) => key === outKeys[i] && replica((value as any)[key], (output as any)[key]))
}

interface Subject {
  readonly name: string
  readonly schema: AnySchema
  readonly check: CompiledCheck.Check
  readonly encoder: (value: unknown) => unknown
  readonly encodeSync: (value: unknown) => unknown
}

const subject = (name: string, schema: AnySchema): Subject => {
  const compiled = CompiledCheck.compile(schema)
  expect(compiled.fallback, `${name} compiles`).toBeUndefined()
  return { name, schema, check: compiled.check, encoder: CompiledCheck.encoder(schema), encodeSync: Schema.encodeSync(schema) }
}

/**
 * The check's contract on one value: it accepts exactly when `encodeSync` accepts the value and
 * returns a replica of it, and then both stringify alike; the encoder behaves as `encodeSync`
 * (same JSON, or the same error), returning the value itself when the check accepts it.
 */
type Verdict = "accepted" | "copied differently" | "refused"

const agrees = (s: Subject, value: unknown): Verdict => {
  let output: { readonly value: unknown } | undefined
  try {
    output = { value: s.encodeSync(value) }
  } catch {
    output = undefined
  }
  const accepted = s.check(value)
  expect(accepted).toBe(output !== undefined && replica(value, output.value))
  if (accepted) {
    expect(JSON.stringify(value)).toBe(JSON.stringify(output!.value))
    expect(s.encoder(value)).toBe(value)
  }
  expect(outcome(() => s.encoder(value))).toEqual(outcome(() => s.encodeSync(value)))
  return accepted ? "accepted" : output !== undefined ? "copied differently" : "refused"
}

/**
 * How many values got each verdict, each at least its share of all: a property that only ever
 * saw refusals would prove little. ("Copied differently": accepted by the schema, whose output
 * drops a key or puts one back in place; the check must leave those to it.)
 */
const tally = () => {
  const counts: Record<Verdict, number> = { accepted: 0, "copied differently": 0, refused: 0 }
  return {
    add: (verdict: Verdict) => void counts[verdict]++,
    expectAtLeast: (name: string, shares: Record<Verdict, number>) => {
      const total = counts.accepted + counts["copied differently"] + counts.refused
      for (const verdict of Object.keys(counts) as Array<Verdict>) {
        expect([name, verdict, counts[verdict] >= total * shares[verdict]]).toEqual([name, verdict, true])
      }
    }
  }
}

// --- a simulated market's objects ------------------------------------------------------------

const start = 1_700_000_000_000

interface Corpus {
  readonly tokens: Array<unknown>
  readonly trades: Array<unknown>
  readonly positions: Array<unknown>
  readonly candles: Array<unknown>
  readonly candlesResponses: Array<unknown>
  readonly positionsPages: Array<unknown>
  readonly discoveryResponses: Array<unknown>
}

const corpus: Corpus = (() => {
  const simulator = new MarketSimulator({ ...defaultSimulatorOptions(start), seed: 11 })
  const engine = new MarketEngine()
  const tokens: Array<unknown> = []
  const trades: Array<unknown> = []
  const positions: Array<unknown> = []
  // A token object per change (its state as it moves), trades and positions as they are made.
  for (let second = 1; second <= 240; second++) {
    for (const event of simulator.advance(start + second * 1_000)) expect(engine.apply(event)).toBeUndefined()
    const changes = engine.drainChanges()
    if (second % 20 === 0) for (const token of changes.tokens) tokens.push(token.toWire())
    for (const record of changes.trades) if (record.seq % 7 === 0 || record.trade.platforms !== undefined) trades.push(record.trade)
    if (second % 30 === 0) for (const entry of changes.positions) positions.push(engine.positionWire(entry))
  }
  const all = [...engine.allTokens()]
  for (const token of all) tokens.push(token.toWire())
  const candles: Array<unknown> = []
  const candlesResponses: Array<unknown> = []
  for (const token of all.slice(0, 40)) {
    for (const timeframe of ["1s", "1m", "1h"] as const) {
      const got = token.tape.candles({ timeframe, metric: timeframe === "1m" ? "marketCap" : "price", denomination: timeframe === "1h" ? "native" : "usd" })
      candles.push(...got)
      candlesResponses.push({ candles: got })
    }
  }
  const positionsPages: Array<unknown> = []
  for (let i = 0; i < positions.length; i += 25) {
    const page = positions.slice(i, i + 25)
    positionsPages.push({ asOf: start + 240_000, counts: { spot: { open: page.length, closed: i } }, hasMore: i + 25 < positions.length, positions: page, nextCursor: i + 25 < positions.length ? `c${i}` : null })
  }
  const discoveryResponses: Array<unknown> = []
  for (let i = 0; i < all.length; i += 15) {
    const column = (name: string, slice: typeof all) => ({
      column: name,
      deltas: slice.map((token, rank) => ({ chain: token.chain, address: token.address, rank: rank + 1, data: token.toWire() }))
    })
    discoveryResponses.push({ columns: [column("newPairs", all.slice(i, i + 5)), column("graduating", []), column("graduated", all.slice(i + 5, i + 15))] })
  }
  return { tokens, trades, positions, candles, candlesResponses, positionsPages, discoveryResponses }
})()

const wire: ReadonlyArray<readonly [Subject, ReadonlyArray<unknown>]> = [
  [subject("Token", any(Token)), corpus.tokens],
  [subject("Trade", any(Trade)), corpus.trades],
  [subject("Candle", any(Candle)), corpus.candles],
  [subject("CandlesResponse", any(CandlesResponse)), corpus.candlesResponses],
  [subject("Position", any(Position)), corpus.positions],
  [subject("PositionsPage", any(PositionsPage)), corpus.positionsPages],
  [subject("DiscoveryResponse", any(DiscoveryResponse)), corpus.discoveryResponses]
]

// --- mutations -------------------------------------------------------------------------------

type Path = ReadonlyArray<string | number>

/** A deep copy of a JSON-like value: plain objects (keys in order) and arrays (holes kept). */
const clone = (value: unknown): any =>
  Array.isArray(value)
    ? value.map(clone)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, clone(item)]))
    : value

/** Every node of a JSON-like value with its path, the root first. */
const nodesOf = (value: unknown, path: Path = [], out: Array<{ path: Path; value: unknown }> = []) => {
  out.push({ path, value })
  if (Array.isArray(value)) value.forEach((item, i) => nodesOf(item, [...path, i], out))
  else if (typeof value === "object" && value !== null) for (const key of Object.keys(value)) nodesOf((value as Record<string, unknown>)[key], [...path, key], out)
  return out
}

const at = (root: unknown, path: Path): unknown => path.reduce((node: any, key) => node[key], root)

/** Values a field can be given: wrong types, null, NaN, exponent and sign forms, extremes. */
const replacements: ReadonlyArray<unknown> = [
  null, undefined, NaN, Infinity, -Infinity, -0, 0, 1, -1, 0.5, 42, 2 ** 53, -(2 ** 53), 1e21, 1763745882000,
  "", "0", "1", "-1", "12.5", "-12.5", "0.000123", "1e5", "1E5", "+1", " 1", "1 ", "1.", ".5", "01", "-0", "--1",
  "1.2.3", "NaN", "Infinity", "abc", "solana", "Solana", "buy", "sell", "open", "spot", "usd", "x".repeat(100_000),
  "9".repeat(400), true, false, [], {}, [1], ["x"], [null], [[]], [{}], { native: "1", usd: "2" }, { native: 1, usd: "2" },
  { kind: "mayhem_mode" }, { platform: "partner" }, [{ platform: "partner", isPaid: true, paidAt: null }]
]

/** Turns a decimal string into a near miss: exponent form, signs, stray characters. */
const breakDecimal = (s: string, pick: number): string => {
  const forms = [`${s}e5`, `+${s}`, `-${s}`, `--${s}`, ` ${s}`, `${s} `, `${s}.`, `.${s}`, `${s}.5.5`, s.replace(".", ","), `${s}\n`, s.replace(/\d/, "a"), `${s}0`, s.slice(1)]
  return forms[pick % forms.length]!
}

interface Mutation {
  readonly op: number
  readonly node: number
  readonly pick: number
  readonly key: string
}

/** Same-typed values: a string, number or boolean field given another of its type. */
const sameTyped: { readonly [type: string]: ReadonlyArray<unknown> } = {
  string: ["0", "1", "12.5", "-12.5", "0.000123", "100", "1e5", "-1", "", "abc", "solana", "base", "buy", "open", "closed", "usd", "resolved", "wallet", "cex", "spot"],
  number: [0, 1, 2, 7, 1763745882000, -0, 0.5, -1, 1e21, 2 ** 53 - 1],
  boolean: [true, false],
  object: [null]
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  // Most mutations keep the value plausible (a field's value from elsewhere, one of its type,
  // an optional key dropped), so the schema accepts a good share; the rest break it.
  op: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(12, 13) },
    { weight: 2, arbitrary: fc.constantFrom(2, 3) },
    { weight: 1, arbitrary: fc.constantFrom(1, 6) },
    { weight: 3, arbitrary: fc.nat(11) }
  ),
  node: fc.nat(),
  pick: fc.nat(),
  key: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("extra", "native", "usd", "id", "chain", "price", "platforms", "flags", "closedAt"))
})

/**
 * Applies one mutation to `root` in place: replace a value, delete a key, add a key, move a key
 * to the end, break a decimal string, nudge a number, grow, shrink, hole or nest an array.
 */
const mutate = (root: { value: unknown }, m: Mutation): void => {
  const nodes = nodesOf(root.value)
  const { path, value } = nodes[m.node % nodes.length]!
  const set = (next: unknown) => {
    if (path.length === 0) root.value = next
    else (at(root.value, path.slice(0, -1)) as any)[path[path.length - 1]!] = next
  }
  const replacement = clone(replacements[m.pick % replacements.length])
  switch (m.op) {
    case 0:
      return set(replacement)
    case 1: {
      // Delete the key (or the item: shifts the rest of the array).
      if (path.length === 0) return set(replacement)
      const parent = at(root.value, path.slice(0, -1)) as any
      if (Array.isArray(parent)) parent.splice(path[path.length - 1] as number, 1)
      else delete parent[path[path.length - 1]!]
      return
    }
    case 2:
      // A key the schema may not name; its value is JSON-visible (an undefined one would not show).
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        ;(value as any)[m.key] = replacement === undefined ? "extra" : replacement
        return
      }
      return set(replacement)
    case 3: {
      // Move a key to the end (the schema's copy puts it back in its place).
      if (typeof value !== "object" || value === null || Array.isArray(value)) return set(replacement)
      const keys = Object.keys(value)
      if (keys.length === 0) return
      const key = keys[m.pick % keys.length]!
      const moved = (value as any)[key]
      delete (value as any)[key]
      ;(value as any)[key] = moved
      return
    }
    case 4:
      return set(typeof value === "string" ? breakDecimal(value, m.pick) : replacement)
    case 5: {
      if (typeof value !== "number") return set(replacement)
      const nudges = [value + 0.5, -value - 1, value * 1e300, -value, value + 2 ** 53, Math.fround(value + 0.1), NaN, -0]
      return set(nudges[m.pick % nudges.length])
    }
    case 6:
      // Grow an array: a copy of one of its items or a wrong one.
      if (Array.isArray(value)) {
        value.push(value.length > 0 && m.pick % 2 === 0 ? clone(value[m.pick % value.length]) : replacement)
        return
      }
      return set([value])
    case 7:
      // A hole in an array (JSON shows null) or an emptied one.
      if (Array.isArray(value) && value.length > 0) {
        if (m.pick % 2 === 0) delete value[m.pick % value.length]
        else value.length = 0
        return
      }
      return set(replacement)
    case 8:
      // Nest: the value inside an array, or an array inside itself.
      return set(Array.isArray(value) ? [value] : [value, value])
    case 9:
      // A very long or empty string where a string was.
      return set(typeof value === "string" ? (m.pick % 2 === 0 ? value.repeat(5_000) : "") : replacement)
    case 10:
      // A number where a string was, and a string where a number was.
      return set(typeof value === "string" ? Number(value) : typeof value === "number" ? String(value) : replacement)
    case 11:
      // Null where anything was.
      return set(null)
    case 12: {
      // Another value of the same JSON type.
      const pool = sameTyped[typeof value]
      return set(pool === undefined ? replacement : clone(pool[m.pick % pool.length]))
    }
    default: {
      // The value of a field of the same name elsewhere in the object (a Money's `usd` from
      // another Money, a `status` of another enum), or of the same item position.
      const last = path[path.length - 1]
      const alike = nodes.filter((n) => n.path.length > 0 && n.path[n.path.length - 1] === last && typeof last === "string")
      return alike.length === 0 ? set(replacement) : set(clone(alike[m.pick % alike.length]!.value))
    }
  }
}

const mutated = (value: unknown, mutations: ReadonlyArray<Mutation>): unknown => {
  const root = { value: clone(value) }
  for (const m of mutations) mutate(root, m)
  return root.value
}

// --- (a) real objects ------------------------------------------------------------------------

describe("CompiledCheck on a simulated market's objects", () => {
  it("has objects with and without every optional key", () => {
    const has = (objects: ReadonlyArray<unknown>, key: string) => objects.some((o) => Object.hasOwn(o as object, key))
    const lacks = (objects: ReadonlyArray<unknown>, key: string) => objects.some((o) => !Object.hasOwn(o as object, key))
    for (const key of ["platforms", "annotations"]) expect([key, has(corpus.tokens, key), lacks(corpus.tokens, key)]).toEqual([key, true, true])
    for (const key of ["flags", "platforms", "identities"]) expect([key, has(corpus.trades, key), lacks(corpus.trades, key)]).toEqual([key, true, true])
    for (const key of ["closedAt", "avgEntryMarketCap", "avgExitMarketCap", "identities"]) {
      expect([key, has(corpus.positions, key), lacks(corpus.positions, key)]).toEqual([key, true, true])
    }
    for (const [s, objects] of wire) expect([s.name, objects.length > 20]).toEqual([s.name, true])
  })

  it("accepts every object and stringifies it as encodeSync's output", () => {
    for (const [s, objects] of wire) {
      for (const value of objects) {
        expect(s.check(value)).toBe(true)
        expect(s.encoder(value)).toBe(value)
        expect(JSON.stringify(value)).toBe(JSON.stringify(s.encodeSync(value)))
      }
    }
  }, 60_000)

  for (const [s, objects] of wire) {
    it(`${s.name}: any object, picked at random, is accepted with encodeSync's JSON`, () => {
      fc.assert(
        fc.property(fc.nat(objects.length - 1), (i) => {
          const value = objects[i]
          expect(s.check(value)).toBe(true)
          expect(JSON.stringify(s.encoder(value))).toBe(JSON.stringify(s.encodeSync(value)))
        }),
        { numRuns: 100 }
      )
    })
  }
})

// --- (b) mutations ---------------------------------------------------------------------------

describe("CompiledCheck on mutated objects gives the schema's verdict", () => {
  for (const [s, objects] of wire) {
    it(s.name, () => {
      const verdicts = tally()
      fc.assert(
        fc.property(fc.nat(objects.length - 1), fc.array(mutation, { minLength: 1, maxLength: 2 }), (i, mutations) => {
          verdicts.add(agrees(s, mutated(objects[i], mutations)))
        }),
        { numRuns: s.name === "Token" || s.name === "DiscoveryResponse" || s.name === "PositionsPage" ? 400 : 600 }
      )
      verdicts.expectAtLeast(s.name, { accepted: 0.1, "copied differently": 0.01, refused: 0.1 })
    }, 120_000)
  }

  it("refuses what the schema refuses and what it would copy differently, field by field (Token)", () => {
    const token = corpus.tokens.find((t) => Object.hasOwn(t as object, "platforms"))!
    const s = wire[0]![0]
    const cases: Array<[string, (t: any) => void, boolean]> = [
      ["valid", () => {}, true],
      ["required key deleted", (t) => delete t.address, false],
      ["optional key deleted", (t) => delete t.platforms, true],
      ["optional key undefined", (t) => (t.annotations = undefined), false],
      ["unknown key", (t) => (t.extra = 1), false],
      ["key moved to the end", (t) => {
        const chain = t.chain
        delete t.chain
        t.chain = chain
      }, false],
      ["decimals NaN", (t) => (t.decimals = NaN), false],
      ["decimals -1", (t) => (t.decimals = -1), false],
      ["decimals 1.5", (t) => (t.decimals = 1.5), false],
      ["decimals -0", (t) => (t.decimals = -0), true],
      ["decimals 2^53", (t) => (t.decimals = 2 ** 53), false],
      ["createdAt as a string", (t) => (t.createdAt = "1763745000000"), false],
      ["price.usd in exponent form", (t) => (t.price.usd = "1e5"), false],
      ["supply negative", (t) => (t.supply = "-1"), false],
      ["stats 1h priceChangePct negative", (t) => (t.stats["1h"].priceChangePct = "-3.5"), true],
      ["chain capitalized", (t) => (t.chain = "Solana"), false],
      ["graduatedAt null", (t) => (t.graduatedAt = null), true],
      ["bondingCurvePct as a number", (t) => (t.bondingCurvePct = 42), false],
      ["dexes nested", (t) => (t.dexes = [t.dexes]), false],
      ["dexes with a hole", (t) => (t.dexes = [, "x"]), false],
      ["security.transferFeeBps 2.5", (t) => (t.security.transferFeeBps = 2.5), false],
      ["holders null", (t) => (t.holders = null), false],
      ["platforms item unknown key", (t) => (t.platforms[0].extra = true), false],
      ["platforms empty", (t) => (t.platforms = []), true],
      ["stats window missing", (t) => delete t.stats["24h"], false]
    ]
    for (const [name, change, accepted] of cases) {
      const value = clone(token) as any
      change(value)
      expect([name, s.check(value)]).toEqual([name, accepted])
      agrees(s, value)
    }
  })

  it("leaves values with another prototype, or keys only the schema sees, to encodeSync", () => {
    const s = wire[0]![0]
    const token = corpus.tokens[0] as any
    class Priced {
      native = token.price.native
      usd = token.price.usd
      toJSON() {
        return "a class instance"
      }
    }
    const values: Array<[string, unknown]> = [
      ["null prototype", Object.assign(Object.create(null), token)],
      ["class instance with toJSON", { ...token, price: new Priced() }],
      ["unknown key with an undefined value", { ...token, extra: undefined }],
      ["unknown key with a function value", { ...token, extra: () => 1 }],
      ["array subclass", { ...token, dexes: Object.assign(new (class extends Array {})(), token.dexes) }],
      ["inherited optional key", Object.assign(Object.create({ annotations: [{ kind: "x" }] }), token)],
      ["non-enumerable optional key", Object.defineProperty({ ...token }, "annotations", { value: [{ kind: "y" }], enumerable: false })]
    ]
    for (const [name, value] of values) {
      expect([name, s.check(value)]).toEqual([name, false])
      agrees(s, value)
    }
  })
})

// --- small schemas: what the wire schemas do not use ----------------------------------------

interface Tree {
  readonly name: string
  readonly children: ReadonlyArray<Tree>
}
const Tree: Schema.Codec<Tree> = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)),
  children: Schema.Array(Schema.suspend((): Schema.Codec<Tree> => Tree))
})

const small: ReadonlyArray<readonly [Subject, ReadonlyArray<unknown>]> = [
  [subject("tuple, optional element", any(Schema.Tuple([Schema.String, Schema.optionalKey(Schema.Int)]))), [["a"], ["a", 1], ["", -0]]],
  [
    subject("tuple, optional element, rest", any(Schema.TupleWithRest(Schema.Tuple([Schema.String, Schema.optionalKey(Schema.Finite)]), [Schema.Boolean]))),
    [["a"], ["a", 1], ["a", 1, true, false], ["", -0]]
  ],
  [
    subject("tuple, rest, items after it", any(Schema.TupleWithRest(Schema.Tuple([Schema.String]), [Schema.Int, Schema.Boolean, Schema.Literal("end")]))),
    [["a", true, "end"], ["a", 1, 2, 3, false, "end"]]
  ],
  [
    subject("optional (undefined), numeric literals, NullOr struct", any(Schema.Struct({
      a: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: -5, maximum: 5 }))),
      b: Schema.NullOr(Schema.Literals([0, 1, "x", true])),
      m: Schema.NullOr(Money),
      u: Schema.Union([Schema.Number, Schema.String.check(Schema.isMaxLength(3)), Schema.Null])
    }))),
    [{ a: 1, b: 0, m: null, u: 1 }, { a: undefined, b: null, m: { native: "1", usd: "-2.5" }, u: "abc" }, { b: "x", m: null, u: null }, { b: true, m: null, u: NaN }]
  ],
  [subject("recursive (Suspend)", any(Tree)), [{ name: "a", children: [] }, { name: "a", children: [{ name: "b", children: [{ name: "c", children: [] }] }] }]]
]

describe("CompiledCheck on the features the wire schemas do not use", () => {
  for (const [s, seeds] of small) {
    it(`${s.name}: seeds are accepted and mutations get the schema's verdict`, () => {
      for (const seed of seeds) {
        expect(s.check(seed)).toBe(true)
        agrees(s, seed)
      }
      const verdicts = tally()
      fc.assert(
        fc.property(fc.nat(seeds.length - 1), fc.array(mutation, { minLength: 1, maxLength: 2 }), (i, mutations) => {
          verdicts.add(agrees(s, mutated(seeds[i], mutations)))
        }),
        { numRuns: 1_000 }
      )
      // A tuple's output is its items: no key to drop or move.
      verdicts.expectAtLeast(s.name, { accepted: 0.1, "copied differently": s.name.startsWith("tuple") ? 0 : 0.01, refused: 0.1 })
    })

    it(`${s.name}: arbitrary JSON values get the schema's verdict`, () => {
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => void agrees(s, value)),
        { numRuns: 500 }
      )
    })
  }

  it("-0 is the literal 0 and stringifies as 0, as encodeSync's output does", () => {
    const s = small.find(([s]) => s.name.startsWith("optional (undefined)"))![0]
    agrees(s, { b: -0, m: null, u: -0 })
    expect(s.check({ b: -0, m: null, u: -0 })).toBe(true)
  })
})

// --- (c) fallbacks ---------------------------------------------------------------------------

describe("CompiledCheck falls back for what it does not compile", () => {
  class Point extends Schema.Class<Point>("Point")({ x: Schema.Number }) {}
  const cases: ReadonlyArray<readonly [string, AnySchema, unknown]> = [
    ["a transformation on a field", any(Schema.Struct({ id: Schema.String, n: Schema.NumberFromString })), { id: "a", n: 1 }],
    ["a transformation in an array", any(Schema.Array(Schema.NumberFromString)), [1, 2]],
    ["renamed keys", any(Schema.Struct({ a: Schema.String }).pipe(Schema.encodeKeys({ a: "b" }))), { a: "x" }],
    ["an index signature", any(Schema.Record(Schema.String, Schema.Number)), { a: 1 }],
    ["a declaration", any(Schema.Struct({ at: Schema.Date })), { at: new Date(0) }],
    ["a class", any(Point), new Point({ x: 1 })],
    ["a union of two structs", any(Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Struct({ a: Schema.String, b: Schema.String })])), { a: "x", b: "y" }],
    ["checks on an array", any(Schema.Array(Schema.String).check(Schema.isMinLength(1))), ["x"]],
    ["an empty struct", any(Schema.Struct({})), "a string"],
    ["a oneOf union", any(Schema.Union([Schema.String, Schema.Literal("a")], { mode: "oneOf" })), "b"],
    ["a bigint", any(Schema.Struct({ n: Schema.BigInt })), { n: 1n }],
    ["the discovery request (a declared number, array checks)", any(DiscoveryRequest), { chains: ["solana"], newPairs: {} }]
  ]

  for (const [name, schema, value] of cases) {
    it(name, () => {
      const compiled = CompiledCheck.compile(schema)
      expect(compiled.fallback).toBeTypeOf("string")
      expect(compiled.check(value)).toBe(false)
      const encoder = CompiledCheck.encoder(schema)
      const encodeSync = Schema.encodeSync(schema)
      expect(outcome(() => encoder(value))).toEqual(outcome(() => encodeSync(value)))
    })
  }

  it("a transformation's output is not the value itself: the fallback is needed", () => {
    const schema = Schema.Struct({ id: Schema.String, n: Schema.NumberFromString })
    const encode = CompiledCheck.encoder(schema)
    expect(encode({ id: "a", n: 1 })).toEqual({ id: "a", n: "1" })
    expect(JSON.stringify(encode({ id: "a", n: 1 }))).not.toBe(JSON.stringify({ id: "a", n: 1 }))
  })

  it("reports the schema's own error for what it refuses", () => {
    const encode = CompiledCheck.encoder(Trade)
    const bad = { ...(corpus.trades[0] as object), side: "short" }
    expect(outcome(() => encode(bad as never))).toEqual(outcome(() => Schema.encodeSync(Trade)(bad as never)))
    expect(() => encode(bad as never)).toThrow("Expected TradeSide")
  })
})
