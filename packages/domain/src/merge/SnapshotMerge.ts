/**
 * The spec's rules for combining a REST snapshot with stream updates (spec "Combining a snapshot
 * with a stream"), as plain functions a client can embed. They work on any object with the
 * matching fields, so they need no schema.
 *
 * | Object   | Match on          | Rule                                                         |
 * | Trade    | `id`              | skip an update whose id is held; keep the held (REST) copy  |
 * | Candle   | `time`            | replace the same time; append a new one                      |
 * | Token    | `chain`+`address` | keep the later `updatedAt` (a tie keeps the held object)     |
 * | Position | one position      | keep the highest `version` (a tie keeps the held object)     |
 *
 * The recipe (subscribe and buffer, read the snapshot, apply the buffered updates, then new ones;
 * after a reconnect, buffer again and merge a fresh snapshot) is {@link SnapshotMerger}.
 */

export interface TradeLike {
  readonly id: string
  readonly timestamp: number
}

export interface CandleLike {
  readonly time: number
}

export interface TokenLike {
  readonly chain: string
  readonly address: string
  readonly updatedAt: number
}

export interface PositionLike {
  readonly version: number
}

// ---------------------------------------------------------------------------------------------
// Trades

/** The trades of `trades` whose id is not in `ids` yet, in order, each id once (added to `ids`). */
const unseen = <T extends TradeLike>(trades: ReadonlyArray<T>, ids: Set<string>): Array<T> => {
  const out: Array<T> = []
  for (let i = 0; i < trades.length; i++) {
    const trade = trades[i]!
    if (ids.has(trade.id)) continue
    ids.add(trade.id)
    out.push(trade)
  }
  return out
}

/**
 * Adds to `held` (newest first, as the REST page and this function order it) every trade of
 * `incoming` whose id is not already held; a held trade is never replaced, because the REST copy
 * carries `flags` and `platforms` the stream copy may lack. A repeated id within `incoming` counts
 * once (its first copy). The result is newest first by `timestamp`; among equal timestamps the
 * held order is kept and added trades come first, since a trade that arrives later executed later.
 */
export const mergeTrades = <T extends TradeLike>(held: ReadonlyArray<T>, incoming: ReadonlyArray<T>): Array<T> => {
  const ids = new Set<string>()
  for (let i = 0; i < held.length; i++) ids.add(held[i]!.id)
  const added = unseen(incoming, ids)
  if (added.length === 0) return held.slice()
  // Stable: among equal timestamps, the later arrival first.
  added.reverse()
  added.sort((a, b) => b.timestamp - a.timestamp)
  const out: Array<T> = new Array(held.length + added.length)
  let h = 0
  let a = 0
  let o = 0
  while (h < held.length && a < added.length) {
    out[o++] = added[a]!.timestamp >= held[h]!.timestamp ? added[a++]! : held[h++]!
  }
  while (h < held.length) out[o++] = held[h++]!
  while (a < added.length) out[o++] = added[a++]!
  return out
}

/**
 * Merges a REST trade snapshot (newest first, as the page serves it: the first read, or a re-read
 * after a reconnect) into `held` (newest first): the snapshot's copies win and keep the page's
 * order, and held trades it does not contain are kept. Among equal timestamps the snapshot's trades
 * come first: a page holds the newest trades, so a held trade it lacks executed before them.
 */
export const mergeTradeSnapshot = <T extends TradeLike>(held: ReadonlyArray<T>, snapshot: ReadonlyArray<T>): Array<T> => {
  const ids = new Set<string>()
  const page = unseen(snapshot, ids)
  const out: Array<T> = []
  let p = 0
  for (let h = 0; h < held.length; h++) {
    const trade = held[h]!
    if (ids.has(trade.id)) continue
    while (p < page.length && page[p]!.timestamp >= trade.timestamp) out.push(page[p++]!)
    out.push(trade)
  }
  while (p < page.length) out.push(page[p++]!)
  return out
}

// ---------------------------------------------------------------------------------------------
// Candles

/**
 * Decides whether `incoming` may replace `held` for the same `time`. The spec's rule is "replace",
 * so the default always says yes. A client that can order two states of one bucket (for example by
 * a version it tracks, or by volume, which never shrinks within a bucket) passes its own test so
 * that a stale buffered update cannot undo a fresher snapshot.
 */
export type CandleSupersedes<C> = (incoming: C, held: C) => boolean

const alwaysSupersedes = (): boolean => true

/** Index of the first candle whose time is >= `time` (binary search over ascending times). */
const lowerBound = (candles: ReadonlyArray<CandleLike>, time: number): number => {
  let lo = 0
  let hi = candles.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (candles[mid]!.time < time) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Applies `incoming` candles, in order, to `held` (oldest first): a candle replaces the held candle
 * of the same `time` (when `supersedes` allows), or is inserted in time order. The result is oldest
 * first with one candle per time.
 */
export const mergeCandles = <C extends CandleLike>(
  held: ReadonlyArray<C>,
  incoming: ReadonlyArray<C>,
  supersedes: CandleSupersedes<C> = alwaysSupersedes
): Array<C> => {
  const out = held.slice()
  for (let i = 0; i < incoming.length; i++) {
    const candle = incoming[i]!
    const last = out[out.length - 1]
    // The live case: an update to the newest bucket or the opening of the next one.
    if (last === undefined || candle.time > last.time) {
      out.push(candle)
      continue
    }
    const at = candle.time === last.time ? out.length - 1 : lowerBound(out, candle.time)
    const existing = out[at]!
    if (existing.time !== candle.time) out.splice(at, 0, candle)
    else if (supersedes(candle, existing)) out[at] = candle
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Tokens and positions

/**
 * The token to keep for one `chain` + `address`: the later `updatedAt`; on a tie the held one.
 * Both objects must describe the same token.
 */
export const mergeToken = <T extends TokenLike>(held: T | undefined, incoming: T): T =>
  held === undefined || incoming.updatedAt > held.updatedAt ? incoming : held

/** The position to keep: the highest `version`; on a tie the held one. Both must be the same position. */
export const mergePosition = <P extends PositionLike>(held: P | undefined, incoming: P): P =>
  held === undefined || incoming.version > held.version ? incoming : held

/** The identity of a token across chains, for keyed token collections. */
export const tokenKey = (token: TokenLike): string => `${token.chain}:${token.address}`

/**
 * Applies `incoming` tokens to a collection keyed by {@link tokenKey}, each by {@link mergeToken}.
 * Returns a new map.
 */
export const mergeTokens = <T extends TokenLike>(
  held: ReadonlyMap<string, T>,
  incoming: ReadonlyArray<T>
): Map<string, T> => {
  const out = new Map(held)
  for (let i = 0; i < incoming.length; i++) {
    const token = incoming[i]!
    const key = tokenKey(token)
    out.set(key, mergeToken(out.get(key), token))
  }
  return out
}

/** A position's identity on the wire: its wallet and its token (chain and address). */
export interface PositionIdentity {
  readonly walletAddress: string
  readonly token: { readonly chain: string; readonly address: string }
}

/** The key of a wire position (for {@link mergePositions}): one wallet's position in one token. */
export const positionKey = (position: PositionIdentity): string =>
  `${position.token.chain}:${position.token.address}:${position.walletAddress}`

/**
 * Applies `incoming` positions to a collection keyed by `keyOf` ({@link positionKey} for wire
 * positions: the spec names no position key; wallet, chain and token address identify one), each
 * by {@link mergePosition}. Returns a new map.
 */
export const mergePositions = <P extends PositionLike>(
  held: ReadonlyMap<string, P>,
  incoming: ReadonlyArray<P>,
  keyOf: (position: P) => string
): Map<string, P> => {
  const out = new Map(held)
  for (let i = 0; i < incoming.length; i++) {
    const position = incoming[i]!
    const key = keyOf(position)
    out.set(key, mergePosition(out.get(key), position))
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// The recipe

/** How one kind of state absorbs a snapshot and a single update. */
export interface MergeRules<S, U> {
  /** Merges a REST snapshot into the held state (undefined before the first snapshot). */
  readonly applySnapshot: (held: S | undefined, snapshot: S) => S
  readonly applyUpdate: (state: S, update: U) => S
}

/** A trade list, newest first. */
export const tradeListRules = <T extends TradeLike>(): MergeRules<ReadonlyArray<T>, T> => ({
  applySnapshot: (held, snapshot) => mergeTradeSnapshot(held ?? [], snapshot),
  applyUpdate: (state, update) => mergeTrades(state, [update])
})

/** A candle series, oldest first. */
export const candleSeriesRules = <C extends CandleLike>(
  supersedes: CandleSupersedes<C> = alwaysSupersedes
): MergeRules<ReadonlyArray<C>, C> => ({
  applySnapshot: (held, snapshot) => {
    const ordered = mergeCandles([], snapshot, supersedes)
    return held === undefined ? ordered : mergeCandles(held, ordered, supersedes)
  },
  applyUpdate: (state, update) => mergeCandles(state, [update], supersedes)
})

/** One token. */
export const tokenRules = <T extends TokenLike>(): MergeRules<T, T> => ({
  applySnapshot: mergeToken,
  applyUpdate: mergeToken
})

/** One position. */
export const positionRules = <P extends PositionLike>(): MergeRules<P, P> => ({
  // A REST read at the version held is the newer copy: a position's price-derived fields move
  // without a version change (docs/streams.md), so the read, made after the push, wins the tie.
  applySnapshot: (held, snapshot) => (held === undefined || snapshot.version >= held.version ? snapshot : held),
  applyUpdate: mergePosition
})

/**
 * The spec's recipe as a small state machine. Create it when subscribing (it buffers every
 * update), hand it the REST snapshot once read (it merges the snapshot, then the buffered updates
 * in arrival order, then goes live), and offer every later update. After a reconnect call
 * {@link SnapshotMerger.reconnect} before resubscribing: it buffers again while keeping the held
 * state, and the next snapshot is merged into it rather than replacing it.
 *
 * A trade list comes out in the feed's own order (newest first by time, then by arrival) provided
 * the snapshot covers the gap, as the spec's recipe assumes: every buffered trade is on the page or
 * arrived after the read. A buffered trade that fell off a full page (more trades than a page holds
 * arrived between subscribing and reading) is placed as the newest of its millisecond.
 */
export class SnapshotMerger<S, U> {
  private held: S | undefined = undefined
  private buffered: Array<U> = []
  private live = false

  constructor(private readonly rules: MergeRules<S, U>) {}

  /** The merged state; undefined until the first snapshot. */
  get state(): S | undefined {
    return this.held
  }

  /** True once a snapshot has been applied since the last (re)subscription. */
  get isLive(): boolean {
    return this.live
  }

  /** A stream update: buffered until the snapshot, applied at once afterwards. */
  offer(update: U): void {
    if (this.live && this.held !== undefined) this.held = this.rules.applyUpdate(this.held, update)
    else this.buffered.push(update)
  }

  /** The REST snapshot: merged into the held state, then every buffered update is applied. */
  applySnapshot(snapshot: S): void {
    let state = this.rules.applySnapshot(this.held, snapshot)
    const buffered = this.buffered
    for (let i = 0; i < buffered.length; i++) state = this.rules.applyUpdate(state, buffered[i]!)
    this.held = state
    this.buffered = []
    this.live = true
  }

  /** The stream dropped: buffer again until the next snapshot, keeping what is held. */
  reconnect(): void {
    this.live = false
  }
}
