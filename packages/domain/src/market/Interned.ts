/**
 * Canonical copies of short, often repeated texts that events carry (venue and asset names, asset
 * addresses, labels, funding sources, terminals). Every decoded event brings its own copy of
 * each; a record that keeps one would keep a string per record — tens of bytes per wallet and
 * per funding, the largest share of a token's heap once events come from JSON (`pnpm bench
 * engine` measures events as ingest decodes them). Interned, equal texts share one string.
 *
 * One `Interner` per engine (MarketEngine creates it and hands it to the records that keep such
 * texts): two engines in one process share no table, so one cannot fill the other's slots or keep
 * its texts alive. It holds values only and decides nothing: a snapshot leaves it out, and a
 * restored engine starts an empty one (the snapshot's string table already restores equal short
 * texts as one string).
 *
 * Bounded: past `maxInterned` distinct texts, new ones are kept as they come (correct, only not
 * shared), so texts an indexer makes unique cannot grow the table without end.
 */
import type { Chain } from "../Chain.js"
import { chains } from "../Chain.js"

export const maxInterned = 65_536

export class Interner {
  private readonly table = new Map<string, string>()

  /** The canonical copy of `text` (or `text` itself once the table is full). */
  of(text: string): string {
    const known = this.table.get(text)
    if (known !== undefined) return known
    if (this.table.size < maxInterned) this.table.set(text, text)
    return text
  }

  /** `of`, passing null through. */
  orNull(text: string | null): string | null {
    return text === null ? null : this.of(text)
  }

  /** How many distinct texts the table holds (at most `maxInterned`). */
  get size(): number {
    return this.table.size
  }
}

/** The code's own literals of the chain names: constants, the same for every engine. */
const chainLiterals = new Map<string, Chain>(chains.map((chain) => [chain, chain]))

/** The code's own literal of a chain name (a decoded event's `chain` is a copy). */
export const chainLiteral = (chain: Chain): Chain => chainLiterals.get(chain) ?? chain
