/**
 * `TradeStore` in memory, for tests and for a service without a database: the same contract as
 * the PostgreSQL archive (idempotent writes of the groups that left memory, pages newest first
 * strictly older than a position). `failing` makes every call fail as unavailable, to test outages.
 */
import { Effect, Layer } from "effect"
import { isOlder, newestFirst, StoreUnavailable, TradeStore } from "@spot/application"
import type { TradePosition, TradeStoreShape } from "@spot/application"
import type { Chain as ChainSlug, TradeRecord, TradesLeftMemory } from "@spot/domain"
type Chain = ChainSlug.Chain

export interface MemoryTradeStore extends TradeStoreShape {
  /** While true, every call fails with StoreUnavailable. */
  failing: boolean
  /** Every stored trade, in write order. */
  readonly stored: () => ReadonlyArray<TradeRecord>
  /** Every stored group, in write order (a copy of the archive is `make()` written with these). */
  readonly groups: () => ReadonlyArray<TradesLeftMemory>
}

export const make = (): MemoryTradeStore => {
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

export const layer = (store: MemoryTradeStore = make()): Layer.Layer<TradeStore> => Layer.succeed(TradeStore, store)
