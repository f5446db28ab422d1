/**
 * GET /v1/positions: the spot positions of up to 100 wallets, filtered, sorted and keyset-paged.
 */
import { Clock, Effect } from "effect"
import type { PositionsPage } from "@spot/domain"
import { Chain, Positions, PositionsQuery } from "@spot/domain"
import { CursorCodec } from "../ports/CursorCodec.js"
import { Market } from "../Market.js"
import { Issues, refuseUnknown } from "./Params.js"

export const positionsParameters = [
  "wallets",
  "chains",
  "lifecycle",
  "hideLowLiquidity",
  "hideDust",
  "hideTransfers",
  "chain",
  "token",
  "q",
  "sort",
  "limit",
  "cursor"
] as const

export const maxWallets = 100
export const lifecycles = ["open", "closed"] as const
export const sortFields = ["value", "pnl", "pnlPct", "openedAt", "closedAt"] as const

export const positions = Effect.fnUntraced(function*(params: Readonly<Record<string, string | undefined>>) {
  const issues = new Issues()
  refuseUnknown(issues, params, positionsParameters)

  const wallets = params.wallets === undefined ? [] : issues.listEntries("wallets", params.wallets, "wallet addresses")
  if (wallets.length === 0) issues.add("wallets", "wallets is required: 1 to 100 wallet addresses, comma-separated")
  else {
    // Distinct wallets count, as on the positions stream: a repeat (or an EVM address in other
    // letter case) names no further wallet.
    const distinct = new Set(wallets.map(PositionsQuery.canonicalWallet)).size
    if (distinct > maxWallets) issues.add("wallets", `wallets names ${distinct} distinct addresses; at most ${maxWallets} per request`)
  }
  for (const wallet of wallets) {
    if (!Chain.looksLikeAddress(wallet)) issues.add("wallets", `${wallet} is not a wallet address`)
  }
  const chains = issues.chainList("chains", params.chains)
  const lifecycle = issues.oneOf("lifecycle", params.lifecycle, lifecycles, "open")
  const hideLowLiquidity = issues.boolean("hideLowLiquidity", params.hideLowLiquidity, true)
  const hideDust = issues.boolean("hideDust", params.hideDust, false)
  const hideTransfers = issues.boolean("hideTransfers", params.hideTransfers, false)

  let token: { chain: Chain.Chain; address: string } | null = null
  if ((params.chain === undefined) !== (params.token === undefined)) {
    issues.add(params.chain === undefined ? "chain" : "token", "chain and token read one token's positions together: send both or neither")
  } else if (params.chain !== undefined) {
    const chain = issues.chain("chain", params.chain)
    const address = issues.address("token", chain, params.token)
    if (chain !== undefined && address !== undefined) token = { chain, address }
  }

  let sort = PositionsQuery.defaultSort(lifecycle ?? "open")
  if (params.sort !== undefined) {
    const [field, direction, extra] = params.sort.split(":")
    if (extra !== undefined || !(sortFields as ReadonlyArray<string | undefined>).includes(field) || (direction !== "asc" && direction !== "desc")) {
      issues.add("sort", `sort must be field:asc or field:desc with field one of ${sortFields.join(", ")}`)
    } else {
      sort = { field: field as PositionsQuery.PositionSortField, direction }
    }
  }
  const limit = issues.limit("limit", params.limit, PositionsQuery.defaultLimit, PositionsQuery.maxLimit)
  const q = params.q === undefined || params.q === "" ? null : params.q

  const read: PositionsQuery.PositionsRead = {
    wallets,
    chains: chains ?? [],
    lifecycle: lifecycle ?? "open",
    hideLowLiquidity,
    hideDust,
    hideTransfers,
    token,
    q,
    sort,
    limit
  }
  const cursors = yield* CursorCodec
  const binding = PositionsQuery.bindingOf(read)
  const position = issues.cursor(cursors, binding, params.cursor)
  let after: PositionsQuery.CursorPosition | null = null
  if (position !== undefined) {
    after = PositionsQuery.parseCursorPosition(read, position)
    if (after === null) issues.add("cursor", "cursor cannot be read: send back the nextCursor of the previous page exactly as received")
  }
  yield* issues.check()

  const market = yield* Market
  const engine = market.engine
  const rows: Array<PositionsQuery.PositionRow> = []
  for (const entry of engine.positionsOfWallets(wallets)) {
    if (chains !== undefined && !chains.includes(entry.token.chain)) continue
    const view = engine.positionTokenView(entry.token)
    const valuation = Positions.valuationOf(entry.state, view)
    rows.push({
      position: Positions.toWire(entry.state, view, entry.wallet.funding, entry.wallet.identities),
      liquidityUsd: view.liquidityUsd,
      valueUsd: valuation?.valueUsd ?? null,
      totalPnlUsd: valuation?.totalPnlUsd ?? null,
      pnlPct: valuation?.pnlPct ?? null
    })
  }
  const asOf = yield* Clock.currentTimeMillis
  const result = PositionsQuery.readPositions(rows, read, after, asOf)
  const page: PositionsPage = {
    asOf: result.asOf,
    counts: result.counts,
    hasMore: result.hasMore,
    positions: result.positions,
    nextCursor: result.last === null ? null : cursors.encode(binding, result.last)
  }
  return page
})
