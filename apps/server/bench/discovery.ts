/**
 * `pnpm bench discovery`: how long `POST /v1/discovery`'s ranking takes on a real market, by sort
 * field. The simulated market (the engine bench's busy mix, `--tokens` live tokens, default
 * 14,000: what the service reaches in 26 minutes of simulated traffic) is folded untimed; then
 * each sort field ranks all three columns, limit 100, over every launchpad token of the five
 * chains, as the use case does (`DiscoveryQueries.discover`: the market's tokens are the
 * candidates, read through their getters). Median of `--runs` (default 21) after warm-up; also one
 * filtered request (seven filters). The ranking grows with the number of tokens: the service's
 * discovery p50 is about 21 ms at 7,600 tokens and 40 ms at 14,000.
 *
 *   node --import tsx apps/server/bench/discovery.ts [--tokens 14000] [--runs 21] [--seed 1]
 *
 * The last line is one JSON object.
 */
import type { Discovery as DiscoveryTypes } from "@spot/domain"
import { Discovery, MarketEngine } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { numberArg } from "./support/args.js"

const targetTokens = numberArg("tokens", 14_000)
const runs = numberArg("runs", 21)
const seed = numberArg("seed", 1)

const start = 1_700_000_000_000
const simulator = new Simulator.MarketSimulator({ seed, startTime: start, tradesPerSecond: 1_000, launchesPerMinute: 600 })
const engine = new MarketEngine()
let second = 1
const foldStarted = performance.now()
for (; engine.stats.tokens < targetTokens; second++) {
  for (const event of simulator.advance(start + second * 1_000)) engine.apply(event)
  engine.drainChanges()
}
const now = start + second * 1_000
const candidates = [...engine.allTokens()].filter((token) => token.launchpad !== null)
console.log(
  `market: ${engine.stats.tokens} tokens (${candidates.length} on a launchpad), ${engine.stats.trades} trades, folded in ${((performance.now() - foldStarted) / 1000).toFixed(1)} s (not timed)`
)

const columns = Discovery.columnNames
/** Median ms of ranking all three columns with `config`. */
const median = (config: (column: DiscoveryTypes.ColumnName) => Parameters<typeof Discovery.resolveColumnRequest>[1]): number => {
  const board = () => {
    for (const column of columns) Discovery.rankColumn(candidates, column, Discovery.resolveColumnRequest(column, config(column)), now)
  }
  for (let i = 0; i < 5; i++) board()
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    board()
    times.push(performance.now() - t)
  }
  return Number(times.sort((a, b) => a - b)[runs >> 1]!.toFixed(2))
}

const sorts = ["createdAt", "volume24hUsd", "marketCapUsd", "liquidityUsd", "holdersCount", "tradeCount24h", "bondingCurvePct", "bondingCurveActivity", "graduatedAt"] as const
const msBySort: Record<string, number> = {}
msBySort["default"] = median(() => ({ limit: 100 }))
for (const sortBy of sorts) msBySort[sortBy] = median(() => ({ limit: 100, sortBy }))
const filteredMs = median(() => ({
  limit: 100,
  sortBy: "volume24hUsd",
  filters: {
    ageMinutes: { max: 600 },
    lastActivityMinutes: 60,
    marketCapUsd: { min: "1000" },
    devHoldingPercent: { max: 20 },
    excludeSymbolOrName: ["scam"],
    excludeTwitter: ["@spam"],
    protocols: ["pump.fun", "bonk", "four.meme", "clanker"]
  }
}))
for (const [sortBy, ms] of Object.entries(msBySort)) console.log(`  ${sortBy.padEnd(22)} ${ms.toFixed(2)} ms for three columns`)
console.log(`  filtered (volume24hUsd) ${filteredMs.toFixed(2)} ms`)
console.log(JSON.stringify({ bench: "discovery", tokens: engine.stats.tokens, candidates: candidates.length, runs, msBySort, filteredMs }))
