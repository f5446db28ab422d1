/**
 * Engine snapshots: the whole state of a {@link MarketEngine} as bytes, and back, through the
 * generic object-graph codec (ObjectGraphCodec.ts). This file is the codec's registry for the
 * engine: the classes whose instances the engine holds, the caches left out, and the module-level
 * objects the engine compares by identity. Nothing here knows a class's fields: a field added to
 * a registered class is picked up by the graph walk; a new class, a new sentinel or a closure in
 * the engine's state makes `snapshot` throw with the path to it (and the tests in
 * packages/adapters-storage/test/snapshot fail), so this list is the one place to update.
 *
 * A snapshot is a cache of `fold(log[1..seq])`, not a second source of truth: the bytes carry a
 * fingerprint of the code that wrote them ({@link fingerprint}) and are refused by other code
 * (the log is then replayed in full, which also gives the new code's rules to all history).
 */
import { createHash } from "node:crypto"
import {
  CandleAggregate,
  CandleHourlySeries,
  CandleHourlySeriesModule,
  Candles,
  canonicalAddress,
  chains,
  defaultEngineOptions,
  Fixed,
  Funding,
  HolderBook,
  Holders,
  MarketEngine,
  MarketEngineModule,
  nativeAsset,
  PackedFunding,
  PositionBook,
  Positions,
  TapeNumbers,
  TextBytes,
  TokenBook,
  TokenBookModule,
  TradeCodes,
  TradeFeed,
  TradeFlagLists,
  TradeRecord,
  TradeRing,
  TradeTape,
  TradeTapeModule,
  unresolvedFunding,
  WalletDirectory,
  WalletRecord,
  Wallets,
  Wide
} from "@spot/domain/engine-state"
import type { EngineOptions } from "@spot/domain/engine-state"
import * as Codec from "./ObjectGraphCodec.js"

export { SnapshotChangedError, SnapshotDecodeError, SnapshotEncodeError, SnapshotRegistryError } from "./ObjectGraphCodec.js"

/**
 * Bump when the engine's fold rules or state change in a way the fingerprint cannot see (it
 * covers the registered classes' code and the exported functions of the engine's modules, not
 * module-private helpers or constants). A bump makes every existing snapshot refused, so the
 * first start after the deploy replays the whole log. Each bump gets its line in docs/storage.md,
 * "Engine state versions".
 */
export const ENGINE_STATE_VERSION = 21

/**
 * The classes of the engine's state. `transient`: caches derived from the rest of the state,
 * rebuilt on first use (the encoded JSON of tokens and trades would otherwise be most of a
 * snapshot's bytes). Every field a read sets must be here: a snapshot in slices
 * ({@link snapshotInSlices}) serves reads between its steps and relies on them changing nothing
 * it writes (the snapshot tests read everything between the steps and compare the bytes).
 */
const classes: ReadonlyArray<Codec.ClassEntry> = [
  { name: "MarketEngine", constructor: MarketEngine, transient: { readRecords: undefined, interned: undefined } },
  { name: "TokenBook", constructor: TokenBook, transient: { cachedWire: undefined } },
  { name: "HolderBook", constructor: HolderBook, transient: { lastWallet: undefined, lastSlot: 0 } },
  { name: "TradeTape", constructor: TradeTape, transient: { statsCache: undefined, latestCaches: undefined, latestPriceFixedOf: NaN, latestPriceFixed: 0n } },
  { name: "CandleHourlySeries", constructor: CandleHourlySeries },
  { name: "TradeRecord", constructor: TradeRecord, transient: { wire: undefined } },
  { name: "TradeRing", constructor: TradeRing },
  { name: "TradeCodes", constructor: TradeCodes, transient: { lastNativeUsd: -1n } },
  { name: "TradeFlagLists", constructor: TradeFlagLists },
  { name: "WalletRecord", constructor: WalletRecord },
  { name: "WalletDirectory", constructor: WalletDirectory },
  { name: "PackedFunding", constructor: PackedFunding },
  { name: "TextBytes", constructor: TextBytes },
  { name: "PositionBook", constructor: PositionBook }
]

/** A private-by-convention field of a probe object, which must exist. */
const field = (owner: object, name: string, ownerName: string): object => {
  const value = (owner as Record<string, unknown>)[name]
  if (typeof value !== "object" || value === null) {
    throw new Codec.SnapshotRegistryError(
      `well-known probe ${ownerName}.${name} found ${value === null ? "null" : typeof value}: the engine changed; update EngineSnapshot.ts`
    )
  }
  return value
}

/**
 * Module-level objects reachable from an engine that code compares by identity (`=== noAddresses`,
 * `!== noValues`) or that every instance shares (`noMoney`, `emptyMetadata`, the frozen wallet-flag
 * lists): restored as the running code's own objects. Most are module-private, so they are read
 * off freshly built probe objects (whose fields start as the sentinels) rather than exported.
 *
 * Not listed on purpose: the trade flag lists an engine interns (TradeFlagLists). They are the
 * engine's own state, restored as frozen lists shared exactly as before (one copy per interned
 * list), and its trade feeds' codes (TradeCodes) refer to those same restored lists.
 */
const wellKnownValues = (): ReadonlyArray<readonly [string, object]> => {
  const out: Array<readonly [string, object]> = []
  const token = new TokenBook("solana", "probe", "probe", 6, 1n, null, false, 0, 0, [], 1) // no curve: its samples are the shared empty list
  out.push(["TokenBook.noMoney", field(token, "athPrice", "TokenBook")])
  out.push(["TokenBook.emptyMetadata", field(token, "metadata", "TokenBook")])
  out.push(["TokenBook.unscored", field(token, "security", "TokenBook")])
  out.push(["TokenBook.noSamples", field(token, "curveSamples", "TokenBook")])
  out.push(["Wallets.unresolvedFunding", unresolvedFunding])
  const wallet = new WalletRecord("solana", "probe")
  out.push(["Wallets.noLabels", field(wallet, "labels", "WalletRecord")])
  out.push(["Wallets.noIdentities", field(wallet, "identities", "WalletRecord")])
  out.push(["Wallets.noPositions", field(wallet, "positionTokens", "WalletRecord")])
  out.push(["Positions.noAddresses", field(new PositionBook("solana", "probe", 6), "addresses", "PositionBook")])
  const tape = new TradeTape()
  out.push(["TradeTape.noValues", field(tape, "values", "TradeTape")])
  out.push(["TradeTape.noVolumes", field(tape, "volumes", "TradeTape")])
  out.push(["TradeTape.noSides", field(tape, "sides", "TradeTape")])
  out.push(["CandleHourlySeries.noEntries", field(new CandleHourlySeries(), "entries", "CandleHourlySeries")])
  out.push(["MarketEngine.defaultEngineOptions", defaultEngineOptions])
  // The frozen wallet-flag list of every group bitmask, shared by all holder books.
  const lists = new Set<object>()
  for (let bits = 0; bits < 128; bits++) {
    const list = Holders.flagListOf(bits)
    if (!Object.isFrozen(list) || lists.has(list) || Holders.flagListOf(bits) !== list) {
      throw new Codec.SnapshotRegistryError("Holders.flagListOf no longer gives one frozen list per bitmask: update EngineSnapshot.ts")
    }
    lists.add(list)
    out.push([`Holders.flags.${bits}`, list])
  }
  return out
}

/** The registry's entries as listed here (tests build variants of it). */
export const registryEntries = (): Codec.CodecRegistry => ({ classes, wellKnown: wellKnownValues() })

let prepared: Codec.PreparedRegistry | undefined
let fingerprintValue: string | undefined

/** The codec registry for the engine (built on first use: probes run then, not at import). */
export const registry = (): Codec.PreparedRegistry => {
  prepared ??= Codec.prepareRegistry({ classes, wellKnown: wellKnownValues() })
  return prepared
}

/** Modules whose exported functions and constants take part in folding. */
const engineModules: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["MarketEngine", MarketEngineModule],
  ["TokenBook", TokenBookModule],
  ["Holders", Holders],
  ["Positions", Positions],
  ["TradeFeed", TradeFeed],
  ["TradeTape", TradeTapeModule],
  ["TapeNumbers", TapeNumbers],
  ["CandleHourlySeries", CandleHourlySeriesModule],
  ["CandleAggregate", CandleAggregate],
  ["Candles", Candles],
  ["Wallets", Wallets],
  ["Funding", Funding],
  ["Wide", Wide],
  ["Fixed", Fixed]
]

/**
 * What identifies the code a snapshot was written by: the codec's format version, the engine
 * state version, the registry (class names, transient fields, well-known names) and the source
 * text of every registered class and of every exported function of the engine's modules (with
 * their exported constants and the chains' native assets). Snapshots written under another
 * fingerprint are refused.
 */
export const fingerprint = (): string => {
  if (fingerprintValue !== undefined) return fingerprintValue
  const parts: Array<string> = [`codec ${Codec.FORMAT_VERSION}`, `engine ${ENGINE_STATE_VERSION}`]
  for (const entry of classes) {
    parts.push(`class ${entry.name} transient ${Object.keys(entry.transient ?? {}).join(",")}`)
    parts.push(Function.prototype.toString.call(entry.constructor))
  }
  for (const [name] of wellKnownValues()) parts.push(`well-known ${name}`)
  for (const [name, module] of engineModules) {
    for (const key of Object.keys(module).sort()) {
      const value = module[key]
      if (typeof value === "function") parts.push(`${name}.${key} ${Function.prototype.toString.call(value)}`)
      else if (typeof value === "number" || typeof value === "string" || typeof value === "bigint" || typeof value === "boolean") {
        parts.push(`${name}.${key} = ${String(value)}`)
      }
    }
  }
  parts.push(`chains ${chains.join(",")}`)
  for (const chain of chains) parts.push(`native ${chain} ${nativeAsset[chain].decimals} ${nativeAsset[chain].address}`)
  parts.push(Function.prototype.toString.call(canonicalAddress))
  fingerprintValue = `engine-v${ENGINE_STATE_VERSION}-${createHash("sha256").update(parts.join("\n"), "utf8").digest("hex").slice(0, 32)}`
  return fingerprintValue
}

export interface SnapshotOptions {
  /** Check every object thoroughly (`ObjectGraphCodec.EncodeOptions.strict`): for tests. */
  readonly strict?: boolean
}

/** What a snapshot holds: the engine (its trade feeds' codes included: TradeCodes). */
interface SnapshotRoot {
  readonly engine: MarketEngine
}

/**
 * The engine's entire state as bytes. Synchronous: call it between two folds (the engine has a
 * single writer). Throws `SnapshotEncodeError` with the path to anything it cannot restore exactly.
 */
export const snapshot = (engine: MarketEngine, options: SnapshotOptions = {}): Uint8Array => {
  const root: SnapshotRoot = { engine }
  return Codec.encode(registry(), root, {
    context: fingerprint(),
    rootName: "snapshot",
    strict: options.strict === true
  })
}

/** How {@link snapshotInSlices} divides its work (see `ObjectGraphCodec.SliceOptions`). */
export interface SliceSettings {
  /**
   * Asked after each part written, with the bytes written in the step so far: true ends the step
   * (default: after 1 MB). A service gives a deadline here (a few milliseconds of its clock).
   */
  readonly endStep?: (bytesInStep: number) => boolean
  /** Size of the chunks the bytes come in (default 16 MB). */
  readonly chunkBytes?: number
}

/**
 * The engine's entire state as bytes, a step at a time: each `next()` of the generator writes
 * parts until `endStep` says so, and the last returns the bytes in chunks (concatenated, bytes `restore`
 * reads). Between two steps the caller may serve reads, but nothing may fold into the engine
 * until the last step (a change the encoder notices throws `SnapshotEncodeError`): a service
 * holds its writers off meanwhile. Every token's book, holder book, tape, trade feed and
 * positions is a body of its own (the slices' granularity), and the bytes are never copied to grow.
 */
export const snapshotInSlices = (
  engine: MarketEngine,
  options: SnapshotOptions & SliceSettings = {}
): Generator<void, ReadonlyArray<Uint8Array>, void> => {
  const root: SnapshotRoot = { engine }
  return Codec.encodeInSlices(registry(), root, {
    context: fingerprint(),
    rootName: "snapshot",
    strict: options.strict === true,
    endStep: options.endStep ?? ((bytes) => bytes >= 1 << 20),
    chunkBytes: options.chunkBytes ?? 16 << 20,
    // the root (0), the engine (1), its fields (2: the maps of tokens, of wallets by chain), each
    // token's book and the directory's map of chains (3), a book's holder book, tape, trade feed
    // and positions, and each chain's map of wallets (4)
    depth: 4
  })
}

const decodeRoot = (bytes: Uint8Array): SnapshotRoot => {
  const { root, rootReferenced } = Codec.decodeGraph(registry(), bytes, fingerprint())
  const candidate = root as Partial<SnapshotRoot> | null
  if (
    typeof candidate !== "object" || candidate === null || !(candidate.engine instanceof MarketEngine)
  ) throw new Codec.SnapshotDecodeError("the snapshot does not hold a market engine")
  if (rootReferenced) throw new Codec.SnapshotDecodeError("the snapshot's root is referenced from inside its own state")
  return candidate as SnapshotRoot
}
/**
 * What a worker thread must share with its process to read and write the process's snapshots:
 * the engine fingerprint. Plain data, to pass to a thread.
 */
export interface ThreadContext {
  readonly fingerprint: string
}

/** This process's {@link ThreadContext}. */
export const threadContext = (): ThreadContext => ({ fingerprint: fingerprint() })

/**
 * In a worker thread started by a process whose engine code is this very code, loaded another
 * way (a second bundle, or another TypeScript loader: the source text of functions, which the
 * fingerprint reads, differs between transpilers; the code does not): takes on the process's
 * fingerprint, so the snapshots the thread reads and writes are the process's.
 */
export const joinThreadContext = (context: ThreadContext): void => {
  fingerprintValue = context.fingerprint
}

/** An engine equivalent to the one `snapshot` was given. Throws `SnapshotDecodeError` on bytes it cannot trust. */
export const restore = (bytes: Uint8Array): MarketEngine => {
  return decodeRoot(bytes).engine
}

const sameOptions = (a: EngineOptions, b: EngineOptions): boolean =>
  a.tapeRetainMs === b.tapeRetainMs && a.recentTradesPerToken === b.recentTradesPerToken && a.identityFeedSize === b.identityFeedSize

/**
 * Restores into an existing, still empty engine (one that readers already hold), which then
 * carries the snapshot's state. Refused, leaving `target` untouched, when the bytes cannot be
 * trusted, when `target` already folded something, or when its options differ from the
 * snapshot's (ring sizes and retention are part of the state).
 */
export const restoreInto = (target: MarketEngine, bytes: Uint8Array): void => {
  const stats = target.stats
  if (stats.events !== 0 || stats.tokens !== 0 || stats.wallets !== 0) {
    throw new Codec.SnapshotDecodeError("restoreInto needs an engine that has folded nothing")
  }
  const root = decodeRoot(bytes)
  const restored = root.engine
  if (!sameOptions(restored.options, target.options)) {
    throw new Codec.SnapshotDecodeError(
      `the snapshot's engine options ${JSON.stringify(restored.options)} differ from this engine's ${JSON.stringify(target.options)}`
    )
  }
  const source = restored as unknown as Record<string, unknown>
  const into = target as unknown as Record<string, unknown>
  const keys = Object.keys(source)
  const targetKeys = Object.keys(into)
  if (keys.length !== targetKeys.length || keys.some((key, i) => targetKeys[i] !== key)) {
    throw new Codec.SnapshotDecodeError("the snapshot's engine fields differ from this engine's")
  }
  for (const key of keys) into[key] = source[key]
}

/** The format version and fingerprint a snapshot was written with, without decoding it. */
export const describe = (bytes: Uint8Array): Codec.SnapshotHeader => Codec.peekHeader(bytes)
