/**
 * Canonical copies of short, often repeated texts that events carry (venue and asset names, asset
 * addresses, labels, funding sources, chain names). Every decoded event brings its own copy of
 * each; a record that keeps one would keep a string per record — tens of bytes per wallet and
 * per funding, the largest share of a token's heap once events come from JSON (`pnpm bench
 * engine` measures events as ingest decodes them). Interned, equal texts share one string.
 *
 * Bounded: past `maxInterned` distinct texts, new ones are kept as they come (correct, only not
 * shared), so texts an indexer makes unique cannot grow the table without end. The table holds
 * values only, no state of any engine: sharing it between engines changes no result.
 */
import type { Chain } from "../Chain.js"
import { chains } from "../Chain.js"

export const maxInterned = 65_536

const table = new Map<string, string>()

/** The canonical copy of `text` (or `text` itself once the table is full). */
export const interned = (text: string): string => {
  const known = table.get(text)
  if (known !== undefined) return known
  if (table.size < maxInterned) table.set(text, text)
  return text
}

/** `interned`, passing null through. */
export const internedOrNull = (text: string | null): string | null => (text === null ? null : interned(text))

const chainLiterals = new Map<string, Chain>(chains.map((chain) => [chain, chain]))

/** The code's own literal of a chain name (a decoded event's `chain` is a copy). */
export const chainLiteral = (chain: Chain): Chain => chainLiterals.get(chain) ?? chain
