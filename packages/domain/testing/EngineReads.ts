/**
 * Everything an engine serves, as text in a fixed order: two engines with equal reads are the
 * same market to every reader. Shared by the snapshot tests (a restored engine against the
 * original) and the ingest tests (a market fed in batches against one fold of the same events).
 */
import { chains } from "../src/Chain.js"
import * as Discovery from "../src/discovery/Discovery.js"
import type { Timeframe } from "../src/market/Candles.js"
import type { MarketEngine } from "../src/market/MarketEngine.js"
import type { TokenBook } from "../src/market/TokenBook.js"

const timeframes: ReadonlyArray<Timeframe> = ["1s", "15s", "1m", "5m", "1h", "4h", "1d", "7d"]

export interface ReadsOptions {
  /**
   * Leave out each token's `updatedAt`. It moves on every change and never back (TokenBook.touch:
   * a change at or before the last one is stamped a millisecond later), so it counts the changes
   * told, and those depend on how the events were cut into batches and on when the clock moved;
   * everything else is the same for any cut.
   */
  readonly withoutTokenUpdatedAt?: boolean
}

/** Everything the engine serves, as text, in a fixed order. */
export const readsOf = (engine: MarketEngine, options: ReadsOptions = {}): Array<string> => {
  const out: Array<string> = [JSON.stringify(engine.stats), `now ${engine.now}`]
  for (const chain of chains) out.push(`${chain} usd ${String(engine.nativeUsdOf(chain))}`)
  const wallets = new Set<string>()
  const candidates: Array<TokenBook> = []
  for (const token of engine.allTokens()) {
    const wire = token.toWire()
    if (options.withoutTokenUpdatedAt === true) {
      const { updatedAt: _, ...rest } = wire
      out.push(JSON.stringify(rest))
    } else out.push(JSON.stringify(wire))
    if (token.launchpad !== null) candidates.push(token)
    const first = engine.tokenTradePage(token.chain, token.address, null, 10)
    out.push(JSON.stringify({ hasMore: first.hasMore, trades: first.records.map((r) => r.trade) }))
    const last = first.records[first.records.length - 1]
    if (last !== undefined) {
      const next = engine.tokenTradePage(token.chain, token.address, { timestamp: last.timestamp, seq: last.seq }, 100)
      out.push(JSON.stringify({ hasMore: next.hasMore, trades: next.records.map((r) => r.trade) }))
    }
    for (const timeframe of timeframes) {
      for (const metric of ["price", "marketCap"] as const) {
        for (const denomination of ["usd", "native"] as const) {
          out.push(JSON.stringify(token.tape.candles({ timeframe, metric, denomination })))
          out.push(JSON.stringify(token.tape.latestCandle(timeframe, metric, denomination) ?? null))
        }
      }
    }
    for (const slot of token.positions.slots()) wallets.add(token.positions.walletAt(slot))
  }
  out.push(JSON.stringify(engine.positionsOfWallets([...wallets]).map((entry) => engine.positionWire(entry))))
  for (const feed of ["kol", "partnerscan"] as const) {
    out.push(JSON.stringify(engine.identityTradePage(feed, chains, null, 500).records.map((r) => r.trade)))
    out.push(JSON.stringify(engine.identityTradePage(feed, ["solana"], null, 50).records.map((r) => r.trade)))
  }
  for (const address of [...wallets].slice(0, 50)) {
    for (const chain of chains) {
      const wallet = engine.wallet(chain, address)
      if (wallet !== undefined) out.push(JSON.stringify({ funding: wallet.funding, labels: wallet.labels, identities: wallet.identities }))
    }
  }
  for (const column of Discovery.columnNames) {
    const ranked = Discovery.rankColumn(candidates, column, Discovery.defaultColumnRequest(column), engine.now)
    out.push(`${column}: ${ranked.map((c) => `${c.chain}:${c.address}`).join(",")}`)
  }
  return out
}

/** The first read that differs (both shown), or undefined. */
export const firstDifference = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): string | undefined => {
  if (a.length !== b.length) return `${a.length} reads against ${b.length}`
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return `read ${i}:\n  ${a[i]!.slice(0, 300)}\n  ${b[i]!.slice(0, 300)}`
  return undefined
}
