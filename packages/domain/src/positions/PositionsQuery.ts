/**
 * The pure read behind GET /v1/positions: filters, counts, a total sort order and keyset paging
 * over positions already in wire form. Rules and reasons are in docs/positions.md.
 *
 * Paging is keyset, not offset: a page starts strictly after the sort key and tie-break of the
 * previous page's last row, so rows arriving or leaving between pages neither shift nor repeat
 * the rows that did not change.
 */
import { foldCase, foldQuery } from "../CaseFold.js"
import { type Chain, canonicalAddress, chains as allChains, isAddressOn } from "../Chain.js"
import type * as Fixed from "../Fixed.js"
import type { PositionWire } from "../market/Positions.js"

/** A position and the facts the read filters and sorts on, computed once by the caller. */
export interface PositionRow {
  readonly position: PositionWire
  readonly liquidityUsd: Fixed.Fixed
  /** null for a token with no market record. */
  readonly valueUsd: Fixed.Fixed | null
  readonly totalPnlUsd: Fixed.Fixed | null
  readonly pnlPct: Fixed.Fixed | null
}

export type PositionSortField = "value" | "pnl" | "pnlPct" | "openedAt" | "closedAt"
export type SortDirection = "asc" | "desc"
export type Lifecycle = "open" | "closed"

/** One validated read; the use case fills defaults (chains, lifecycle, sort) before calling. */
export interface PositionsRead {
  readonly wallets: ReadonlyArray<string>
  /** Chains to read; empty means every spot chain. */
  readonly chains: ReadonlyArray<Chain>
  readonly lifecycle: Lifecycle
  readonly hideLowLiquidity: boolean
  readonly hideDust: boolean
  readonly hideTransfers: boolean
  readonly token: { readonly chain: Chain; readonly address: string } | null
  /** Substring of the token symbol or name, any letter case; null (or empty) keeps every token. */
  readonly q: string | null
  readonly sort: { readonly field: PositionSortField; readonly direction: SortDirection }
  readonly limit: number
}

/**
 * Where a page ends: `[sortKey, chain, tokenAddress, walletAddress, countsOpen, countsClosed]`.
 * The sort key is a Fixed's integer as a decimal string (value, pnl, pnlPct), integer ms (openedAt,
 * closedAt), or null when the row had none. The counts are the first page's `counts.spot`: every
 * later page of the read reports them, so they are identical across its pages (spec "GET
 * /v1/positions") even while positions open and close between pages. Plain strings, numbers and
 * null, so the cursor module can seal it as is.
 */
export type CursorPosition = readonly [
  sortKey: string | number | null,
  chain: string,
  token: string,
  wallet: string,
  countsOpen: number,
  countsClosed: number
]

export interface PositionsPageResult {
  readonly asOf: number
  readonly counts: { readonly spot: { readonly open: number; readonly closed: number } }
  readonly positions: Array<PositionWire>
  readonly hasMore: boolean
  /** Position of the page's last row when more rows follow; null on the last page. */
  readonly last: CursorPosition | null
}

/** Liquidity floor of `hideLowLiquidity`: 1,000 USD (spec "Limits"). */
export const lowLiquidityFloorUsd: Fixed.Fixed = 1_000n * 10n ** 18n
/** Worth floor of `hideDust`: 1 USD (spec "Limits"). */
export const dustFloorUsd: Fixed.Fixed = 10n ** 18n
export const defaultLimit = 50
export const maxLimit = 100

/** Default sort of a lifecycle: the biggest open positions first; the latest closed first. */
export const defaultSort = (lifecycle: Lifecycle): PositionsRead["sort"] =>
  lifecycle === "open" ? { field: "value", direction: "desc" } : { field: "closedAt", direction: "desc" }

/** The page size actually served: integer, 1-100, 50 when not a number. */
export const clampLimit = (limit: number): number => {
  if (!Number.isFinite(limit)) return defaultLimit
  const whole = Math.trunc(limit)
  return whole < 1 ? 1 : whole > maxLimit ? maxLimit : whole
}

/**
 * Wallet spelling used for matching and binding: EVM addresses are case-insensitive, so an
 * EVM-shaped address is lower-cased; anything else (Solana) is case-sensitive and kept.
 */
export const canonicalWallet = (wallet: string): string => (isAddressOn("base", wallet) ? wallet.toLowerCase() : wallet)

const sortedUnique = (values: ReadonlyArray<string>): Array<string> => {
  const out = Array.from(new Set(values))
  out.sort(compareText)
  return out
}

const normalizedQuery = (q: string | null): string | null => (q === null || q.length === 0 ? null : foldQuery(q))

const chainsOf = (read: PositionsRead): ReadonlyArray<Chain> => (read.chains.length === 0 ? allChains : read.chains)

/**
 * A canonical string of everything that decides which rows a read returns and in what order:
 * the endpoint, wallets, chains, lifecycle, hide switches, token, q and sort. Not the limit (page
 * size may change between pages) and not the cursor. Spellings that select the same rows (wallet
 * order or EVM letter case, chain order, q letter case, an empty chain list versus every chain)
 * give the same binding.
 */
export const bindingOf = (read: PositionsRead): string =>
  JSON.stringify([
    "GET /v1/positions",
    1,
    sortedUnique(read.wallets.map(canonicalWallet)),
    sortedUnique(chainsOf(read)),
    read.lifecycle,
    read.hideLowLiquidity,
    read.hideDust,
    read.hideTransfers,
    read.token === null ? null : [read.token.chain, canonicalAddress(read.token.chain, read.token.address)],
    normalizedQuery(read.q),
    read.sort.field,
    read.sort.direction
  ])

/** Code-unit order: deterministic and locale-free, unlike localeCompare. */
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

type SortKey = bigint | number | null

const compareKeys = (a: SortKey, b: SortKey, descending: boolean): number => {
  if (a === null || b === null) {
    // Rows without a sort value go last whichever the direction.
    return a === b ? 0 : a === null ? 1 : -1
  }
  const c = a < b ? -1 : a > b ? 1 : 0
  return descending ? -c : c
}

/** A row's place in the total order. */
interface OrderKey {
  readonly key: SortKey
  readonly chain: string
  readonly token: string
  readonly wallet: string
}

interface Keyed extends OrderKey {
  readonly row: PositionRow
}

/** The total order: the sort key (nulls last), then chain, token address and wallet ascending. */
const compareKeyed = (a: OrderKey, b: OrderKey, descending: boolean): number =>
  compareKeys(a.key, b.key, descending) ||
  compareText(a.chain, b.chain) ||
  compareText(a.token, b.token) ||
  compareText(a.wallet, b.wallet)

const sortKeyOf = (row: PositionRow, field: PositionSortField): SortKey => {
  switch (field) {
    case "value":
      return row.valueUsd
    case "pnl":
      return row.totalPnlUsd
    case "pnlPct":
      return row.pnlPct
    case "openedAt":
      return row.position.openedAt
    case "closedAt":
      return row.position.closedAt ?? null
  }
}

const isFixedField = (field: PositionSortField): boolean => field === "value" || field === "pnl" || field === "pnlPct"

const integerText = /^-?\d+$/

/**
 * The cursor position as this read's sort key, or null when its shape does not fit the read's
 * sort field (a cursor is sealed with its binding, so this only guards against a foreign or old
 * payload). The use case answers 400 on field `cursor` for null.
 */
export const parseCursorPosition = (
  read: PositionsRead,
  position: ReadonlyArray<string | number | null>
): CursorPosition | null => {
  if (position.length !== 6) return null
  const [key, chain, token, wallet, countsOpen, countsClosed] = position
  if (typeof chain !== "string" || typeof token !== "string" || typeof wallet !== "string") return null
  if (!isCount(countsOpen) || !isCount(countsClosed)) return null
  if (key !== null) {
    if (isFixedField(read.sort.field)) {
      if (typeof key !== "string" || !integerText.test(key)) return null
    } else if (typeof key !== "number" || !Number.isSafeInteger(key)) return null
  }
  return [key, chain, token, wallet, countsOpen, countsClosed]
}

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0

const cursorKeyed = (after: CursorPosition): OrderKey => ({
  key: typeof after[0] === "string" ? BigInt(after[0]) : after[0],
  chain: after[1],
  token: after[2],
  wallet: after[3]
})

const cursorOf = (k: OrderKey, counts: { readonly open: number; readonly closed: number }): CursorPosition => [
  typeof k.key === "bigint" ? k.key.toString() : k.key,
  k.chain,
  k.token,
  k.wallet,
  counts.open,
  counts.closed
]

/**
 * One page of positions. `after` is the `last` of the previous page (null for the first page);
 * `asOf` is the serve time, echoed. Counts cover the wallets and chains only (no switch, q, token
 * or lifecycle); the first page counts them and the cursor carries them to the read's later pages.
 */
export const readPositions = (
  rows: ReadonlyArray<PositionRow>,
  read: PositionsRead,
  after: CursorPosition | null,
  asOf: number
): PositionsPageResult => {
  const wallets = new Set(read.wallets.map(canonicalWallet))
  const chains = new Set<string>(chainsOf(read))
  const tokenChain = read.token?.chain ?? null
  const tokenAddress = read.token === null ? null : canonicalAddress(read.token.chain, read.token.address)
  const q = normalizedQuery(read.q)
  const field = read.sort.field
  const descending = read.sort.direction === "desc"
  const limit = clampLimit(read.limit)
  const start = after === null ? null : cursorKeyed(after)

  let open = 0
  let closed = 0
  const selected: Array<Keyed> = []
  for (const row of rows) {
    const p = row.position
    if (!chains.has(p.chain) || !wallets.has(canonicalWallet(p.walletAddress))) continue
    if (p.status === "open") open++
    else closed++

    if (p.status !== read.lifecycle) continue
    if (read.hideTransfers && p.isTransfer) continue
    if (p.status === "open") {
      if (read.hideLowLiquidity && row.liquidityUsd < lowLiquidityFloorUsd) continue
      // No market record means no price to reach 1 USD at: counted as dust.
      if (read.hideDust && (row.valueUsd === null || row.valueUsd < dustFloorUsd)) continue
    }
    const token = canonicalAddress(p.chain, p.token.address)
    if (tokenChain !== null && (p.chain !== tokenChain || token !== tokenAddress)) continue
    if (q !== null && !foldCase(p.token.symbol).includes(q) && !foldCase(p.token.name).includes(q)) continue

    const keyed: Keyed = {
      row,
      key: sortKeyOf(row, field),
      chain: p.chain,
      token,
      wallet: canonicalWallet(p.walletAddress)
    }
    if (start !== null && compareKeyed(keyed, start, descending) <= 0) continue
    selected.push(keyed)
  }

  // Only the rows after the cursor are sorted; a read is per request, never per event.
  selected.sort((a, b) => compareKeyed(a, b, descending))
  const hasMore = selected.length > limit
  const page = hasMore ? selected.slice(0, limit) : selected
  const positions = page.map((k) => k.row.position)
  const spot = after === null ? { open, closed } : { open: after[4], closed: after[5] }
  return {
    asOf,
    counts: { spot },
    positions,
    hasMore,
    last: hasMore ? cursorOf(page[page.length - 1]!, spot) : null
  }
}
