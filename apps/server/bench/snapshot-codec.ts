/**
 * `npm run bench -- snapshot-codec`: the engine snapshot's codec against two well-kept libraries,
 * on the same engine state (docs/storage.md, "The snapshot codec"). A simulated busy market is
 * folded once and written with the object-graph codec to a temporary file; then, for each codec,
 * a child process restores that state, encodes it, drops it, decodes the bytes into an engine,
 * and checks the restored engine exactly: written again with the object-graph codec it must give
 * the file's bytes (identity and sharing, frozen lists, the running code's sentinels, typed-array
 * bytes, bigints, -0, holes and key orders all show there), else the first difference found by a
 * graph walk is the reason. Peak RSS per phase is the kernel's high-water mark, reset at the
 * phase's start (/proc/self/clear_refs); the JS heap and array buffers are what the phase left.
 *
 *   npm run bench -- snapshot-codec [--trades 300000] [--seed 1]
 *
 * The libraries are configured as their documentation says for such graphs: structured cloning
 * (shared and cyclic references), their typed-array and Map/Set support, bigints beyond 64 bits
 * through their extension, and one extension per registered class of the engine that writes the
 * instance's fields with its caches (transient fields) written as their reset values, in the
 * instance's key order, and rebuilds it on the class's prototype.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { getHeapStatistics } from "node:v8"
import * as Cbor from "cbor-x"
import * as Msgpackr from "msgpackr"
import { EngineSnapshot } from "@spot/adapters-storage"
import { MarketEngine } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { numberArg } from "./support/args.js"

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined)
const collect = () => {
  for (let i = 0; i < 3; i++) gc()
}
const mb = (bytes: number) => bytes / 1e6

/** The process's resident-set high-water mark (bytes); `resetPeak` sets it to the current RSS. */
const peakRss = (): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024
const resetPeak = () => writeFileSync("/proc/self/clear_refs", "5")
const heapFigures = () => {
  const heap = getHeapStatistics()
  return { heapMB: mb(heap.used_heap_size), arrayBuffersMB: mb(process.memoryUsage().arrayBuffers) }
}

/** What a snapshot holds: the engine, its trade feeds' codes included (EngineSnapshot.ts). */
interface Root {
  readonly engine: MarketEngine
}

interface Codec {
  readonly encode: (root: Root) => ReadonlyArray<Uint8Array>
  readonly decode: (bytes: Uint8Array) => Root
}

const registry = EngineSnapshot.registryEntries()

/** A registered class's instance as its fields, caches written as their reset values, in key order. */
const fieldsOf = (instance: object, transient: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const fields: Record<string, unknown> = {}
  for (const key of Object.keys(instance)) fields[key] = key in transient ? transient[key] : (instance as Record<string, unknown>)[key]
  return fields
}
const rebuild = (prototype: object, fields: object): object => Object.assign(Object.create(prototype) as object, fields)

const graphCodec: Codec = {
  encode: (root) => {
    const steps = EngineSnapshot.snapshotInSlices(root.engine, { endStep: () => false })
    for (;;) {
      const step = steps.next()
      if (step.done === true) return step.value
    }
  },
  decode: (bytes) => {
    const engine = EngineSnapshot.restore(bytes)
    return { engine }
  }
}

/** A registered class's msgpackr extension: how an instance is written and rebuilt. */
interface MsgpackrExtension {
  readonly write: (instance: object) => object
  readonly read: (fields: object) => object
}

const msgpackrCodec = (extensionOf: (prototype: object, transient: Readonly<Record<string, unknown>>) => MsgpackrExtension) => (): Codec => {
  registry.classes.forEach((entry, i) => {
    Msgpackr.addExtension({ Class: entry.constructor, type: 1 + i, ...extensionOf(entry.constructor.prototype as object, entry.transient ?? {}) })
  })
  const packr = new Msgpackr.Packr({ structuredClone: true, moreTypes: true, useBigIntExtension: true })
  return {
    encode: (root) => [packr.pack(root)],
    decode: (bytes) => packr.unpack(bytes) as Root
  }
}

/** The instance's fields, caches as their reset values, rebuilt on the class's prototype. */
const msgpackrFields = msgpackrCodec((prototype, transient) => ({
  write: (instance) => fieldsOf(instance, transient),
  read: (fields) => rebuild(prototype, fields)
}))

/**
 * The documentation's other extension form: `write` returns the instance itself and `read` sets
 * the prototype on the decoded object, so references to it are tracked as any object's; its
 * caches are then written too (the transient fields cannot be left out).
 */
const msgpackrWholeInstances = msgpackrCodec((prototype) => ({
  write: (instance) => instance,
  read: (fields) => Object.setPrototypeOf(fields, prototype) as object
}))

const cborCodec = (): Codec => {
  registry.classes.forEach((entry, i) => {
    const prototype = entry.constructor.prototype as object
    Cbor.addExtension({
      // cbor-x's type wants a constructor of any arguments; the codec never calls it
      Class: entry.constructor as new(...args: Array<unknown>) => object,
      tag: 40_501 + i,
      encode: (instance: object, encode: (value: unknown) => Uint8Array) => encode(fieldsOf(instance, entry.transient ?? {})),
      decode: (fields: object) => rebuild(prototype, fields)
    })
  })
  const encoder = new Cbor.Encoder({ structuredClone: true, mapsAsObjects: false, useRecords: true })
  return {
    encode: (root) => [encoder.encode(root)],
    decode: (bytes) => encoder.decode(bytes) as Root
  }
}

const codecs: Record<string, () => Codec> = { "object-graph": () => graphCodec, "msgpackr 2.1.3": msgpackrFields,
  "msgpackr 2.1.3, instances as they are": msgpackrWholeInstances,
  "cbor-x 1.6.8": cborCodec
}

/**
 * The first difference between two engines' object graphs, transient caches aside: prototypes,
 * frozenness, primitives (Object.is), typed-array bytes, key, map and set orders, sharing, and
 * the running code's well-known objects (which must be the very same objects).
 */
const firstDifference = (a: unknown, b: unknown): string | undefined => {
  const wellKnown = new Map(registry.wellKnown.map(([name, value]) => [value, name]))
  const transient = new Set(registry.classes.flatMap((entry) => Object.keys(entry.transient ?? {})))
  const pairs = new Map<object, object>()
  const stack: Array<[unknown, unknown, string]> = [[a, b, "engine"]]
  while (stack.length > 0) {
    const [x, y, path] = stack.pop()!
    if (typeof x !== "object" || x === null || typeof y !== "object" || y === null) {
      if (!Object.is(x, y)) return `${path}: ${typeof x === "bigint" ? `${x}n` : String(x)} became ${typeof y === "bigint" ? `${y}n` : String(y)}`
      continue
    }
    if (wellKnown.has(x)) {
      if (x !== y) return `${path}: the running code's ${wellKnown.get(x)} became a copy`
      continue
    }
    const known = pairs.get(x)
    if (known !== undefined) {
      if (known !== y) return `${path}: an object shared in the original became a separate copy`
      continue
    }
    pairs.set(x, y)
    if (Object.getPrototypeOf(x) !== Object.getPrototypeOf(y)) return `${path}: its class changed (${x.constructor?.name} became ${y.constructor?.name})`
    if (Object.isFrozen(x) !== Object.isFrozen(y)) return `${path}: ${Object.isFrozen(x) ? "frozen" : "extensible"} became ${Object.isFrozen(y) ? "frozen" : "extensible"}`
    if (ArrayBuffer.isView(x)) {
      const u = new Uint8Array(x.buffer, x.byteOffset, x.byteLength)
      const v = new Uint8Array((y as ArrayBufferView).buffer, (y as ArrayBufferView).byteOffset, (y as ArrayBufferView).byteLength)
      if (u.length !== v.length || u.some((byte, i) => byte !== v[i])) return `${path}: typed-array bytes differ`
      continue
    }
    if (x instanceof Map || x instanceof Set) {
      const xs = [...x.entries()]
      const ys = [...(y as Map<unknown, unknown>).entries()]
      if (xs.length !== ys.length) return `${path}: size ${xs.length} became ${ys.length}`
      xs.forEach(([k, v], i) => stack.push([k, ys[i]![0], `${path}.<key ${i}>`], [v, ys[i]![1], `${path}.<entry ${i}>`]))
      continue
    }
    const xKeys = Object.keys(x).filter((key) => !transient.has(key))
    const yKeys = Object.keys(y).filter((key) => !transient.has(key))
    if (xKeys.join() !== yKeys.join()) return `${path}: keys ${xKeys.slice(0, 8).join(",")} became ${yKeys.slice(0, 8).join(",")}`
    for (const key of xKeys) stack.push([(x as Record<string, unknown>)[key], (y as Record<string, unknown>)[key], `${path}.${key}`])
  }
  return undefined
}

const sha256 = (chunks: ReadonlyArray<Uint8Array>) => {
  const hash = createHash("sha256")
  for (const chunk of chunks) hash.update(chunk)
  return hash.digest("hex")
}

/** A child process: one codec on the state in `file`. Prints its figures as one JSON line. */
const measure = (name: string, file: string) => {
  const stateBytes = readFileSync(file)
  const expected = sha256([stateBytes])
  let original: MarketEngine | undefined = EngineSnapshot.restore(stateBytes)
  const root = (engine: MarketEngine): Root => ({ engine })
  const codec = codecs[name]!()
  collect()

  const rssBeforeEncode = process.memoryUsage().rss
  resetPeak()
  let started = performance.now()
  let encoded: ReadonlyArray<Uint8Array> | undefined
  let problem: string | undefined
  try {
    encoded = codec.encode(root(original))
  } catch (error) {
    problem = `encode failed: ${error instanceof Error ? error.message : String(error)}`
  }
  const encodeMs = performance.now() - started
  const encodePeak = peakRss()
  const afterEncode = heapFigures()
  const bytes = encoded?.reduce((sum, chunk) => sum + chunk.length, 0) ?? 0

  let decodeMs = NaN
  let decodePeak = NaN
  let rssBeforeDecode = NaN
  let afterDecode = { heapMB: NaN, arrayBuffersMB: NaN }
  if (encoded !== undefined) {
    const whole = encoded.length === 1 ? encoded[0]! : Buffer.concat(encoded)
    encoded = undefined
    // the original stays for the comparison when the re-encoded bytes differ: measured, it is in the baseline
    collect()
    rssBeforeDecode = process.memoryUsage().rss
    resetPeak()
    started = performance.now()
    let restored: Root | undefined
    try {
      restored = codec.decode(whole)
    } catch (error) {
      problem = `decode failed: ${error instanceof Error ? error.message : String(error)}`
    }
    decodeMs = performance.now() - started
    decodePeak = peakRss()
    afterDecode = heapFigures()
    if (restored !== undefined) {
      if (!(restored.engine instanceof MarketEngine)) problem = "the root's engine is not a MarketEngine"
      else if (sha256(graphCodec.encode(restored)) !== expected) {
        problem = firstDifference(original, restored.engine) ?? "re-encoded bytes differ (no difference found by the walk)"
      }
    }
  }
  original = undefined
  console.log(JSON.stringify({
    name,
    bytesMB: mb(bytes),
    encodeMs,
    encodePeakRssMB: mb(encodePeak),
    encodeRssGrowthMB: mb(encodePeak - rssBeforeEncode),
    encodeHeapAfterMB: afterEncode.heapMB,
    decodeMs,
    decodePeakRssMB: mb(decodePeak),
    decodeRssGrowthMB: mb(decodePeak - rssBeforeDecode),
    decodeHeapAfterMB: afterDecode.heapMB,
    decodeArrayBuffersAfterMB: afterDecode.arrayBuffersMB,
    exact: problem === undefined,
    problem
  }))
}

/** Folds a busy simulated market (the engine bench's mix) and writes its state with the object-graph codec. */
const buildState = (file: string) => {
  const trades = numberArg("trades", 300_000)
  const startTime = 1_700_000_000_000
  const simulator = new Simulator.MarketSimulator({ seed: numberArg("seed", 1), startTime, tradesPerSecond: 2_000, launchesPerMinute: 600 })
  const engine = new MarketEngine()
  let swaps = 0
  for (let second = 1; swaps < trades; second++) {
    const batch = simulator.advance(startTime + second * 1_000)
    for (const event of batch) {
      if (event.type === "swap") swaps++
      engine.apply(event)
    }
    engine.drainChanges()
  }
  engine.advanceTo(engine.now)
  engine.drainChanges()
  const chunks = graphCodec.encode({ engine })
  writeFileSync(file, Buffer.concat(chunks))
  return { trades: swaps, tokens: engine.stats.tokens, wallets: engine.stats.wallets }
}

const child = process.argv.indexOf("--measure")
if (child >= 0) {
  measure(process.argv[child + 1]!, process.argv[child + 2]!)
} else {
  const directory = mkdtempSync(join(tmpdir(), "spot-snapshot-codec-"))
  try {
    const file = join(directory, "state.snapshot")
    const state = buildState(file)
    console.log(`state: ${state.trades} trades, ${state.tokens} tokens, ${state.wallets} wallets; load average ${loadavg().map((x) => x.toFixed(1)).join(" ")}`)
    const rows: Array<Record<string, unknown>> = []
    for (const name of Object.keys(codecs)) {
      const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1]!, "--measure", name, file], { encoding: "utf8", maxBuffer: 1 << 24 })
      const row = JSON.parse(out.trim().split("\n").pop()!) as Record<string, unknown>
      rows.push(row)
      console.log(JSON.stringify(row))
    }
    const f = (value: unknown, digits = 0) => (typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "-")
    console.log("\n| codec | bytes (MB) | encode (ms) | peak RSS encoding (MB, +growth) | decode+restore (ms) | peak RSS decoding (MB, +growth) | heap after decode (MB) | exact round trip |")
    console.log("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (const row of rows) {
      console.log(
        `| ${row.name} | ${f(row.bytesMB, 1)} | ${f(row.encodeMs)} | ${f(row.encodePeakRssMB)} (+${f(row.encodeRssGrowthMB)}) | ${f(row.decodeMs)} | ${f(row.decodePeakRssMB)} (+${f(row.decodeRssGrowthMB)}) | ${f(row.decodeHeapAfterMB)} | ${row.exact === true ? "yes" : `no: ${String(row.problem)}`} |`
      )
    }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}
