/**
 * Fan-out of market changes to subscriptions. The market calls `onChanges` once per folded batch;
 * the hub looks each changed object up in per-channel indexes, encodes it once if some
 * subscription receives it (with the REST encoders; token and trade JSON are kept beside the
 * object there), queues a reference to those bytes on every matching connection, and flushes each
 * touched connection with one write. Every encoding of a batch happens before its first write.
 * No fiber, queue or closure per trade; nothing is encoded per subscriber.
 */
import type { Candle, EngineChanges, Position, PositionEntry, TokenBook, TradeRecord, Trade } from "@spot/domain"
import { Candles, Chain } from "@spot/domain"
import type { MarketShape } from "@spot/application"
import type { Connection, ConnectionOwner, Subscription } from "./Connection.js"
import type { CandlesSpec, ChainSlug, IdentityFeed, SubscriptionSpec, TradesSpec } from "./SubscribeFilters.js"
import { inIdentityFeed, matchesFlags } from "./TradeMatch.js"

/**
 * The REST encoders (adapters-http Encoding, passed by the composition root), so stream and REST
 * bytes are the same. Tokens and trades are encoded once per change and kept on the encoders'
 * side; the other members encode on each call, and the hub calls them once per pushed object.
 */
export interface Encoders {
  readonly tokenJson: (token: TokenBook) => string
  readonly tradeJson: (record: TradeRecord) => string
  /** The trade's REST JSON if a reader already encoded it, else undefined (encodes nothing). */
  readonly encodedTradeJson: (record: TradeRecord) => string | undefined
  /** A trade object's JSON (a form with members left out), encoded with the wire schema, kept nowhere. */
  readonly tradeObjectJson: (trade: Trade) => string
  /** A candle's JSON, encoded with the wire schema, kept nowhere. */
  readonly candleJson: (candle: Candle) => string
  /** A position's JSON, encoded with the wire schema, kept nowhere. */
  readonly positionJson: (position: Position) => string
}

type PerChain<V> = Record<ChainSlug, Map<string, V>>
const perChain = <V>(): PerChain<V> => {
  const out = {} as Record<ChainSlug, Map<string, V>>
  for (const chain of Chain.chains) out[chain] = new Map()
  return out
}

/** Candle subscriptions of one token, grouped by (timeframe, metric, denomination). */
interface CandleToken {
  readonly chain: ChainSlug
  readonly address: string
  readonly groups: Map<string, CandleGroup>
  /**
   * The timestamps of this token's trades in the batch being fanned out: each is counted in the
   * bucket of its own time, a late trade's (older than the token's latest) included.
   */
  readonly batchTimes: Array<number>
}

interface CandleGroup {
  readonly spec: CandlesSpec
  readonly subscriptions: Set<Subscription>
}

const addTo = <K, V>(map: Map<K, Set<V>>, key: K, value: V): void => {
  const set = map.get(key)
  if (set === undefined) map.set(key, new Set([value]))
  else set.add(value)
}

const removeFrom = <K, V>(map: Map<K, Set<V>>, key: K, value: V): void => {
  const set = map.get(key)
  if (set === undefined) return
  set.delete(value)
  if (set.size === 0) map.delete(key)
}

const candleGroupKey = (spec: CandlesSpec) => `${spec.timeframe}|${spec.metric}|${spec.denomination}`

export class StreamHub implements ConnectionOwner {
  readonly connections = new Set<Connection>()
  private readonly tokenSubs = perChain<Set<Subscription>>()
  private readonly candleSubs = perChain<CandleToken>()
  private readonly tradesByToken = perChain<Set<Subscription>>()
  private readonly tradesByWallet = perChain<Set<Subscription>>()
  private readonly tradesByIdentity: Record<IdentityFeed, Set<Subscription>> = { kol: new Set(), partnerscan: new Set() }
  private readonly positionsByWallet = new Map<string, Set<Subscription>>()
  private tokenSubCount = 0
  private candleSubCount = 0
  private tradeSubCount = 0
  private positionSubCount = 0
  private dirty: Array<Connection> = []
  /** The other dirty list, swapped in by each flush (no array per batch). */
  private spare: Array<Connection> = []
  private readonly touchedCandleTokens: Array<CandleToken> = []
  private readonly tradeForms: TradeForms
  private readonly unlisten: () => void

  constructor(private readonly market: MarketShape, private readonly encoders: Encoders) {
    this.tradeForms = new TradeForms(encoders)
    this.unlisten = market.listen((changes) => this.onChanges(changes))
  }

  stop(): void {
    this.unlisten()
  }

  // --- connections and subscriptions ----------------------------------------------------------

  addConnection(connection: Connection): void {
    this.connections.add(connection)
  }

  readonly markDirty = (connection: Connection): void => {
    connection.dirty = true
    this.dirty.push(connection)
  }

  readonly dropConnection = (connection: Connection): void => {
    if (!this.connections.delete(connection)) return
    for (const subscription of connection.subscriptions.values()) this.unindex(subscription)
    connection.subscriptions.clear()
  }

  /** Registers a validated subscription; from now on every change it matches is pushed. */
  subscribe(connection: Connection, spec: SubscriptionSpec): Subscription {
    const id = connection.nextSubscriptionId()
    const prefix = Buffer.from(`{"type":"update","channel":"${spec.channel}","subscriptionId":"${id}","data":`)
    const subscription: Subscription = { id, spec, connection, prefix }
    connection.subscriptions.set(id, subscription)
    this.index(subscription)
    return subscription
  }

  unsubscribe(connection: Connection, id: string): boolean {
    const subscription = connection.subscriptions.get(id)
    if (subscription === undefined) return false
    connection.subscriptions.delete(id)
    this.unindex(subscription)
    return true
  }

  /** Writes what every connection queued since the last flush (one write per connection). */
  flush(): void {
    const dirty = this.dirty
    if (dirty.length === 0) return
    this.dirty = this.spare
    for (let i = 0; i < dirty.length; i++) dirty[i]!.flush()
    dirty.length = 0
    this.spare = dirty
  }

  private index(subscription: Subscription): void {
    const spec = subscription.spec
    switch (spec.channel) {
      case "spot.tokens":
        for (const address of spec.tokens) addTo(this.tokenSubs[spec.chain], address, subscription)
        this.tokenSubCount++
        return
      case "spot.candles": {
        const byToken = this.candleSubs[spec.chain]
        let token = byToken.get(spec.token)
        if (token === undefined) {
          token = { chain: spec.chain, address: spec.token, groups: new Map(), batchTimes: [] }
          byToken.set(spec.token, token)
        }
        const key = candleGroupKey(spec)
        let group = token.groups.get(key)
        if (group === undefined) {
          group = { spec, subscriptions: new Set() }
          token.groups.set(key, group)
        }
        group.subscriptions.add(subscription)
        this.candleSubCount++
        return
      }
      case "spot.trades":
        if (spec.mode === "token") addTo(this.tradesByToken[spec.chain], spec.token, subscription)
        else if (spec.mode === "wallet") addTo(this.tradesByWallet[spec.chain], spec.wallet, subscription)
        else this.tradesByIdentity[spec.identity].add(subscription)
        this.tradeSubCount++
        return
      case "spot.positions":
        for (const wallet of spec.wallets) addTo(this.positionsByWallet, wallet, subscription)
        this.positionSubCount++
        return
    }
  }

  private unindex(subscription: Subscription): void {
    const spec = subscription.spec
    switch (spec.channel) {
      case "spot.tokens":
        for (const address of spec.tokens) removeFrom(this.tokenSubs[spec.chain], address, subscription)
        this.tokenSubCount--
        return
      case "spot.candles": {
        const byToken = this.candleSubs[spec.chain]
        const token = byToken.get(spec.token)
        if (token === undefined) return
        const key = candleGroupKey(spec)
        const group = token.groups.get(key)
        if (group !== undefined) {
          group.subscriptions.delete(subscription)
          if (group.subscriptions.size === 0) token.groups.delete(key)
        }
        if (token.groups.size === 0) byToken.delete(spec.token)
        this.candleSubCount--
        return
      }
      case "spot.trades":
        if (spec.mode === "token") removeFrom(this.tradesByToken[spec.chain], spec.token, subscription)
        else if (spec.mode === "wallet") removeFrom(this.tradesByWallet[spec.chain], spec.wallet, subscription)
        else this.tradesByIdentity[spec.identity].delete(subscription)
        this.tradeSubCount--
        return
      case "spot.positions":
        for (const wallet of spec.wallets) removeFrom(this.positionsByWallet, wallet, subscription)
        this.positionSubCount--
        return
    }
  }

  // --- fan-out --------------------------------------------------------------------------------

  /** One folded batch: trades (and the candles they moved), tokens, positions; then one flush. */
  onChanges(changes: EngineChanges): void {
    if (this.connections.size === 0) return
    if (changes.trades.length > 0 && (this.tradeSubCount > 0 || this.candleSubCount > 0)) this.fanOutTrades(changes.trades)
    if (this.tokenSubCount > 0) this.fanOutTokens(changes.tokens)
    if (this.positionSubCount > 0) this.fanOutPositions(changes.positions)
    this.flush()
  }

  private fanOutTrades(trades: ReadonlyArray<TradeRecord>): void {
    const anyTrades = this.tradeSubCount > 0
    const anyCandles = this.candleSubCount > 0
    const kol = this.tradesByIdentity.kol
    const partnerscan = this.tradesByIdentity.partnerscan
    const forms = this.tradeForms
    for (let i = 0; i < trades.length; i++) {
      const record = trades[i]!
      if (anyCandles) {
        const candleToken = this.candleSubs[record.chain].get(record.token)
        if (candleToken !== undefined) {
          if (candleToken.batchTimes.length === 0) this.touchedCandleTokens.push(candleToken)
          candleToken.batchTimes.push(record.timestamp)
        }
      }
      if (!anyTrades) continue
      // The trade's forms, each made at most once per batch and only if someone receives it.
      forms.reset(record)
      const byToken = this.tradesByToken[record.chain].get(record.token)
      if (byToken !== undefined) {
        for (const subscription of byToken) {
          if (!matchesFlags(record, (subscription.spec as TradesSpec).flags)) continue
          subscription.connection.enqueueUpdate(subscription.prefix, forms.tokenMode())
        }
      }
      const byWallet = this.tradesByWallet[record.chain].get(record.trader)
      if (byWallet !== undefined) {
        for (const subscription of byWallet) {
          if (!matchesFlags(record, (subscription.spec as TradesSpec).flags)) continue
          subscription.connection.enqueueUpdate(subscription.prefix, forms.withoutPlatforms())
        }
      }
      if (kol.size > 0 && inIdentityFeed(record, "kol")) {
        for (const subscription of kol) {
          if (!matchesFlags(record, (subscription.spec as TradesSpec).flags)) continue
          subscription.connection.enqueueUpdate(subscription.prefix, forms.withoutPlatforms())
        }
      }
      if (partnerscan.size > 0 && inIdentityFeed(record, "partnerscan")) {
        for (const subscription of partnerscan) {
          if (!matchesFlags(record, (subscription.spec as TradesSpec).flags)) continue
          subscription.connection.enqueueUpdate(subscription.prefix, forms.withoutPlatforms())
        }
      }
    }
    forms.reset(undefined)
    if (this.touchedCandleTokens.length > 0) this.fanOutCandles()
  }

  /**
   * After a batch's trades: for each subscribed (token, timeframe, metric, denomination), the
   * candle of every bucket the batch's trades were counted in, oldest first — normally just the
   * newest bucket, but a batch that crosses a bucket boundary also closes the previous bucket, and a
   * subscriber must see that bucket's final state to agree with the REST read. A late trade is
   * counted in its own (earlier) bucket, which is pushed again with it.
   */
  private fanOutCandles(): void {
    const engine = this.market.engine
    const encoders = this.encoders
    const touched = this.touchedCandleTokens
    for (let t = 0; t < touched.length; t++) {
      const candleToken = touched[t]!
      const times = candleToken.batchTimes
      const token = engine.token(candleToken.chain, candleToken.address)
      if (token !== undefined) {
        for (const group of candleToken.groups.values()) {
          const { timeframe, metric, denomination } = group.spec
          const latest = token.tape.latestCandle(timeframe, metric, denomination)
          const buckets = bucketsOf(timeframe, times)
          for (let b = 0; b < buckets.length; b++) {
            const bucket = buckets[b]!
            const candle = latest !== undefined && latest.time === bucket
              ? latest
              : token.tape.candles({ timeframe, metric, denomination, from: bucket, to: bucket + Candles.timeframeMs[timeframe] })[0]
            if (candle === undefined) continue
            const data = Buffer.from(encoders.candleJson(candle))
            for (const subscription of group.subscriptions) subscription.connection.enqueueUpdate(subscription.prefix, data)
          }
        }
      }
      times.length = 0
    }
    touched.length = 0
  }

  private fanOutTokens(tokens: ReadonlyArray<TokenBook>): void {
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!
      const subscriptions = this.tokenSubs[token.chain].get(token.address)
      if (subscriptions === undefined) continue
      const data = Buffer.from(this.encoders.tokenJson(token))
      for (const subscription of subscriptions) subscription.connection.enqueueUpdate(subscription.prefix, data)
    }
  }

  private fanOutPositions(positions: ReadonlyArray<PositionEntry>): void {
    const engine = this.market.engine
    for (let i = 0; i < positions.length; i++) {
      const entry = positions[i]!
      const subscriptions = this.positionsByWallet.get(entry.wallet.address)
      if (subscriptions === undefined) continue
      let data: Buffer | undefined
      for (const subscription of subscriptions) {
        const spec = subscription.spec
        if (spec.channel !== "spot.positions" || (spec.chains !== null && !spec.chains.includes(entry.token.chain))) continue
        data ??= Buffer.from(this.encoders.positionJson(engine.positionWire(entry)))
        subscription.connection.enqueueUpdate(subscription.prefix, data)
      }
    }
  }
}

// --- trade forms -----------------------------------------------------------------------------

/**
 * The forms of the trade being fanned out (spec "spot.trades": token mode leaves out `flags` and
 * `platforms`, wallet and identity modes `platforms`), each made at most once per batch and only
 * if some subscription receives it; forms with the same bytes share them (no flags: token mode is
 * the wallet form; no terminal: the wallet form is the REST trade). The REST form is `tradeJson`
 * (encoded once, kept by the REST encoders, shared with REST reads). A form without fields is cut out
 * of that JSON when a reader already made it (no second encoding); otherwise it is encoded alone
 * with the schema, so the stream keeps no JSON on records REST never asked for (identity feeds
 * hold 20,000 trades each). One instance, reset per trade: no object per trade.
 */
class TradeForms {
  private record: TradeRecord | undefined = undefined
  private full: Buffer | undefined = undefined
  private noPlatforms: Buffer | undefined = undefined
  private noFlags: Buffer | undefined = undefined

  constructor(private readonly encoders: Encoders) {}

  reset(record: TradeRecord | undefined): void {
    this.record = record
    this.full = undefined
    this.noPlatforms = undefined
    this.noFlags = undefined
  }

  /** wallet and identity modes */
  withoutPlatforms(): Buffer {
    if (this.noPlatforms === undefined) {
      const record = this.record!
      this.noPlatforms = record.terminal === null
        ? (this.full ??= Buffer.from(this.encoders.tradeJson(record)))
        : tradeForm(record, false, this.encoders)
    }
    return this.noPlatforms
  }

  /** token mode */
  tokenMode(): Buffer {
    if (this.noFlags === undefined) this.noFlags = this.record!.flags.length === 0 ? this.withoutPlatforms() : tradeForm(this.record!, true, this.encoders)
    return this.noFlags
  }
}

/** The trade without `platforms` (and without `flags` when `dropFlags`): cut from the cached REST JSON, or encoded alone. */
const tradeForm = (record: TradeRecord, dropFlags: boolean, encoders: Encoders): Buffer => {
  let text = encoders.encodedTradeJson(record)
  if (text !== undefined) {
    const trade = record.trade
    if (dropFlags && trade.flags !== undefined) text = withoutMember(text, "flags", trade.flags)
    if (trade.platforms !== undefined) text = withoutMember(text, "platforms", trade.platforms)
    if (text !== undefined) return Buffer.from(text)
  }
  return tradeWithout(record, dropFlags, encoders)
}

/**
 * `json` without its member `"name":value`, where `value` is the member's JSON as the encoder
 * wrote it; undefined when that exact text is not there (the caller then encodes the form itself).
 * The first match is the trade's own member: a JSON string cannot hold an unescaped quote, and
 * no object nested before `flags`/`platforms` in a trade has such a member.
 */
const withoutMember = (json: string | undefined, name: string, value: unknown): string | undefined => {
  if (json === undefined) return undefined
  const member = `,"${name}":${JSON.stringify(value)}`
  const at = json.indexOf(member)
  return at < 0 ? undefined : json.slice(0, at) + json.slice(at + member.length)
}

/** The trade object without `platforms` (and without `flags` for token mode), same field order, encoded with its schema. */
const tradeWithout = (record: TradeRecord, dropFlags: boolean, encoders: Encoders): Buffer => {
  // Object rest keeps the other keys in the trade's (the schema's) order, so the compiled check
  // proves the form and it is stringified as it is (a key moved out of place goes to encodeSync).
  const { platforms: _platforms, ...withFlags } = record.trade
  let wire: Omit<Trade, "platforms"> = withFlags
  if (dropFlags) {
    const { flags: _flags, ...withoutFlags } = withFlags
    wire = withoutFlags
  }
  return Buffer.from(encoders.tradeObjectJson(wire as Trade))
}

/** Reused by every `bucketsOf` call (read before the next one). */
const bucketScratch: Array<number> = []

/**
 * Distinct bucket open times of `times` (non-decreasing: each is its trade's counted time),
 * ascending; usually one.
 */
const bucketsOf = (timeframe: Candles.Timeframe, times: ReadonlyArray<number>): ReadonlyArray<number> => {
  const out = bucketScratch
  out.length = 0
  let ordered = true
  for (let i = 0; i < times.length; i++) {
    const bucket = Candles.bucketStart(timeframe, times[i]!)
    const last = out.length === 0 ? undefined : out[out.length - 1]!
    if (last === bucket) continue
    if (last !== undefined && bucket < last) ordered = false
    out.push(bucket)
  }
  if (ordered) return out
  // A late trade: its earlier bucket goes first (oldest first, each once).
  out.sort((a, b) => a - b)
  let kept = 0
  for (let i = 0; i < out.length; i++) if (i === 0 || out[i] !== out[kept - 1]) out[kept++] = out[i]!
  out.length = kept
  return out
}
