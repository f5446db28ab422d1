/**
 * Run by two-engines.test.ts in a process of its own (`node --import tsx fold-alone.ts …`): folds
 * one market of TwoMarkets.ts alone and prints what its engine serves (EngineReads.readsOf) as one
 * JSON line.
 *
 *   fold-alone.ts <tag> [--snapshot-to <file>] [--restore <file>]
 *
 * `--snapshot-to`: also writes the engine's snapshot there. `--restore`: then restores that
 * snapshot (another market's, written by another process) beside the engine this process folded,
 * and prints the restored engine's reads as a second line.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { MarketEngine } from "@spot/domain"
import { EngineSnapshot } from "@spot/adapters-storage"
import { readsOf } from "@spot/domain/testing"
import { foldMinute, marketMinutes } from "./TwoMarkets.js"

const [tag, ...rest] = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const at = rest.indexOf(name)
  return at < 0 ? undefined : rest[at + 1]
}
const engine = new MarketEngine()
marketMinutes(tag!).forEach((events, m) => foldMinute(engine, events, m))
const snapshotTo = option("--snapshot-to")
if (snapshotTo !== undefined) writeFileSync(snapshotTo, EngineSnapshot.snapshot(engine))
process.stdout.write(`${JSON.stringify(readsOf(engine))}\n`)
const restoreFrom = option("--restore")
if (restoreFrom !== undefined) {
  const restored = EngineSnapshot.restore(readFileSync(restoreFrom))
  process.stdout.write(`${JSON.stringify(readsOf(restored))}\n`)
}
