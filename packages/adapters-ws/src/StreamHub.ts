/**
 * Fan-out of market changes to subscriptions. The market calls `onChanges` once per folded batch;
 * the hub looks each changed object up in per-channel indexes, encodes it once (token and trade
 * JSON come from the REST encoders and are cached on the object), queues a reference to those
 * bytes on every matching connection, and flushes each touched connection with one write.
 * No fiber, queue or closure per trade; nothing is encoded per subscriber.
 */
import { Schema } from "effect"
import type { EngineChanges, PositionEntry, TokenBook, TradeRecord } from "@spot/domain"
import { Candle, Candles, Chain, Position, Trade } from "@spot/domain"
import type { MarketShape } from "@spot/application"
import type { Connection, ConnectionOwner, Subscription } from "./Connection.js"
import type { CandlesSpec, ChainSlug, IdentityFeed, SubscriptionSpec, TradesSpec } from "./SubscribeFilters.js"
import { inIdentityFeed, matchesFlags } from "./TradeMatch.js"

/** The REST encoders (JSON cached on the object), so stream and REST bytes are the same. */
export interface Encoders {
  readonly tokenJson: (token: TokenBook) => string
  readonly tradeJson: (record: TradeRecord) => string
}

const encodeTrade = Schema.encodeSync(Trade)
const encodeCandle = Schema.encodeSync(Candle)
const encodePosition = Schema.encodeSync(Position)

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
  /** Timestamps of this token's trades in the batch being fanned out. */
  batchTimes: Array<number>
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
  private readonly touchedCandleTokens: Array<CandleToken> = []
  private readonly unlisten: () => void

  constructor(private readonly market: MarketShape, private readonly encoders: Encoders) {
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
    this.dirty = []
    for (let i = 0; i < dirty.length; i++) dirty[i]!.flush()
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
      // The three encodings of this trade, each made at most once, only if someone receives it.
      let full: Buffer | undefined
      let withoutPlatforms: Buffer | undefined
      const byToken = this.tradesByToken[record.chain].get(record.token)
      if (byToken !== undefined) {
        let tokenMode: Buffer | undefined
        for (const subscription of byToken) {
          if (!matchesFlags(record, (subscription.spec as TradesSpec).flags)) continue
          if (tokenMode === undefined) {
            if (record.flags.length === 0 && record.terminal === null) tokenMode = full ??= Buffer.from(this.encoders.tradeJson(record))
            else tokenMode = tradeWithout(record, true)
          }
          subscription.connection.enqueueUpdate(subscription.prefix, tokenMode)
        }
      }
      const byWallet = this.tradesByWallet[record.chain].get(record.trader)
      if (byWallet !== undefined) {
        for (const subscription of byWallet) {
          if (!matchesFlags(record, (subscription.spec as TradesSpec).flags)) continue
          withoutPlatforms ??= this.withoutPlatforms(record, full)
          subscription.connection.enqueueUpdate(subscription.prefix, withoutPlatforms)
        }
      }
      if (kol.size > 0 && inIdentityFeed(record, "kol")) {
        for (const subscription of kol) {
          if (!matchesFlags(record, (subscription.spec as TradesSpec).flags)) continue
          withoutPlatforms ??= this.withoutPlatforms(record, full)
          subscription.connection.enqueueUpdate(subscription.prefix, withoutPlatforms)
        }
      }
      if (partnerscan.size > 0 && inIdentityFeed(record, "partnerscan")) {
        for (const subscription of partnerscan) {
          if (!matchesFlags(record, (subscription.spec as TradesSpec).flags)) continue
          withoutPlatforms ??= this.withoutPlatforms(record, full)
          subscription.connection.enqueueUpdate(subscription.prefix, withoutPlatforms)
        }
      }
    }
    if (this.touchedCandleTokens.length > 0) this.fanOutCandles()
  }

  private withoutPlatforms(record: TradeRecord, full: Buffer | undefined): Buffer {
    if (record.terminal === null) return full ?? Buffer.from(this.encoders.tradeJson(record))
    return tradeWithout(record, false)
  }

  /**
   * After a batch's trades: for each subscribed (token, timeframe, metric, denomination), the
   * candle of every bucket the batch's trades fell in, oldest first — normally just the newest
   * bucket, but a batch that crosses a bucket boundary also closes the previous bucket, and a
   * subscriber must see that bucket's final state to agree with the REST read.
   */
  private fanOutCandles(): void {
    const engine = this.market.engine
    const touched = this.touchedCandleTokens
    for (let t = 0; t < touched.length; t++) {
      const candleToken = touched[t]!
      const times = candleToken.batchTimes
      candleToken.batchTimes = []
      const token = engine.token(candleToken.chain, candleToken.address)
      if (token === undefined) continue
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
          const data = Buffer.from(JSON.stringify(encodeCandle(candle)))
          for (const subscription of group.subscriptions) subscription.connection.enqueueUpdate(subscription.prefix, data)
        }
      }
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
        data ??= Buffer.from(JSON.stringify(encodePosition(engine.positionWire(entry))))
        subscription.connection.enqueueUpdate(subscription.prefix, data)
      }
    }
  }
}

/** The trade object without `platforms` (and without `flags` for token mode), same field order. */
const tradeWithout = (record: TradeRecord, dropFlags: boolean): Buffer => {
  const { flags, platforms: _platforms, ...rest } = record.trade
  const wire = dropFlags || flags === undefined ? rest : { ...rest, flags }
  return Buffer.from(JSON.stringify(encodeTrade(wire as Trade)))
}

/** Distinct bucket open times of `times`, ascending (usually one). */
const bucketsOf = (timeframe: Candles.Timeframe, times: ReadonlyArray<number>): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < times.length; i++) {
    const bucket = Candles.bucketStart(timeframe, times[i]!)
    if (!out.includes(bucket)) out.push(bucket)
  }
  return out.length > 1 ? out.sort((a, b) => a - b) : out
}
