/**
 * The warm-up's record in the data directory (`warm-up.json`): read back as written, replaced
 * whole, none when there is no file or it is not a whole record; the layer is the same file.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { WarmUpRecords } from "@spot/application"
import type { WarmUpRecord } from "@spot/application"
import { FileWarmUpRecords } from "@spot/adapters-storage"

const scratch = mkdtempSync(join(tmpdir(), "spot-warm-up-record-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const record: WarmUpRecord.WarmUpRecord = { seed: 3, tradesPerSecond: 20, launchesPerMinute: 30, warmUpMs: 180_000, warmUpEnd: 1_700_000_000_000, complete: false }

describe("FileWarmUpRecords", () => {
  it("keeps the record as warm-up.json in the data directory (made if missing), replaced whole", () => {
    const dataDir = join(scratch, "a", "data")
    expect(FileWarmUpRecords.read(dataDir)).toBeUndefined()
    FileWarmUpRecords.write(dataDir, record)
    expect(FileWarmUpRecords.fileIn(dataDir)).toBe(join(dataDir, "warm-up.json"))
    expect(JSON.parse(readFileSync(join(dataDir, "warm-up.json"), "utf8"))).toEqual(record)
    FileWarmUpRecords.write(dataDir, { ...record, complete: true })
    expect(FileWarmUpRecords.read(dataDir)).toEqual({ ...record, complete: true })
    expect(existsSync(join(dataDir, "warm-up.json.tmp"))).toBe(false)
  })

  it("reads a file that is not a whole record as none", () => {
    const dataDir = join(scratch, "b")
    FileWarmUpRecords.write(dataDir, record)
    writeFileSync(FileWarmUpRecords.fileIn(dataDir), "{\"seed\":3")
    expect(FileWarmUpRecords.read(dataDir)).toBeUndefined()
    writeFileSync(FileWarmUpRecords.fileIn(dataDir), JSON.stringify({ ...record, warmUpEnd: null }))
    expect(FileWarmUpRecords.read(dataDir)).toBeUndefined()
  })

  it.effect("the layer reads and writes the same file", () =>
    Effect.gen(function*() {
      const dataDir = join(scratch, "c")
      const records = yield* WarmUpRecords
      expect(yield* records.read).toBeUndefined()
      yield* records.write(record)
      expect(FileWarmUpRecords.read(dataDir)).toEqual(record)
      expect(yield* records.read).toEqual(record)
    }).pipe(Effect.provide(FileWarmUpRecords.layer({ dataDir: join(scratch, "c") }))))
})
