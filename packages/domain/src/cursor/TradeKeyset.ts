/**
 * Keyset positions for trade lists (spec "Cursor pagination rules", rule 2). Trades are listed
 * newest first by (timestamp desc, seq desc), `seq` being the engine's per-trade, strictly
 * increasing sequence number, so the pair is unique and total. A page cursor holds the pair of its
 * last trade; the next page is every trade strictly after it in that order. Trades arriving while a
 * client pages are newer than any cursor, so they land before page one and never shift later pages:
 * nothing is repeated and nothing is skipped.
 */
import type { CursorPosition } from "./Cursor.js"

/** The cursor position after the trade (`timestamp`, `seq`). */
export const tradePosition = (timestamp: number, seq: number): CursorPosition => [timestamp, seq]

/**
 * True when `position` is a trade position (two safe integers), as made by {@link tradePosition}.
 * Check a decoded cursor with this before paging; anything else is an unreadable cursor.
 */
export const isTradePosition = (position: CursorPosition): boolean =>
  position.length === 2 && Number.isSafeInteger(position[0]) && Number.isSafeInteger(position[1])

/**
 * True when the trade (`timestamp`, `seq`) comes strictly after `position` in newest-first order,
 * that is, belongs to the pages after the cursor. False for a position that is not a trade position.
 */
export const isAfterTradePosition = (position: CursorPosition, timestamp: number, seq: number): boolean => {
  const cursorTimestamp = position[0]
  const cursorSeq = position[1]
  if (typeof cursorTimestamp !== "number" || typeof cursorSeq !== "number") return false
  return timestamp < cursorTimestamp || (timestamp === cursorTimestamp && seq < cursorSeq)
}
