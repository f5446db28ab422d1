/**
 * The snapshot files themselves: a process killed with SIGKILL at any point of writing a snapshot
 * leaves every snapshot it had finished readable (checksum intact), the one being written
 * invisible (its temporary file is never listed and is removed when a store starts), and never a
 * half-written snapshot under a snapshot's name. Plus the store's own rules: newest first, the
 * newest two of a log kept, damaged files listed with the problem or set aside when loaded.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FileSnapshotStore } from "@spot/adapters-storage"
import type { SnapshotHeader } from "@spot/application"
import { bodyOf } from "./snapshot-writer.child.js"

const directories: Array<string> = []
const freshDirectory = () => {
  const directory = mkdtempSync(join(tmpdir(), "spot-snapshot-files-"))
  directories.push(directory)
  return directory
}
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true })
})

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const header = (seq: number, logId = "log-a"): SnapshotHeader => ({ logId, seq, eventId: `event-${seq}`, engine: "test", takenAt: 1_000 + seq })
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0

/**
 * Starts the writer and kills it with SIGKILL `afterMs` after its `after`-th completed save, or
 * (`afterMs` = "temporary") as soon as the next save's temporary file appears (mid-write).
 */
const writeUntilKilled = (
  directory: string,
  after: number,
  afterMs: number | "temporary"
): Promise<{ readonly saved: number; readonly temporaryAtKill: boolean }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "snapshot-writer.child.ts"), directory], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let saved = 0
    let temporaryAtKill = false
    let armed = false
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (text: string) => {
      for (const match of text.matchAll(/saved (\d+)/g)) saved = Math.max(saved, Number(match[1]))
      if (saved >= after && !armed) {
        armed = true
        const kill = () => {
          temporaryAtKill = readdirSync(directory).some((name) => name.endsWith(".tmp"))
          child.kill("SIGKILL")
        }
        if (afterMs !== "temporary") setTimeout(kill, afterMs)
        else {
          const watcher = watch(directory, (_event, name) => {
            if (name === null || !String(name).endsWith(".tmp") || child.exitCode !== null || child.signalCode !== null) return
            watcher.close()
            kill()
          })
          child.once("exit", () => watcher.close())
        }
      }
    })
    child.on("error", reject)
    child.on("exit", (_code, signal) => (signal === "SIGKILL" ? resolve({ saved, temporaryAtKill }) : reject(new Error(`writer exited on its own (${signal})`))))
  })

describe("FileSnapshotStore", () => {
  it("kill -9 at any point of a write leaves the finished snapshots usable and the unfinished one invisible", async () => {
    let killedMidWrite = 0
    const points: Array<number | "temporary"> = [0, 20, 60, 120, "temporary", "temporary", "temporary"]
    for (const afterMs of points) {
      if (afterMs === "temporary" && killedMidWrite > 0) continue // one mid-write kill is enough
      const directory = freshDirectory()
      const { saved, temporaryAtKill } = await writeUntilKilled(directory, 2, afterMs)
      if (temporaryAtKill) killedMidWrite++
      // What a restarted server sees:
      const store = await run(FileSnapshotStore.make({ directory }))
      const listing = await run(store.list)
      expect(listing.length).toBeGreaterThanOrEqual(1)
      for (const entry of listing) expect("header" in entry, JSON.stringify(entry)).toBe(true)
      const seqs = listing.map((entry) => ("header" in entry ? entry.header.seq : -1))
      // every save the writer reported is there (the newest two are kept); nothing half-written is
      expect(seqs[0]).toBeGreaterThanOrEqual(saved)
      expect(seqs[0]! - saved).toBeLessThanOrEqual(1) // the one in flight may have completed its rename
      for (const entry of listing) {
        const body = await run(store.load(entry.name))
        expect(sameBytes(body, bodyOf((entry as { header: SnapshotHeader }).header.seq)), entry.name).toBe(true)
      }
      // the store removed the temporary file of the interrupted write
      expect(readdirSync(directory).filter((name) => name.endsWith(".tmp"))).toEqual([])
    }
    // at least one kill landed in the middle of writing a file
    expect(killedMidWrite).toBeGreaterThan(0)
  }, 180_000)

  it("lists newest first, keeps the newest two of the written log, and tells damaged files apart", async () => {
    const directory = freshDirectory()
    const store = await run(FileSnapshotStore.make({ directory }))
    const bodies = new Map<number, Uint8Array>()
    for (const seq of [5, 9, 7]) {
      const body = new Uint8Array(10_000).map((_, i) => (i * seq) & 0xff)
      bodies.set(seq, body)
      // in uneven chunks: the file holds their concatenation, and load gives it back whole
      await run(store.save(header(seq), [body.subarray(0, 1), body.subarray(1, 4_097), body.subarray(4_097)]))
    }
    let listing = await run(store.list)
    expect(listing.map((entry) => ("header" in entry ? entry.header.seq : 0))).toEqual([9, 7])
    expect(listing[0]).toMatchObject({ header: header(9) })
    expect(sameBytes(await run(store.load(listing[0]!.name)), bodies.get(9)!)).toBe(true)

    // another log's snapshot is listed too (the use case refuses it); a write of log A drops it
    await run(store.save(header(3, "log-b"), [new Uint8Array(10)]))
    expect((await run(store.list)).map((entry) => entry.name)).toHaveLength(1) // log-b's write kept log-b's newest two only
    await run(store.save(header(11), [new Uint8Array(10)]))
    await run(store.save(header(12), [new Uint8Array(10)]))
    listing = await run(store.list)
    expect(listing.map((entry) => ("header" in entry ? `${entry.header.logId}:${entry.header.seq}` : "?"))).toEqual(["log-a:12", "log-a:11"])

    // a truncated file is listed with the problem; a flipped byte fails the checksum and is set aside
    const [newest, older] = listing.map((entry) => entry.name)
    const olderPath = join(directory, older!)
    writeFileSync(olderPath, readFileSync(olderPath).subarray(0, 30))
    const newestPath = join(directory, newest!)
    const damaged = readFileSync(newestPath)
    damaged[damaged.length - 1] ^= 1
    writeFileSync(newestPath, damaged)
    listing = await run(store.list)
    expect(listing[0]).toMatchObject({ name: newest, header: header(12) })
    expect(listing[1]).toMatchObject({ name: older })
    expect((listing[1] as { problem: string }).problem).toMatch(/truncated/)
    const failure = await run(Effect.flip(store.load(newest!)))
    expect(failure.message).toMatch(/checksum mismatch/)
    expect(readdirSync(directory)).toContain(`${newest}.damaged`)
    expect((await run(store.list)).map((entry) => entry.name)).toEqual([older])
    // the next write clears both away
    await run(store.save(header(13), [new Uint8Array(10)]))
    expect(readdirSync(directory).sort()).toEqual([FileSnapshotStore.fileNameOf(header(13))])
  })
})
