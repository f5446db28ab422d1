/**
 * Trade history past memory. The engine keeps each token's newest trades (the trade pages' hot
 * end); every trade it folds is also written, shortly after, to the trade archive (`TradeStore`),
 * and pages that reach past memory continue there (docs/storage.md, "Trade history").
 *
 * Writing: a market listener queues each batch's new trades (references, nothing encoded on the
 * fold's path); a background fiber writes them (`tradeToArchive`: the record's inputs, not its JSON) in seq order, one statement per chunk,
 * every `flushEveryMs`. The archive therefore always holds a prefix of the trades by seq. A failed
 * write is retried (the trades stay queued, and pages still see them); while the database is down
 * no event is folded either (the log refuses them first), so the queue cannot grow without bound.
 *
 * Restarts: trades the archive already holds (seq at most its `lastSeq`) are not queued again when
 * the log is replayed. A snapshot is only taken with the queue empty (`Snapshots` flushes first),
 * so the archive holds every trade a snapshot covers and the replay after it regenerates the rest.
 */
import { Context, Duration, Effect, Layer, Semaphore } from "effect"
import type { Chain as ChainSlug } from "@spot/domain"
import type { TradeRecord } from "@spot/domain"
import { tradeFromArchive, tradeToArchive } from "@spot/domain"
type Chain = ChainSlug.Chain
import { Market } from "./Market.js"
import type { StoreUnavailable } from "./ports/EventStore.js"
import type { ArchivedTrade, TradePosition } from "./ports/TradeStore.js"
import { isOlder, TradeStore } from "./ports/TradeStore.js"

export interface TradeHistorySettings {
  /** How often queued trades are written. */
  readonly flushEveryMs: number
  /** Trades per write statement. */
  readonly rowsPerWrite: number
  /** Wait after a failed write before the next attempt. */
  readonly retryAfterMs: number
}

export const defaultTradeHistorySettings: TradeHistorySettings = { flushEveryMs: 200, rowsPerWrite: 5_000, retryAfterMs: 1_000 }

export interface TradeHistoryShape {
  /**
   * Up to `limit` trades of the token strictly older than `before` (from the newest when null),
   * newest first, from the trades still queued and the archive: every trade ever folded for the
   * token is in one of them or still in memory.
   */
  readonly older: (
    chain: Chain,
    token: string,
    before: TradePosition | null,
    limit: number
  ) => Effect.Effect<ReadonlyArray<TradeRecord>, StoreUnavailable>
  /** Writes every queued trade; fails (keeping them queued) when the archive cannot be written. */
  readonly flush: Effect.Effect<void, StoreUnavailable>
  /** Trades folded and not yet written. */
  readonly queued: () => number
}

export class TradeHistory extends Context.Service<TradeHistory, TradeHistoryShape>()("@spot/application/TradeHistory") {}

const archived = (record: TradeRecord): ArchivedTrade => ({
  chain: record.chain,
  token: record.token,
  timestamp: record.timestamp,
  seq: record.seq,
  body: tradeToArchive(record)
})

/** Newest first: later timestamp first, then higher seq. */
const newestFirst = (a: TradePosition, b: TradePosition): number => b.timestamp - a.timestamp || b.seq - a.seq


export const make = (settings: TradeHistorySettings = defaultTradeHistorySettings) =>
  Effect.gen(function*() {
    const market = yield* Market
    const store = yield* TradeStore
    /** Trades at or below this seq are in the archive. */
    let archivedThrough = yield* store.lastSeq
    // The queue: `queue[head..]` are folded and not yet written, in seq order.
    let queue: Array<TradeRecord> = []
    let head = 0
    const writing = yield* Semaphore.make(1)

    const stopListening = market.listen((changes) => {
      const trades = changes.trades
      for (let i = 0; i < trades.length; i++) {
        const record = trades[i]!
        if (record.seq > archivedThrough) queue.push(record)
      }
    })
    yield* Effect.addFinalizer(() => Effect.sync(stopListening))

    /** Writes the next chunk of the queue; false when the queue was empty. */
    const writeNext: Effect.Effect<boolean, StoreUnavailable> = Effect.suspend(() => {
      if (head >= queue.length) return Effect.succeed(false)
      const end = Math.min(queue.length, head + settings.rowsPerWrite)
      const rows = new Array<ArchivedTrade>(end - head)
      for (let i = head; i < end; i++) rows[i - head] = archived(queue[i]!)
      return Effect.map(store.write(rows), () => {
        archivedThrough = rows[rows.length - 1]!.seq
        head = end
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
    // A graceful stop writes what is queued (a trade missed here is regenerated by the next start's replay).
    yield* Effect.addFinalizer(() => Effect.ignore(Effect.timeout(flush, Duration.seconds(10))))

    const older = (chain: Chain, token: string, before: TradePosition | null, limit: number) =>
      Effect.suspend(() => {
        // The queue first: a trade written while the archive is read is then found twice (and
        // kept once), never missed.
        const found = new Map<number, TradeRecord>()
        for (let i = head; i < queue.length; i++) {
          const record = queue[i]!
          if (record.token === token && record.chain === chain && isOlder(record, before)) found.set(record.seq, record)
        }
        return Effect.map(store.older(chain, token, before, limit), (stored) => {
          for (const trade of stored) {
            if (!found.has(trade.seq)) found.set(trade.seq, tradeFromArchive(trade.chain, trade.token, trade.timestamp, trade.seq, trade.body))
          }
          return [...found.values()].sort(newestFirst).slice(0, limit)
        })
      })

    return TradeHistory.of({ older, flush, queued: () => queue.length - head })
  })

/** The trade history: needs the market and the archive; its writer runs while the layer lives. */
export const layer = (settings?: TradeHistorySettings): Layer.Layer<TradeHistory, StoreUnavailable, Market | TradeStore> =>
  Layer.effect(TradeHistory, make(settings))
