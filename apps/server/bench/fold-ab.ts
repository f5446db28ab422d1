/**
 * `pnpm bench fold-ab --base <rev>`: is the working tree's engine faster or slower than `<rev>`'s?
 * For changes too small for `pnpm bench engine`: separate runs of it on this machine spread ±10%
 * (its speed drifts by 2x over a day), so a 3% change needs more runs than anyone makes. Here both
 * engines run in one process on the same events, taking turns: the domain package of each tree is
 * bundled (esbuild, the service's own bundler) and imported side by side, the simulator's busy
 * mix is generated once (by the working tree's `@spot/simulator`), and the two fold it alternately
 * (`--rounds` each, the order swapped every round), each on a fresh engine, changes drained per
 * simulated second as the service does. The drift lands on both alike; the figure is the median
 * of the per-round time ratios. Against a copy of itself (`--base HEAD` on a clean tree) the ratio
 * stayed within 0.96-1.04: smaller differences are noise. Last line: one JSON object, `ratio` =
 * base time / working-tree time (above 1: faster).
 *
 *   npm run bench -- fold-ab --base HEAD~1 [--rounds 8] [--trades 200000] [--seed 1]
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import * as Simulator from "@spot/simulator"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1]! : fallback
}
const base = arg("base", "HEAD")
const rounds = Number(arg("rounds", "8"))
const targetTrades = Number(arg("trades", "200000"))
const seed = Number(arg("seed", "1"))
const root = fileURLToPath(new URL("../../..", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "spot-fold-ab-"))

/** What each bundle exports: the domain's engine. */
interface Domain {
  readonly MarketEngine: new() => { apply(event: unknown): unknown; drainChanges(): unknown }
}

/** Bundles `tree`'s domain package into one module and imports it. */
const domainOf = async (tree: string, name: string): Promise<Domain> => {
  const entry = join(tree, "packages/domain", `.fold-ab-${name}.ts`)
  writeFileSync(entry, `export { MarketEngine } from "./src/index.js"\n`)
  const outfile = join(scratch, `${name}.mjs`)
  try {
    await build({ entryPoints: [entry], outfile, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning" })
  } finally {
    rmSync(entry)
  }
  return (await import(outfile)) as Domain
}

const baseTree = join(scratch, "base")
execFileSync("git", ["-C", root, "worktree", "add", "--detach", "-q", baseTree, base])
const cleanUp = () => {
  execFileSync("git", ["-C", root, "worktree", "remove", "--force", baseTree])
  rmSync(scratch, { recursive: true, force: true })
}
process.on("SIGINT", () => {
  cleanUp()
  process.exit(130)
})

try {
  // the base tree's dependencies are the working tree's (a worktree has no node_modules)
  symlinkSync(join(root, "node_modules"), join(baseTree, "node_modules"))
  symlinkSync(join(root, "packages/domain/node_modules"), join(baseTree, "packages/domain/node_modules"))
  const engines = { base: await domainOf(baseTree, "base"), tree: await domainOf(root, "tree") }

  const startTime = 1_700_000_000_000
  const simulator = new Simulator.MarketSimulator({ seed, startTime, tradesPerSecond: 2_000, launchesPerMinute: 600 })
  const seconds: Array<ReadonlyArray<{ readonly type: string }>> = []
  let trades = 0
  for (let second = 1; trades < targetTrades; second++) {
    const events = simulator.advance(startTime + second * 1_000)
    for (const event of events) if (event.type === "swap") trades++
    seconds.push(events)
  }

  const gc = (globalThis as { gc?: () => void }).gc
  const fold = (domain: Domain): number => {
    gc?.()
    const engine = new domain.MarketEngine()
    const started = performance.now()
    for (const events of seconds) {
      for (const event of events) engine.apply(event)
      engine.drainChanges()
    }
    return performance.now() - started
  }
  fold(engines.base) // warm-up, both
  fold(engines.tree)
  const times = { base: [] as Array<number>, tree: [] as Array<number> }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (["base", "tree"] as const) : (["tree", "base"] as const)
    for (const which of order) times[which].push(fold(engines[which]))
  }
  const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[values.length >> 1]!
  const ratios = times.base.map((ms, i) => ms / times.tree[i]!)
  for (const which of ["base", "tree"] as const) {
    console.log(`${which === "base" ? base : "working tree"}: ${times[which].map((ms) => ms.toFixed(0)).join(" ")} ms, median ${Math.round(trades / median(times[which]) * 1000)} trades/s`)
  }
  console.log(`base/tree time per round: ${ratios.map((r) => r.toFixed(3)).join(" ")}`)
  console.log(JSON.stringify({
    bench: "fold-ab",
    base,
    trades,
    rounds,
    baseTradesPerSec: Math.round(trades / median(times.base) * 1000),
    treeTradesPerSec: Math.round(trades / median(times.tree) * 1000),
    ratio: Number(median(ratios).toFixed(3))
  }))
} finally {
  cleanUp()
}
