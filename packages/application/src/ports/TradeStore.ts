/**
 * Port: the trade archive, where a token's trades go once they leave the engine's memory (a
 * token's newest trades live in the engine; older ones are read here). A projection of the event
 * log like the engine itself: it stores the engine's `TradesLeftMemory` groups — blocks of a
 * token's oldest trades, which never overlap, and single late trades — written after the fold, in
 * the order they left (`leftAt`, deterministic: the same log folds to the same groups).
 * docs/storage.md, "Trade history".
 */
import { Context, Effect, Layer } from "effect"
import type { Chain as ChainSlug, TradeRecord, TradesLeftMemory } from "@spot/domain"
import { isOlderThan } from "@spot/domain"
type Chain = ChainSlug.Chain
import { StoreUnavailable } from "./EventStore.js"

/** A keyset position in a trade feed: strictly older than (timestamp, seq) comes next. */
export interface TradePosition {
  readonly timestamp: number
  readonly seq: number
}

/** Whether `trade` comes strictly after `before` in a newest-first feed (every trade does when `before` is null). */
export const isOlder = (trade: TradePosition, before: TradePosition | null): boolean =>
  before === null || isOlderThan(trade, before.timestamp, before.seq)

/** Newest first: later timestamp first, then higher seq (a feed's order). */
export const newestFirst = (a: TradePosition, b: TradePosition): number => b.timestamp - a.timestamp || b.seq - a.seq

/** Up to `limit` trades of the token strictly older than `before` (from the newest when null), newest first. */
export type OlderTrades = (
  chain: Chain,
  token: string,
  before: TradePosition | null,
  limit: number
) => Effect.Effect<ReadonlyArray<TradeRecord>, StoreUnavailable>

export interface TradeStoreShape {
  /**
   * Stores the groups, in one statement: all or none. Idempotent: a group already stored is left
   * as it is (a replay after a crash writes the same groups again).
   */
  readonly write: (groups: ReadonlyArray<TradesLeftMemory>) => Effect.Effect<void, StoreUnavailable>
  /** Up to `limit` trades of the token strictly older than `before` (from the newest when null), newest first. */
  readonly older: OlderTrades
  /** The highest stored `leftAt`, 0 when none: the archive holds every group up to it (writes go in `leftAt` order). */
  readonly lastLeftAt: Effect.Effect<number, StoreUnavailable>
}

/**
 * The archive in memory, with what a test inspects and switches: the stored trades and groups,
 * and an outage. Same contract as the PostgreSQL archive (idempotent writes of the groups that
 * left memory, pages newest first strictly older than a position).
 */
export interface MemoryTradeStore extends TradeStoreShape {
  /** While true, every call fails with StoreUnavailable. */
  failing: boolean
  /** Every stored trade, in write order. */
  readonly stored: () => ReadonlyArray<TradeRecord>
  /** Every stored group, in write order (a copy of the archive is a new store written with these). */
  readonly groups: () => ReadonlyArray<TradesLeftMemory>
}

const makeMemory = (): MemoryTradeStore => {
  const stored: Array<TradeRecord> = []
  const groups: Array<TradesLeftMemory> = []
  const seqs = new Set<number>()
  const byToken = new Map<string, Array<TradeRecord>>()
  let last = 0
  const down = () => new StoreUnavailable({ message: "trade archive unavailable (memory store set to fail)" })
  const store: MemoryTradeStore = {
    failing: false,
    stored: () => [...stored],
    groups: () => [...groups],
    write: (written: ReadonlyArray<TradesLeftMemory>) =>
      Effect.suspend(() => {
        if (store.failing) return Effect.fail(down())
        for (const group of written) {
          if (group.leftAt > last) last = group.leftAt
          if (!group.trades.some((t) => !seqs.has(t.seq))) continue
          groups.push(group)
          for (const trade of group.trades) {
            if (seqs.has(trade.seq)) continue
            seqs.add(trade.seq)
            stored.push(trade)
            const key = `${group.chain}:${group.token}`
            const list = byToken.get(key)
            if (list === undefined) byToken.set(key, [trade])
            else list.push(trade)
          }
        }
        return Effect.void
      }),
    older: (chain: Chain, token: string, before: TradePosition | null, limit: number) =>
      Effect.suspend(() => {
        if (store.failing) return Effect.fail(down())
        const list = byToken.get(`${chain}:${token}`) ?? []
        return Effect.succeed(
          list
            .filter((t) => isOlder(t, before))
            .sort(newestFirst)
            .slice(0, limit)
        )
      }),
    lastLeftAt: Effect.suspend(() => (store.failing ? Effect.fail(down()) : Effect.succeed(last)))
  }
  return store
}

export class TradeStore extends Context.Service<TradeStore, TradeStoreShape>()("@spot/application/TradeStore") {
  /** A new, empty archive in memory, for a test that keeps its handle (`Layer.succeed(TradeStore, store)`). */
  static readonly makeMemory: () => MemoryTradeStore = makeMemory
  /** A new, empty archive in memory each time the layer is built: for tests and for a service without a database. */
  static readonly layerMemory: Layer.Layer<TradeStore> = Layer.sync(TradeStore, makeMemory)
}
