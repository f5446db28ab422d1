/**
 * Port: the trade archive, where a token's trades go once they leave the engine's memory (a
 * token's newest trades live in the engine; older ones are read here). A projection of the event
 * log like the engine itself: it stores the engine's `TradesLeftMemory` groups — blocks of a
 * token's oldest trades, which never overlap, and single late trades — written after the fold, in
 * the order they left (`leftAt`, deterministic: the same log folds to the same groups).
 * docs/storage.md, "Trade history".
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { Chain as ChainSlug, TradeRecord, TradesLeftMemory } from "@spot/domain"
import { isOlderThan } from "@spot/domain"
type Chain = ChainSlug.Chain
import type { StoreUnavailable } from "./EventStore.js"

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

export class TradeStore extends Context.Service<TradeStore, TradeStoreShape>()("@spot/application/TradeStore") {}
