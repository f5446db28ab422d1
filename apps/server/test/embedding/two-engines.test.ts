/**
 * Two engines in one process share no state: fed different markets (TwoMarkets.ts: terminals and
 * flag lists of their own), folded a minute of each in turn, each engine serves exactly what the
 * same events serve folded alone in a separate process. And a process that folded one market can
 * restore the other market's snapshot, written by another process, beside it: the codes of a
 * trade feed are the engine's own and travel in its snapshot.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { MarketEngine } from "@spot/domain"
import { EngineSnapshot } from "@spot/adapters-storage"
import { firstDifference, readsOf } from "@spot/domain/testing"
import { foldMinute, marketMinutes, minutes } from "./TwoMarkets.js"

const script = fileURLToPath(new URL("./fold-alone.ts", import.meta.url))

/** The lines `fold-alone.ts` prints for `args`, each the reads of one engine. */
const foldAlone = (args: ReadonlyArray<string>): Array<Array<string>> =>
  execFileSync(process.execPath, ["--import", "tsx", script, ...args], { encoding: "utf8", maxBuffer: 1 << 28 })
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Array<string>)

describe("two engines in one process", () => {
  it("each serves what its events serve folded alone in another process, and restores another process's snapshot beside the other", () => {
    const scratch = mkdtempSync(join(tmpdir(), "spot-two-engines-"))
    try {
      const snapshotB = join(scratch, "b.snapshot")
      const [aloneB] = foldAlone(["b", "--snapshot-to", snapshotB])
      // a process that folded market a, then restores market b's snapshot from the other process
      const [aloneA, restoredB] = foldAlone(["a", "--restore", snapshotB])

      const a = new MarketEngine()
      const b = new MarketEngine()
      const minutesA = marketMinutes("a")
      const minutesB = marketMinutes("b")
      for (let m = 0; m < minutes; m++) {
        // b first: the two engines meet their terminals and flag lists in the other order than alone
        foldMinute(b, minutesB[m]!, m)
        foldMinute(a, minutesA[m]!, m)
      }
      const readsA = readsOf(a)
      const readsB = readsOf(b)
      // the markets differ where a shared table of codes would mix them up
      expect(readsA.some((read) => read.includes(`"platform":"a-`))).toBe(true)
      expect(readsB.some((read) => read.includes(`"platform":"b-`))).toBe(true)
      expect(readsA.some((read) => read.includes(`"a-desk"`))).toBe(true)
      expect(readsB.some((read) => read.includes(`"b-desk"`))).toBe(true)
      expect(firstDifference(readsA, aloneA!)).toBeUndefined()
      expect(firstDifference(readsB, aloneB!)).toBeUndefined()
      expect(firstDifference(restoredB!, aloneB!)).toBeUndefined()
      // and each engine's snapshot restores here, beside the other, to the same reads
      expect(firstDifference(readsOf(EngineSnapshot.restore(EngineSnapshot.snapshot(a))), aloneA!)).toBeUndefined()
      expect(firstDifference(readsOf(EngineSnapshot.restore(EngineSnapshot.snapshot(b))), aloneB!)).toBeUndefined()
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  }, 180_000)
})
