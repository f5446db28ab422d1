/**
 * Trade pages: one token's trades, and the identity feeds across every token (spec "GET
 * /v1/tokens/{chain}/{address}/trades", "GET /v1/trades", "Cursor pagination rules").
 */
import { Effect } from "effect"
import type { TradeRecord } from "@spot/domain"
import { Chain, TradeKeyset } from "@spot/domain"
import { CursorCodec } from "../ports/CursorCodec.js"
import type { CursorCodecShape } from "../ports/CursorCodec.js"
import { Unavailable } from "../errors.js"
import { Market } from "../Market.js"
import type { TradePosition } from "../ports/TradeStore.js"
import { TradeHistory } from "../TradeHistory.js"
import { Issues, refuseUnknown } from "./Params.js"
import type { TokenPath } from "./TokenQueries.js"

/** Trades per page: 20 by default, at most 100 (spec "Limits"). */
export const defaultTradeLimit = 20
export const maxTradeLimit = 100

/**
 * A page of trade records, newest first: from memory, and when the page reaches past memory, from
 * the trade history. The adapter encodes each record once and reuses it.
 */
export interface TradeRecordPage {
  readonly records: ReadonlyArray<TradeRecord>
  readonly nextCursor: string | null
  readonly hasMore: boolean
}

const afterOf = (issues: Issues, position: ReadonlyArray<string | number | null> | undefined) => {
  if (position === undefined) return null
  if (!TradeKeyset.isTradePosition(position)) {
    issues.add("cursor", "cursor cannot be read: send back the nextCursor of the previous page exactly as received")
    return null
  }
  return { timestamp: position[0] as number, seq: position[1] as number }
}

/**
 * Recently made cursors, per codec: a cursor is a pure function of (secret, binding, position)
 * and signing one costs microseconds, while a popular page (a token's newest trades) is read
 * again and again with the same last trade until a new trade arrives. At most `maxRecentCursors`
 * per codec; when full the memory starts over.
 */
const maxRecentCursors = 4_096
const recentCursors = new WeakMap<CursorCodecShape, Map<string, string>>()

const cursorAfter = (cursors: CursorCodecShape, binding: string, last: TradePosition): string => {
  let recent = recentCursors.get(cursors)
  if (recent === undefined) recentCursors.set(cursors, recent = new Map())
  const key = `${last.timestamp}:${last.seq}:${binding}`
  let cursor = recent.get(key)
  if (cursor === undefined) {
    cursor = cursors.encode(binding, TradeKeyset.tradePosition(last.timestamp, last.seq))
    if (recent.size >= maxRecentCursors) recent.clear()
    recent.set(key, cursor)
  }
  return cursor
}

const pageOf = (
  cursors: CursorCodecShape,
  binding: string,
  page: { readonly records: ReadonlyArray<TradeRecord>; readonly hasMore: boolean }
): TradeRecordPage => {
  const last: TradePosition | undefined = page.records[page.records.length - 1]
  return {
    records: page.records,
    hasMore: page.hasMore,
    nextCursor: page.hasMore && last !== undefined ? cursorAfter(cursors, binding, last) : null
  }
}


export const tokenTradesParameters = ["limit", "cursor"] as const

/** One token's trades, newest first. An unknown token is an empty page, not 404. */
export const tokenTrades = Effect.fnUntraced(function*(path: TokenPath, params: Readonly<Record<string, string | undefined>>) {
  const issues = new Issues()
  const chain = issues.chain("chain", path.chain)
  const address = issues.address("address", chain, path.address)
  refuseUnknown(issues, params, tokenTradesParameters)
  const limit = issues.limit("limit", params.limit, defaultTradeLimit, maxTradeLimit)
  const cursors = yield* CursorCodec
  const binding = `GET /v1/tokens/${chain}/${address}/trades`
  const after = afterOf(issues, issues.cursor(cursors, binding, params.cursor))
  yield* issues.check()
  const market = yield* Market
  const memory = market.engine.tokenTradePage(chain!, address!, after, limit)
  if (!memory.olderElsewhere) return pageOf(cursors, binding, memory)
  // Past what memory holds: the rest of the page (and one more, to know whether more remain) from
  // the trade history, older than the last trade of memory's part (or the cursor).
  const wanted = limit - memory.records.length
  // A full page from memory: older trades exist (memory dropped some), so more remain.
  if (wanted === 0) return pageOf(cursors, binding, { records: memory.records, hasMore: true })
  const history = yield* TradeHistory
  const lastHeld = memory.records[memory.records.length - 1]
  const before = lastHeld === undefined ? after : { timestamp: lastHeld.timestamp, seq: lastHeld.seq }
  const older = yield* history.older(chain!, address!, before, wanted + 1).pipe(
    Effect.mapError(() =>
      new Unavailable({ message: "This page reaches past the trades held in memory, and the trade archive cannot be read right now." })
    )
  )
  return pageOf(cursors, binding, { records: [...memory.records, ...older.slice(0, wanted)], hasMore: older.length > wanted })
})

export const identityTradesParameters = ["identity", "chains", "limit", "cursor"] as const
export const identities = ["kol", "partnerscan"] as const

/** Recent trades of one identity feed across every token, newest first. */
export const identityTrades = Effect.fnUntraced(function*(params: Readonly<Record<string, string | undefined>>) {
  const issues = new Issues()
  refuseUnknown(issues, params, identityTradesParameters)
  const identity = issues.oneOf("identity", params.identity, identities)
  const chains = issues.chainList("chains", params.chains)
  const limit = issues.limit("limit", params.limit, defaultTradeLimit, maxTradeLimit)
  const cursors = yield* CursorCodec
  // Spellings that select the same trades bind the same: any order or repeats, and every chain
  // named is the same read as `chains` absent.
  const readChains = [...new Set(chains ?? [])].sort()
  const everyChain = chains === undefined || readChains.length === Chain.chains.length
  const binding = `GET /v1/trades?identity=${identity}&chains=${everyChain ? "*" : readChains.join(",")}`
  const after = afterOf(issues, issues.cursor(cursors, binding, params.cursor))
  yield* issues.check()
  const market = yield* Market
  const page = market.engine.identityTradePage(identity!, chains ?? [...Chain.chains], after, limit)
  return pageOf(cursors, binding, page)
})

