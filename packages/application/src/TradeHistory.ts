/**
 * Trade history past memory. The engine keeps each token's newest trades (the trade pages' hot
 * end); when a token's feed is full, its oldest trades leave memory in a block, and those blocks
 * (and the rare late trade older than what memory held) are written, shortly after, to the trade
 * archive (`TradeStore`). Pages that reach past memory continue there (docs/storage.md, "Trade
 * history").
 *
 * Writing: a market listener queues each batch's groups that left memory (references, nothing
 * encoded on the fold's path); a background fiber writes them in the order they left, one
 * statement per chunk, every `flushEveryMs`. The archive therefore always holds a prefix of the
 * groups by `leftAt`. A failed write is retried (the groups stay queued, and pages still see them);
 * while the database is down no event is folded either (the log refuses them first), so the queue
 * cannot grow without bound.
 *
 * Restarts: groups the archive already holds (`leftAt` at most its `lastLeftAt`) are not queued
 * again when the log is replayed. A snapshot is only taken with the queue empty (`Snapshots`
 * flushes first), so the archive holds every group that left before a snapshot and the replay
 * after it regenerates the rest.
 */
import { Context, Duration, Effect, Layer, Semaphore } from "effect"
import type { Chain as ChainSlug, TradeRecord, TradesLeftMemory } from "@spot/domain"
type Chain = ChainSlug.Chain
import { Market } from "./Market.js"
import type { StoreUnavailable } from "./ports/EventStore.js"
import type { OlderTrades, TradePosition } from "./ports/TradeStore.js"
import { isOlder, newestFirst, TradeStore } from "./ports/TradeStore.js"

export interface TradeHistorySettings {
  /** How often queued trades are written. */
  readonly flushEveryMs: number
  /** Trades per write statement (whole groups: a statement holds at least one). */
  readonly tradesPerWrite: number
  /** Wait after a failed write before the next attempt. */
  readonly retryAfterMs: number
}

export const defaultTradeHistorySettings: TradeHistorySettings = { flushEveryMs: 200, tradesPerWrite: 5_000, retryAfterMs: 1_000 }

export interface TradeHistoryShape {
  /**
   * Up to `limit` trades of the token strictly older than `before` (from the newest when null),
   * newest first, from the trades still queued and the archive: every trade ever folded for the
   * token is in one of them or still in memory.
   */
  readonly older: OlderTrades
  /** Writes every queued trade; fails (keeping them queued) when the archive cannot be written. */
  readonly flush: Effect.Effect<void, StoreUnavailable>
  /** Trades that left memory and are not yet written. */
  readonly queued: () => number
}

export class TradeHistory extends Context.Service<TradeHistory, TradeHistoryShape>()("@spot/application/TradeHistory") {}


export const make = (settings: TradeHistorySettings = defaultTradeHistorySettings) =>
  Effect.gen(function*() {
    const market = yield* Market
    const store = yield* TradeStore
    /** Groups that left at or below this seq are in the archive. */
    let archivedThrough = yield* store.lastLeftAt
    // The queue: `queue[head..]` left memory and are not yet written, in `leftAt` order.
    let queue: Array<TradesLeftMemory> = []
    let head = 0
    let queuedTrades = 0
    const writing = yield* Semaphore.make(1)

    const stopListening = market.listen((changes) => {
      const left = changes.leftMemory
      for (let i = 0; i < left.length; i++) {
        const group = left[i]!
        if (group.leftAt > archivedThrough) {
          queue.push(group)
          queuedTrades += group.trades.length
        }
      }
    })
    yield* Effect.addFinalizer(() => Effect.sync(stopListening))

    /** Writes the next chunk of the queue; false when the queue was empty. */
    const writeNext: Effect.Effect<boolean, StoreUnavailable> = Effect.suspend(() => {
      if (head >= queue.length) return Effect.succeed(false)
      let end = head
      let trades = 0
      while (end < queue.length && (end === head || trades + queue[end]!.trades.length <= settings.tradesPerWrite)) {
        trades += queue[end]!.trades.length
        end++
      }
      const groups = queue.slice(head, end)
      return Effect.map(store.write(groups), () => {
        archivedThrough = groups[groups.length - 1]!.leftAt
        head = end
        queuedTrades -= trades
        if (head === queue.length) {
          queue = []
          head = 0
        } else if (head > 4_096 && head * 2 > queue.length) {
          queue = queue.slice(head)
          head = 0
        }
        return true
      })
    })

    const flush: Effect.Effect<void, StoreUnavailable> = writing.withPermit(
      Effect.gen(function*() {
        while (yield* writeNext) {
          // until the queue is empty
        }
      })
    )

    // The writer: every flushEveryMs, everything queued; after a failure, a pause, then again.
    let failing = false
    const round: Effect.Effect<void> = flush.pipe(
      Effect.tap(() =>
        Effect.suspend(() => {
          if (!failing) return Effect.void
          failing = false
          return Effect.logInfo("trade archive writable again: queued trades written")
        })
      ),
      Effect.catch((error: StoreUnavailable) =>
        Effect.gen(function*() {
          if (!failing) yield* Effect.logWarning(`trade archive not written, retrying: ${error.message}`)
          failing = true
          yield* Effect.sleep(Duration.millis(settings.retryAfterMs))
        })
      )
    )
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(settings.flushEveryMs)), round)))
    // A graceful stop writes what is queued (a group missed here is regenerated by the next start's replay).
    yield* Effect.addFinalizer(() => Effect.ignore(Effect.timeout(flush, Duration.seconds(10))))

    const older = (chain: Chain, token: string, before: TradePosition | null, limit: number) =>
      Effect.suspend(() => {
        // The queue first: a group written while the archive is read is then found twice (and
        // kept once), never missed.
        const found = new Map<number, TradeRecord>()
        for (let i = head; i < queue.length; i++) {
          const group = queue[i]!
          if (group.token !== token || group.chain !== chain) continue
          for (const record of group.trades) if (isOlder(record, before)) found.set(record.seq, record)
        }
        return Effect.map(store.older(chain, token, before, limit), (stored) => {
          for (const record of stored) if (!found.has(record.seq)) found.set(record.seq, record)
          return [...found.values()].sort(newestFirst).slice(0, limit)
        })
      })

    return TradeHistory.of({ older, flush, queued: () => queuedTrades })
  })

/** The trade history: needs the market and the archive; its writer runs while the layer lives. */
export const layer = (settings?: TradeHistorySettings): Layer.Layer<TradeHistory, StoreUnavailable, Market | TradeStore> =>
  Layer.effect(TradeHistory, make(settings))
