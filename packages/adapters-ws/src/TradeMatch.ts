/**
 * Which trades a `spot.trades` subscription receives, decided from the trade record alone (its
 * flags, terminal and identities are the trader's at trade time, the same facts the REST feeds
 * were filled with), so the decision never reads engine state that may have moved since.
 */
import type { IdentityFeed } from "./SubscribeFilters.js"

/** What the matchers read of a trade. */
export interface TradeTraits {
  readonly flags: ReadonlyArray<string>
  readonly terminal: string | null
  readonly identities: ReadonlyArray<{ readonly source: string }>
}

/**
 * The `flags` filter (spec "spot.trades"): the trader carries at least one of the values; the value
 * `partner` also matches a trade routed through the partner terminal, whatever the trader's flags
 * (a trade with no known terminal by a wallet flagged `partner` already matches on its flags).
 * `null` (filter left out) keeps every trade.
 */
export const matchesFlags = (trade: TradeTraits, wanted: ReadonlyArray<string> | null): boolean => {
  if (wanted === null) return true
  const flags = trade.flags
  for (let i = 0; i < wanted.length; i++) {
    const flag = wanted[i]!
    if (flags.includes(flag)) return true
    if (flag === "partner" && trade.terminal === "partner") return true
  }
  return false
}

/**
 * Whether a trade belongs to an identity feed, by the rule the engine fills `GET /v1/trades` with
 * (MarketEngine.inFeed): `kol` = the trader was labelled `kol`; `partnerscan` = labelled
 * `partnerscan` or holding a `partnerscan` profile. Labels are part of the trade's flags.
 */
export const inIdentityFeed = (trade: TradeTraits, feed: IdentityFeed): boolean => {
  if (feed === "kol") return trade.flags.includes("kol")
  if (trade.flags.includes("partnerscan")) return true
  const identities = trade.identities
  for (let i = 0; i < identities.length; i++) if (identities[i]!.source === "partnerscan") return true
  return false
}
