/**
 * Port: the trade archive, where every trade the market folds is kept for the pages that reach
 * past what memory holds (a token's newest trades live in the engine; older ones are read here).
 * A projection of the event log like the engine itself: each row is one trade as the engine made
 * it (trades never change), written after the fold, keyed by the engine's trade `seq`
 * (deterministic: the same log folds to the same seqs). docs/storage.md,
 * "Trade history".
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { Chain as ChainSlug } from "@spot/domain"
type Chain = ChainSlug.Chain
import type { StoreUnavailable } from "./EventStore.js"

/** One archived trade: where it sorts in its token's feed, and the trade itself (`tradeToArchive`). */
export interface ArchivedTrade {
  readonly chain: Chain
  /** The token's canonical address. */
  readonly token: string
  readonly timestamp: number
  /** The engine's trade seq: the keyset tie-break, and the row's identity. */
  readonly seq: number
  /** The trade record's inputs as `tradeToArchive` writes them; `tradeFromArchive` rebuilds the record. */
  readonly body: string
}

/** A keyset position in a trade feed: strictly older than (timestamp, seq) comes next. */
export interface TradePosition {
  readonly timestamp: number
  readonly seq: number
}

/** Whether `trade` comes strictly after `before` in a newest-first feed (every trade does when `before` is null). */
export const isOlder = (trade: TradePosition, before: TradePosition | null): boolean =>
  before === null || trade.timestamp < before.timestamp || (trade.timestamp === before.timestamp && trade.seq < before.seq)

export interface TradeStoreShape {
  /**
   * Stores the trades, in one statement: all or none. Idempotent: a trade whose seq is already
   * stored is left as it is (a replay after a crash writes the same trades again).
   */
  readonly write: (trades: ReadonlyArray<ArchivedTrade>) => Effect.Effect<void, StoreUnavailable>
  /** Up to `limit` trades of the token strictly older than `before` (newest first when null), newest first. */
  readonly older: (
    chain: Chain,
    token: string,
    before: TradePosition | null,
    limit: number
  ) => Effect.Effect<ReadonlyArray<ArchivedTrade>, StoreUnavailable>
  /** The highest stored seq, 0 when none: the archive holds every trade up to it (writes go in seq order). */
  readonly lastSeq: Effect.Effect<number, StoreUnavailable>
}

export class TradeStore extends Context.Service<TradeStore, TradeStoreShape>()("@spot/application/TradeStore") {}
