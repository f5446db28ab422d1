import { MarketEngine, Simulator, Chain } from "@spot/domain"
const chains = Chain.chains
import { createHash } from "node:crypto"
const target = Number(process.argv[2] ?? 30000)
const seed = Number(process.argv[3] ?? 7)
const startTime = 1_700_000_000_000
const simulator = new Simulator.MarketSimulator({ seed, startTime, tradesPerSecond: 2_000, launchesPerMinute: 600 })
const engine = new MarketEngine({ tapeRetainMs: 24 * 3_600_000, recentTradesPerToken: 1_000_000, identityFeedSize: 20_000 })
const h = createHash("sha256")
let swaps = 0, n = 0
const parts: Record<string, ReturnType<typeof createHash>> = { trades: createHash("sha256"), tokens: createHash("sha256"), positions: createHash("sha256"), pages: createHash("sha256") }
for (let minute = 1; swaps < target; minute++) {
  for (const e of simulator.advance(startTime + minute * 20_000)) {
    const r = engine.apply(e); if (e.type === "swap") swaps++
    if (r !== undefined) parts.trades.update("REJ" + r)
    if (++n % 997 === 0) {
      const c = engine.drainChanges()
      for (const t of c.trades) parts.trades.update(JSON.stringify([t.seq, t.timestamp, t.chain, t.token, t.trader, t.flags, t.terminal, t.trade]))
      for (const t of c.tokens) parts.tokens.update(JSON.stringify(t.toWire()))
      for (const p of c.positions) parts.positions.update(JSON.stringify(engine.positionWire(p)))
    }
  }
}
engine.advanceTo(engine.now + 3_600_000)
const c = engine.drainChanges()
for (const t of c.trades) parts.trades.update(JSON.stringify(t.trade))
for (const t of engine.allTokens()) {
  parts.tokens.update(JSON.stringify(t.toWire()))
  const page = engine.tokenTradePage(t.chain, t.address, null, 1_000_000)
  parts.pages.update(JSON.stringify(page.records.map((r) => [r.seq, r.trade])))
}
for (const feed of ["kol", "partnerscan"] as const) parts.pages.update(JSON.stringify(engine.identityTradePage(feed, chains, null, 100000).records.map((r) => r.trade.id)))
const wallets = new Set<string>()
for (const t of engine.allTokens()) for (const w of t.positions.keys()) wallets.add(w)
for (const p of engine.positionsOfWallets([...wallets])) parts.positions.update(JSON.stringify(engine.positionWire(p)))
console.log(JSON.stringify({ stats: engine.stats, ...Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, v.digest("hex").slice(0, 16)])) }))
