/**
 * Trades as the API serves them: one immutable record per swap (built once, encoded once for the
 * streams), kept in bounded newest-first feeds — one per token and one per identity feed (`kol`,
 * `partnerscan`) — as columns, records being rebuilt when read. Deeper history than a feed holds
 * is the storage layer's to serve.
 */
import type { Chain } from "../Chain.js"
import { nativeAsset } from "../Chain.js"
import * as Fixed from "../Fixed.js"
import type { IdentityProfile } from "../wire/Common.js"
import type { Trade } from "../wire/Trade.js"
import * as Wide from "./Wide.js"

/** Figures of one trade as folded; the wire object is built from them. */
export interface TradeFacts {
  /** The trade id (`tradeIdOf` of the swap event's id). */
  readonly tradeId: string
  readonly chain: Chain
  readonly token: string
  readonly name: string
  readonly symbol: string
  readonly trader: string
  readonly transactionHash: string
  readonly side: "buy" | "sell"
  readonly amount: Fixed.Fixed
  readonly priceNative: Fixed.Fixed
  readonly priceUsd: Fixed.Fixed
  readonly valueNative: Fixed.Fixed
  readonly valueUsd: Fixed.Fixed
  readonly marketCapNative: Fixed.Fixed
  readonly marketCapUsd: Fixed.Fixed
  /** The trader's flags at trade time. */
  readonly flags: ReadonlyArray<string>
  /** Terminal the swap routed through, or null. */
  readonly terminal: string | null
  readonly identities: ReadonlyArray<IdentityProfile>
  readonly timestamp: number
}

/** What a trade keeps of its token: the token book itself (these fields never change). */
export interface TradedToken {
  readonly chain: Chain
  readonly address: string
  readonly decimals: number
}

/**
 * The token as a trade saw it: its fixed facts, total supply (base units) and metadata at trade
 * time. One object per token, replaced (never mutated) when its supply or metadata changes, so
 * every trade between two changes shares it.
 */
export interface TradeContext {
  readonly token: TradedToken
  readonly supply: bigint
  readonly metadata: { readonly name: string; readonly symbol: string }
}

/**
 * One trade as the API serves it. Immutable, and small: it keeps only the swap's inputs plus
 * references shared with the rest of the engine (the token's address, name, symbol and supply at
 * trade time, the wallet's address and identities, the chain's native USD price, an interned flag
 * list), and derives every decimal figure of the wire object on first use — most trades are never
 * read one by one. The derivation is the arithmetic the engine folds with, so the figures are the
 * same exact values. A record never changes: an encoder may keep its encoding beside it, keyed by
 * the record, for as long as the record lives.
 */
export class TradeRecord {
  private wire: Trade | undefined = undefined

  constructor(
    /** Engine-assigned, strictly increasing across all trades: the keyset tie-break. */
    readonly seq: number,
    /** The stable opaque trade id (`tradeIdOf` of the swap event's id). */
    readonly id: string,
    /** The traded token, its supply and metadata at trade time (shared with the token's other trades). */
    readonly context: TradeContext,
    readonly trader: string,
    readonly transactionHash: string,
    readonly side: "buy" | "sell",
    /** Token base units traded. */
    readonly tokenAmount: bigint,
    /** Value of the swap in the chain's native base units. */
    readonly nativeAmount: bigint,
    /** USD per whole native unit at execution. */
    readonly nativeUsd: Fixed.Fixed,
    /** The trader's flags at trade time (a shared frozen list). */
    readonly flags: ReadonlyArray<string>,
    /** Terminal the swap routed through, or null. */
    readonly terminal: string | null,
    readonly identities: ReadonlyArray<IdentityProfile>,
    readonly timestamp: number,
    /** The id's two 53-bit halves when known (`tradeIdHalves`), NaN otherwise: feeds store these. */
    readonly idA = NaN,
    readonly idB = NaN
  ) {}

  get chain(): Chain {
    return this.context.token.chain
  }
  get token(): string {
    return this.context.token.address
  }
  get decimals(): number {
    return this.context.token.decimals
  }
  get supply(): bigint {
    return this.context.supply
  }
  get name(): string {
    return this.context.metadata.name
  }
  get symbol(): string {
    return this.context.metadata.symbol
  }

  /** The full trade object (REST form, with flags and platforms). */
  get trade(): Trade {
    if (this.wire === undefined) this.wire = tradeWire(this.facts)
    return this.wire
  }

  /** The trade's figures, derived exactly as the engine computed them when it folded the swap. */
  get facts(): TradeFacts {
    const valueNative = Fixed.fromBaseUnits(this.nativeAmount, nativeAsset[this.chain].decimals)
    const valueUsd = Fixed.mul(valueNative, this.nativeUsd)
    const amount = Fixed.fromBaseUnits(this.tokenAmount, this.decimals)
    const priceNative = Fixed.div(valueNative, amount)
    // USD figures from the native value and the rate, rounded once (as MarketEngine.onSwap does)
    const priceUsd = Fixed.mulDiv(valueNative, this.nativeUsd, amount)
    const supply = Fixed.fromBaseUnits(this.supply, this.decimals)
    return {
      tradeId: this.id,
      chain: this.chain,
      token: this.token,
      name: this.name,
      symbol: this.symbol,
      trader: this.trader,
      transactionHash: this.transactionHash,
      side: this.side,
      amount,
      priceNative,
      priceUsd,
      valueNative,
      valueUsd,
      marketCapNative: Fixed.mulDiv(valueNative, supply, amount),
      marketCapUsd: Fixed.usdAtTrade(supply, valueNative, this.nativeUsd, amount),
      flags: this.flags,
      terminal: this.terminal,
      identities: this.identities,
      timestamp: this.timestamp
    }
  }
}

/**
 * Trades as the trade archive stores them (docs/storage.md, "Trade history"): one JSON array of
 * one array per trade, newest first, holding the record's inputs, its place in the feed (time,
 * seq) and its token's facts at trade time — not its chain and token, which are the archive row's
 * own. Cheap to make on the write path; `tradesFromArchive` rebuilds the same records, so the wire
 * objects and their JSON are the same as from memory.
 */
export const tradesToArchive = (records: ReadonlyArray<TradeRecord>): string => {
  const rows = new Array<unknown>(records.length)
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!
    rows[i] = [
      r.seq,
      r.timestamp,
      r.id,
      r.trader,
      r.transactionHash,
      r.side,
      r.tokenAmount.toString(),
      r.nativeAmount.toString(),
      r.nativeUsd.toString(),
      r.flags,
      r.terminal,
      r.identities,
      r.context.token.decimals,
      r.context.supply.toString(),
      r.context.metadata.name,
      r.context.metadata.symbol
    ]
  }
  return JSON.stringify([ARCHIVE_FORMAT, rows])
}

/** The archive text's format tag: texts of another format are refused, never misread. */
const ARCHIVE_FORMAT = 2

type ArchivedRow = [
  number,
  number,
  string,
  string,
  string,
  "buy" | "sell",
  string,
  string,
  string,
  Array<string>,
  string | null,
  Array<IdentityProfile>,
  number,
  string,
  string,
  string
]

/** The records `tradesToArchive` stored for a token of `chain`, in the same order. */
export const tradesFromArchive = (chain: Chain, token: string, text: string): Array<TradeRecord> => {
  const parsed = JSON.parse(text) as [number, Array<ArchivedRow>]
  if (parsed[0] !== ARCHIVE_FORMAT) throw new Error(`archived trades of ${chain}:${token}: unknown format ${String(parsed[0])}`)
  const rows = parsed[1]
  const records = new Array<TradeRecord>(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const f = rows[i]!
    const context: TradeContext = {
      token: { chain, address: token, decimals: f[12] },
      supply: BigInt(f[13]),
      metadata: { name: f[14], symbol: f[15] }
    }
    records[i] = new TradeRecord(f[0], f[2], context, f[3], f[4], f[5], BigInt(f[6]), BigInt(f[7]), BigInt(f[8]), f[9], f[10], f[11], f[1])
  }
  return records
}

const money = (native: Fixed.Fixed, usd: Fixed.Fixed) => ({ native: Fixed.format(native), usd: Fixed.format(usd) })

/**
 * The stable opaque trade id of a swap event: derived from the event identity, never parsed.
 * "t" + two independent 53-bit cyrb53 hashes (seeds 1 and 2) in base 36, 11 digits each. Both
 * hashes are taken in one pass and the id is spelled straight into one flat string, since the
 * engine computes one per swap.
 */
export const tradeIdOf = (eventId: string): string => {
  tradeIdHalves(eventId, halvesScratch)
  return spellTradeId(halvesScratch[0]!, halvesScratch[1]!)
}

/** The first 53-bit half of the trade-id hash of `text` (a stable integer key for any string). */
export const stableKeyOf = (text: string): number => {
  tradeIdHalves(text, halvesScratch)
  return halvesScratch[0]!
}

/** Scratch of `tradeIdOf` and `stableKeyOf`: written and read within one call, nothing kept between calls. */
const halvesScratch = new Float64Array(2)

/** Computes the two 53-bit halves of the trade id of `eventId` into `out[0]` and `out[1]`. */
export const tradeIdHalves = (eventId: string, out: Float64Array): void => {
  let a1 = 0xdeadbeef ^ 1
  let a2 = 0x41c6ce57 ^ 1
  let b1 = 0xdeadbeef ^ 2
  let b2 = 0x41c6ce57 ^ 2
  for (let i = 0; i < eventId.length; i++) {
    const ch = eventId.charCodeAt(i)
    a1 = Math.imul(a1 ^ ch, 2654435761)
    a2 = Math.imul(a2 ^ ch, 1597334677)
    b1 = Math.imul(b1 ^ ch, 2654435761)
    b2 = Math.imul(b2 ^ ch, 1597334677)
  }
  out[0] = finishCyrb53(a1, a2)
  out[1] = finishCyrb53(b1, b2)
}

/** The trade id of the two 53-bit halves `a` and `b`: "t" and 11 base-36 digits of each. */
export const spellTradeId = (a: number, b: number): string => {
  idCodesScratch[0] = 116 // "t"
  spellBase36(a, 1)
  spellBase36(b, 12)
  return String.fromCharCode.apply(null, idCodesScratch)
}

const finishCyrb53 = (h1: number, h2: number): number => {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

/** Whether `trade` sorts strictly before (timestamp, seq) in (timestamp, seq) order: the keyset rule of every trade feed. */
export const isOlderThan = (trade: { readonly timestamp: number; readonly seq: number }, timestamp: number, seq: number): boolean =>
  trade.timestamp < timestamp || (trade.timestamp === timestamp && trade.seq < seq)

/** Scratch of `spellTradeId`: the character codes of the id being spelled, filled and read within one call. */
const idCodesScratch: Array<number> = new Array<number>(23).fill(48)

/** 36^6 and 36^2: `value` is split so each part's digits come from small-integer arithmetic. */
const BASE36_6 = 2_176_782_336
const BASE36_2 = 1_296

/** Writes `value` (< 2^53 < 36^11) as 11 base-36 digits, zero-padded, at `at`. */
const spellBase36 = (value: number, at: number): void => {
  const high = Math.floor(value / BASE36_6) // < 36^5
  const low = value - high * BASE36_6 // < 36^6
  const lowHigh = Math.floor(low / BASE36_2) // < 36^4
  spellDigits(low - lowHigh * BASE36_2, at + 9, 2)
  spellDigits(lowHigh, at + 5, 4)
  spellDigits(high, at, 5)
}

/** `count` base-36 digits of the small integer `value`, zero-padded, at `at`. */
const spellDigits = (value: number, at: number, count: number): void => {
  let rest = value | 0
  for (let i = at + count - 1; i >= at; i--) {
    const digit = rest % 36
    idCodesScratch[i] = digit < 10 ? 48 + digit : 87 + digit
    rest = (rest / 36) | 0
  }
}

export const tradeWire = (f: TradeFacts): Trade => ({
  id: f.tradeId,
  chain: f.chain,
  token: f.token,
  name: f.name,
  symbol: f.symbol,
  trader: f.trader,
  transactionHash: f.transactionHash,
  side: f.side,
  amount: Fixed.format(f.amount),
  price: money(f.priceNative, f.priceUsd),
  volume: money(f.valueNative, f.valueUsd),
  marketCap: money(f.marketCapNative, f.marketCapUsd),
  ...(f.flags.length > 0 ? { flags: [...f.flags] } : {}),
  ...(f.terminal !== null ? { platforms: [{ platform: f.terminal }] } : {}),
  ...(f.identities.length > 0 ? { identities: [...f.identities] } : {}),
  timestamp: f.timestamp
})


// Ring layout. `numbers` (Float64Array), per trade: seq, timestamp, the two halves of the trade id,
// side (1: sell), the transaction hash's length, the terminal's and the flag list's codes, token
// amount, native amount and native USD price as wide integers. `hashes` (Uint8Array): the
// transaction hash's characters (Latin-1), up to TX_BYTES. `refs` (Array), per trade: the trade
// context and the trader — shared objects only, so a trade costs no object of its own while it sits
// in a feed. The trader's identities when it has any (few do), and an id, hash, terminal or flag
// list that does not fit the columns, go to `unusual`.
const N_SEQ = 0
const N_TIME = 1
const N_ID_A = 2
const N_ID_B = 3
const N_SIDE = 4
const N_TX_LENGTH = 5
const N_TERMINAL = 6
const N_FLAGS = 7
const N_TOKEN_AMOUNT = 8
const N_NATIVE_AMOUNT = N_TOKEN_AMOUNT + Wide.LIMBS
const N_NATIVE_USD = N_NATIVE_AMOUNT + Wide.LIMBS
const N_STRIDE = N_NATIVE_USD + Wide.LIMBS
const TX_BYTES = 88
const R_CONTEXT = 0
const R_TRADER = 1
const R_STRIDE = 2
/** Bytes of one row's numbers and hash (one buffer holds both columns). */
const ROW_BYTES = N_STRIDE * 8 + TX_BYTES

const ID_DIGITS = 11
const idPattern = /^t[0-9a-z]{22}$/

const MAX_TERMINALS = 4_096
const MAX_FLAG_LISTS = 65_536
const flagListText = (flags: ReadonlyArray<string>): string => flags.join("\n")

/**
 * One engine's numbering of the terminals and flag lists its trade feeds store as codes: a ring's
 * columns hold the codes, this table their meaning. The engine creates one and hands it to each of
 * its rings, so two engines in one process number independently; a snapshot carries it with the
 * engine's rings, and the codes mean the same after a restore in any process. Both tables are
 * bounded: past them a row keeps its text in `unusual` (code -1).
 */
export class TradeCodes {
  /** Terminal names by code (0: none); a handful of venues. */
  private readonly terminalNames: Array<string | null> = [null]
  private readonly terminalCodes = new Map<string, number>()
  /** Flag lists by code; the engine interns them (one frozen list per combination). */
  private readonly flagLists: Array<ReadonlyArray<string>> = []
  /** Codes by list object (the engine's interned lists: one look-up per trade)... */
  private readonly flagCodes = new Map<ReadonlyArray<string>, number>()
  /** ...and by content, for a list object met for the first time (a list past the engine's interning bound). */
  private readonly flagCodesByText = new Map<string, number>()
  /** The last USD price a row took, and its limbs: one price serves a chain's swaps until it moves (a cache). */
  private lastNativeUsd = -1n
  private readonly lastNativeUsdLimbs = new Float64Array(Wide.LIMBS)

  /** The code of `terminal` (0: null), numbered on first use; -1 once the table is full. */
  terminalCodeOf(terminal: string | null): number {
    if (terminal === null) return 0
    let code = this.terminalCodes.get(terminal)
    if (code === undefined) {
      if (this.terminalNames.length > MAX_TERMINALS) return -1
      code = this.terminalNames.length
      this.terminalNames.push(terminal)
      this.terminalCodes.set(terminal, code)
    }
    return code
  }

  terminalOf(code: number): string | null {
    return this.terminalNames[code]!
  }

  /** The code of `flags`, numbered on first use; -1 once the table is full. */
  flagCodeOf(flags: ReadonlyArray<string>): number {
    let code = this.flagCodes.get(flags)
    if (code === undefined) {
      const text = flagListText(flags)
      code = this.flagCodesByText.get(text)
      if (code === undefined) {
        if (this.flagLists.length >= MAX_FLAG_LISTS) return -1
        code = this.flagLists.length
        this.flagLists.push(flags)
        this.flagCodesByText.set(text, code)
      }
      this.flagCodes.set(flags, code)
    }
    return code
  }

  flagListOf(code: number): ReadonlyArray<string> {
    return this.flagLists[code]!
  }

  /** Writes `usd` as wide-integer limbs at `at` (split once per distinct price). */
  writeNativeUsd(numbers: Float64Array, at: number, usd: Fixed.Fixed): void {
    const limbs = this.lastNativeUsdLimbs
    if (usd !== this.lastNativeUsd) {
      Wide.write(limbs, 0, usd)
      this.lastNativeUsd = usd
    }
    numbers[at] = limbs[0]!
    numbers[at + 1] = limbs[1]!
    numbers[at + 2] = limbs[2]!
  }
}

const noIdentities: ReadonlyArray<IdentityProfile> = Object.freeze([])

/** What a row keeps outside its columns: identities, and ids, hashes, terminals or flags of unusual shape. */
interface UnusualTexts {
  id?: string
  transactionHash?: string
  terminal?: string
  flags?: ReadonlyArray<string>
  identities?: ReadonlyArray<IdentityProfile>
}
/**
 * Trade records already built from ring rows, by seq, so that a page read again hands out the same
 * objects (which encoders find already encoded) instead of building each record anew from
 * its columns: the rings keep columns, not objects, and the newest trades are read over and over.
 * A seq names one trade of one engine, and a trade never changes, so one cache serves all of an
 * engine's rings. Bounded: past `capacity` the records built first are forgotten.
 */
export class ReadRecords {
  private readonly bySeq = new Map<number, TradeRecord>()

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.bySeq.size
  }

  get(seq: number): TradeRecord | undefined {
    return this.bySeq.get(seq)
  }

  remember(record: TradeRecord): void {
    if (this.bySeq.size >= this.capacity) {
      // Map iteration follows insertion order: the first key was built first.
      this.bySeq.delete(this.bySeq.keys().next().value!)
    }
    this.bySeq.set(record.seq, record)
  }
}

/**
 * Trades a push moved out of a ring that hands its history on (`evictBlock` > 0), newest first:
 * either the oldest `evictBlock` trades it held (`late` false: each such block is older than
 * everything still held, so a ring's blocks never overlap), or the pushed trade itself, when it
 * was older than every trade a full ring held (`late` true: it may sort among earlier blocks).
 */
export interface LeftRing {
  readonly late: boolean
  readonly trades: ReadonlyArray<TradeRecord>
}

/**
 * A bounded ring of trades, read newest first, in (timestamp, seq) order. When full, the oldest
 * trade is dropped — or, with `evictBlock` > 0, the oldest `evictBlock` trades leave together and
 * `push` returns them (a token's feed: its history continues in the trade archive, which then
 * stores one row per block instead of one per trade).
 */
export class TradeRing {
  private numbers: Float64Array
  private hashes: Uint8Array
  private refs: Array<unknown>
  private unusual: Map<number, UnusualTexts> | undefined = undefined
  private capacityNow: number
  private head = 0 // row of the next write
  private count = 0
  /** Whether a push ever dropped the oldest trade (the feed no longer holds all its trades). */
  private droppedAny = false
  /** With `evictBlock`: the newest trade that left in a block, (timestamp, seq). */
  private leftTime = 0
  private leftSeq = 0

  constructor(
    /** The engine's codes for the terminal and flag list columns (shared by all of its rings). */
    private readonly codes: TradeCodes,
    private readonly capacity: number,
    initial = Math.min(capacity, 8),
    private readonly evictBlock = 0
  ) {
    this.capacityNow = initial
    const buffer = new ArrayBuffer(initial * ROW_BYTES)
    this.numbers = new Float64Array(buffer, 0, initial * N_STRIDE)
    this.hashes = new Uint8Array(buffer, initial * N_STRIDE * 8, initial * TX_BYTES)
    this.refs = new Array(initial * R_STRIDE)
  }

  get size(): number {
    return this.count
  }

  /** True once a push has dropped the oldest trade: older trades exist that the ring no longer holds. */
  get dropped(): boolean {
    return this.droppedAny
  }

  /** Adds a trade; what it moved out of the ring when the ring hands its history on, else undefined. */
  push(record: TradeRecord): LeftRing | undefined {
    let left: LeftRing | undefined = undefined
    if (this.evictBlock > 0 && this.droppedAny && isOlderThan(record, this.leftTime, this.leftSeq)) {
      // Older than a trade that already left: it belongs past memory, beside the blocks.
      return { late: true, trades: [record] }
    }
    if (this.count === this.capacity) {
      this.droppedAny = true
      if (this.evictBlock === 0) {
        // Full: the oldest trade goes. A late arrival older than every trade held is that one, so
        // every trade a full ring has dropped is older than every trade it holds.
        const oldest = this.row(this.count - 1) * N_STRIDE
        if (isOlderThan(record, this.numbers[oldest + N_TIME]!, this.numbers[oldest + N_SEQ]!)) return undefined
      } else {
        // Full: the block is the oldest `evictBlock` of the trades held and this one (when this
        // one is among them, it leaves with the block instead of entering). Every trade that
        // left is then older than every trade held (pages continue in the trade archive
        // strictly past the oldest held), and each block is newer than the blocks before it.
        const n = Math.min(this.evictBlock, this.count)
        const newestLeaving = this.row(this.count - n) * N_STRIDE
        let trades: Array<TradeRecord>
        const leavesWithBlock = isOlderThan(record, this.numbers[newestLeaving + N_TIME]!, this.numbers[newestLeaving + N_SEQ]!)
        if (leavesWithBlock) {
          trades = this.evictOldest(n - 1)
          let at = 0
          while (at < trades.length && !isOlderThan(trades[at]!, record.timestamp, record.seq)) at++
          trades.splice(at, 0, record)
        } else trades = this.evictOldest(n)
        this.leftTime = trades[0]!.timestamp
        this.leftSeq = trades[0]!.seq
        left = { late: false, trades }
        if (leavesWithBlock) return left
      }
    } else if (this.count === this.capacityNow) this.grow() // full below `capacity`
    this.write(this.head, record)
    this.head = (this.head + 1) % this.capacityNow
    if (this.count < this.capacity) this.count++
    // A late arrival (older than the newest held) moves back to its place in (timestamp, seq) order.
    for (let i = 0; i + 1 < this.count && this.isNewer(this.row(i + 1), this.row(i)); i++) this.swap(this.row(i), this.row(i + 1))
    return left
  }

  /** Removes the `n` oldest trades, returning them newest first (their rows are free for the next writes). */
  private evictOldest(n: number): Array<TradeRecord> {
    const out = new Array<TradeRecord>(n)
    const first = this.count - n
    for (let i = 0; i < n; i++) out[i] = this.read(this.row(first + i))
    this.count = first
    return out
  }

  /** i-th newest trade (0 = newest). */
  at(i: number): TradeRecord {
    return this.read(this.row(i))
  }

  /**
   * Up to `limit` trades strictly older than (timestamp, seq) — or from the newest when `after` is
   * null — newest first, and whether more remain; `keep` narrows by the traded token's chain.
   * With `built`, records already built for earlier reads are handed out again (and new ones kept).
   */
  page(
    after: { readonly timestamp: number; readonly seq: number } | null,
    limit: number,
    keep?: (chain: Chain) => boolean,
    built?: ReadRecords
  ): { readonly records: Array<TradeRecord>; readonly hasMore: boolean } {
    let i = 0
    const numbers = this.numbers
    if (after !== null) {
      // rows are in (timestamp, seq) order; binary search the first strictly older one
      let lo = 0
      let hi = this.count
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        const at = this.row(mid) * N_STRIDE
        const time = numbers[at + N_TIME]!
        const older = time < after.timestamp || (time === after.timestamp && numbers[at + N_SEQ]! < after.seq)
        if (older) hi = mid
        else lo = mid + 1
      }
      i = lo
    }
    const records: Array<TradeRecord> = []
    for (; i < this.count; i++) {
      const row = this.row(i)
      if (keep !== undefined && !keep((this.refs[row * R_STRIDE + R_CONTEXT] as TradeContext).token.chain)) continue
      if (records.length === limit) return { records, hasMore: true }
      records.push(built === undefined ? this.read(row) : this.readVia(built, row))
    }
    return { records, hasMore: false }
  }

  private row(i: number): number {
    const n = this.capacityNow
    return (this.head - 1 - i + n * 2) % n
  }

  private isNewer(a: number, b: number): boolean {
    const numbers = this.numbers
    const timeA = numbers[a * N_STRIDE + N_TIME]!
    const timeB = numbers[b * N_STRIDE + N_TIME]!
    return timeA > timeB || (timeA === timeB && numbers[a * N_STRIDE + N_SEQ]! > numbers[b * N_STRIDE + N_SEQ]!)
  }

  private swap(a: number, b: number): void {
    const numbers = this.numbers
    for (let k = 0; k < N_STRIDE; k++) {
      const t = numbers[a * N_STRIDE + k]!
      numbers[a * N_STRIDE + k] = numbers[b * N_STRIDE + k]!
      numbers[b * N_STRIDE + k] = t
    }
    const hashes = this.hashes
    for (let k = 0; k < TX_BYTES; k++) {
      const t = hashes[a * TX_BYTES + k]!
      hashes[a * TX_BYTES + k] = hashes[b * TX_BYTES + k]!
      hashes[b * TX_BYTES + k] = t
    }
    const refs = this.refs
    for (let k = 0; k < R_STRIDE; k++) {
      const t = refs[a * R_STRIDE + k]
      refs[a * R_STRIDE + k] = refs[b * R_STRIDE + k]
      refs[b * R_STRIDE + k] = t
    }
    const unusual = this.unusual
    if (unusual !== undefined) {
      const ua = unusual.get(a)
      const ub = unusual.get(b)
      unusual.delete(a)
      unusual.delete(b)
      if (ub !== undefined) unusual.set(a, ub)
      if (ua !== undefined) unusual.set(b, ua)
    }
  }

  /**
   * Unrolls the ring oldest first into columns twice (at most `capacity`) as large. The ring grows
   * only when full, so its rows oldest first are two runs (`head` to the end, then the start to
   * `head`): each column is copied in two slices, not row by row (a view per row cost more than
   * the copy).
   */
  private grow(): void {
    const size = Math.min(this.capacity, this.capacityNow * 2)
    const n = this.capacityNow
    // One backing store for both columns (a typed-array allocation costs more than its bytes).
    const buffer = new ArrayBuffer(size * ROW_BYTES)
    const numbers = new Float64Array(buffer, 0, size * N_STRIDE)
    const hashes = new Uint8Array(buffer, size * N_STRIDE * 8, size * TX_BYTES)
    const refs = new Array<unknown>(size * R_STRIDE)
    const start = this.head // the oldest row of a full ring
    const firstRun = n - start
    numbers.set(this.numbers.subarray(start * N_STRIDE))
    numbers.set(this.numbers.subarray(0, start * N_STRIDE), firstRun * N_STRIDE)
    hashes.set(this.hashes.subarray(start * TX_BYTES))
    hashes.set(this.hashes.subarray(0, start * TX_BYTES), firstRun * TX_BYTES)
    const oldRefs = this.refs
    for (let i = 0; i < n; i++) {
      const from = ((start + i) % n) * R_STRIDE
      for (let k = 0; k < R_STRIDE; k++) refs[i * R_STRIDE + k] = oldRefs[from + k]
    }
    if (this.unusual !== undefined) {
      const unusual = new Map<number, UnusualTexts>()
      for (const [row, texts] of this.unusual) unusual.set((row - start + n) % n, texts)
      this.unusual = unusual
    }
    this.numbers = numbers
    this.hashes = hashes
    this.refs = refs
    this.capacityNow = size
    this.head = n % size
  }

  private write(row: number, r: TradeRecord): void {
    const numbers = this.numbers
    const at = row * N_STRIDE
    numbers[at + N_SEQ] = r.seq
    numbers[at + N_TIME] = r.timestamp
    numbers[at + N_SIDE] = r.side === "sell" ? 1 : 0
    Wide.write(numbers, at + N_TOKEN_AMOUNT, r.tokenAmount)
    Wide.write(numbers, at + N_NATIVE_AMOUNT, r.nativeAmount)
    const codes = this.codes
    codes.writeNativeUsd(numbers, at + N_NATIVE_USD, r.nativeUsd)
    const refs = this.refs
    const ref = row * R_STRIDE
    refs[ref + R_CONTEXT] = r.context
    refs[ref + R_TRADER] = r.trader
    this.unusual?.delete(row)
    let texts: UnusualTexts | undefined
    if (r.identities.length > 0) texts = { identities: r.identities }
    const flags = codes.flagCodeOf(r.flags)
    numbers[at + N_FLAGS] = flags
    if (flags < 0) texts = { ...texts, flags: r.flags }
    const terminal = codes.terminalCodeOf(r.terminal)
    numbers[at + N_TERMINAL] = terminal
    if (terminal < 0) texts = { ...texts, terminal: r.terminal! }
    // The id's two halves as numbers when it is one `tradeIdOf` spelled; its text otherwise.
    if (!Number.isNaN(r.idA)) {
      numbers[at + N_ID_A] = r.idA
      numbers[at + N_ID_B] = r.idB
    } else if (idPattern.test(r.id)) {
      numbers[at + N_ID_A] = parseInt(r.id.slice(1, 1 + ID_DIGITS), 36)
      numbers[at + N_ID_B] = parseInt(r.id.slice(1 + ID_DIGITS), 36)
    } else {
      numbers[at + N_ID_A] = NaN
      texts = { ...texts, id: r.id }
    }
    // The hash's characters when they are all Latin-1 and fit; its text otherwise.
    const tx = r.transactionHash
    let fits = tx.length <= TX_BYTES
    const hashes = this.hashes
    const base = row * TX_BYTES
    for (let k = 0; fits && k < tx.length; k++) {
      const code = tx.charCodeAt(k)
      if (code > 255) fits = false
      else hashes[base + k] = code
    }
    numbers[at + N_TX_LENGTH] = fits ? tx.length : -1
    if (!fits) texts = { ...texts, transactionHash: tx }
    if (texts !== undefined) {
      if (this.unusual === undefined) this.unusual = new Map()
      this.unusual.set(row, texts)
    }
  }

  private readVia(built: ReadRecords, row: number): TradeRecord {
    const known = built.get(this.numbers[row * N_STRIDE + N_SEQ]!)
    if (known !== undefined) return known
    const record = this.read(row)
    built.remember(record)
    return record
  }

  private read(row: number): TradeRecord {
    const numbers = this.numbers
    const at = row * N_STRIDE
    const refs = this.refs
    const ref = row * R_STRIDE
    const texts = this.unusual?.get(row)
    const txLength = numbers[at + N_TX_LENGTH]!
    const transactionHash =
      txLength < 0
        ? texts!.transactionHash!
        : String.fromCharCode.apply(null, this.hashes.subarray(row * TX_BYTES, row * TX_BYTES + txLength) as unknown as Array<number>)
    const terminal = numbers[at + N_TERMINAL]!
    return new TradeRecord(
      numbers[at + N_SEQ]!,
      Number.isNaN(numbers[at + N_ID_A]!) ? texts!.id! : spellTradeId(numbers[at + N_ID_A]!, numbers[at + N_ID_B]!),
      refs[ref + R_CONTEXT] as TradeContext,
      refs[ref + R_TRADER] as string,
      transactionHash,
      numbers[at + N_SIDE] === 1 ? "sell" : "buy",
      Wide.read(numbers, at + N_TOKEN_AMOUNT),
      Wide.read(numbers, at + N_NATIVE_AMOUNT),
      Wide.read(numbers, at + N_NATIVE_USD),
      numbers[at + N_FLAGS]! < 0 ? texts!.flags! : this.codes.flagListOf(numbers[at + N_FLAGS]!),
      terminal < 0 ? texts!.terminal! : this.codes.terminalOf(terminal),
      texts?.identities ?? noIdentities,
      numbers[at + N_TIME]!,
      numbers[at + N_ID_A]!,
      numbers[at + N_ID_B]!
    )
  }
}
