/**
 * `TradeStore` in memory, for tests and for a service without a database: the same contract as
 * the PostgreSQL archive (idempotent writes by seq, pages newest first strictly older than a
 * position). `failing` makes every call fail as unavailable, to test outages.
 */
import { Effect, Layer } from "effect"
import { isOlder, StoreUnavailable, TradeStore } from "@spot/application"
import type { ArchivedTrade, TradePosition, TradeStoreShape } from "@spot/application"
import type { Chain as ChainSlug } from "@spot/domain"
type Chain = ChainSlug.Chain

export interface MemoryTradeStore extends TradeStoreShape {
  /** While true, every call fails with StoreUnavailable. */
  failing: boolean
  /** Every stored trade, in write order. */
  readonly stored: () => ReadonlyArray<ArchivedTrade>
}

export const make = (): MemoryTradeStore => {
  const bySeq = new Map<number, ArchivedTrade>()
  const byToken = new Map<string, Array<ArchivedTrade>>()
  let last = 0
  const down = () => new StoreUnavailable({ message: "trade archive unavailable (memory store set to fail)" })
  const store: MemoryTradeStore = {
    failing: false,
    stored: () => [...bySeq.values()],
    write: (trades) =>
      Effect.suspend(() => {
        if (store.failing) return Effect.fail(down())
        for (const trade of trades) {
          if (bySeq.has(trade.seq)) continue
          bySeq.set(trade.seq, trade)
          const key = `${trade.chain}:${trade.token}`
          const list = byToken.get(key)
          if (list === undefined) byToken.set(key, [trade])
          else list.push(trade)
          if (trade.seq > last) last = trade.seq
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
            .sort((a, b) => b.timestamp - a.timestamp || b.seq - a.seq)
            .slice(0, limit)
        )
      }),
    lastSeq: Effect.suspend(() => (store.failing ? Effect.fail(down()) : Effect.succeed(last)))
  }
  return store
}

export const layer = (store: MemoryTradeStore = make()): Layer.Layer<TradeStore> => Layer.succeed(TradeStore, store)
