/**
 * POST /v1/discovery: ranked launchpad boards, one per requested column, over several chains as
 * one mixed set.
 */
import { Clock, Effect } from "effect"
import type { DiscoveryRequest, TokenBook } from "@spot/domain"
import { Discovery, rangeViolations } from "@spot/domain"
import { Market } from "../Market.js"
import { Issues } from "./Params.js"

export interface RankedColumn {
  readonly column: Discovery.ColumnName
  /** Rows in rank order; a row's rank is its index + 1. */
  readonly tokens: ReadonlyArray<TokenBook>
}

/**
 * Problems are named by their path in the request body (`body.chains`,
 * `body.newPairs.filters.ageMinutes`), as the body's schema names its own (ApiRoute): one spelling
 * per field whichever check refuses it.
 */
export const discover = Effect.fnUntraced(function*(request: DiscoveryRequest) {
  const issues = new Issues()
  if (request.chains.length === 0) issues.add("body.chains", "chains names no chain: send one or more chain slugs")
  const chains = new Set<string>(issues.chainSlugs("body.chains", request.chains))
  const columns = Discovery.columnNames.filter((name) => request[name] !== undefined && request[name] !== null)
  if (columns.length === 0) issues.add("body", "name at least one column: newPairs, graduating or graduated ({} requests its defaults)")
  for (const name of columns) {
    for (const violation of rangeViolations(request[name]!.filters ?? {}, `body.${name}.filters`)) issues.add(violation.field, violation.message)
  }
  yield* issues.check()

  const market = yield* Market
  const now = yield* Clock.currentTimeMillis
  const candidates: Array<TokenBook> = []
  for (const token of market.engine.allTokens()) if (chains.has(token.chain) && token.launchpad !== null) candidates.push(token)
  return columns.map((column): RankedColumn => ({
    column,
    tokens: Discovery.rankColumn(candidates, column, Discovery.resolveColumnRequest(column, request[column]!), now)
  }))
})
