import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DataDirInUse, acquire, lockFileIn, processStamp } from "../../src/file/DataDirLock.js"

/** Runs `body` in a fresh directory, removed after it. */
const inFreshDir = async (body: (dir: string) => void | Promise<void>): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "spot-lock-"))
  try {
    await body(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** This boot's id and `pid`'s start in clock ticks (field 22 of /proc/<pid>/stat), read here independently. */
const stampOf = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 1).trim().split(/\s+/)
  return `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}/${fields[19]}`
}

/** A process that lives until killed, and one that has ended (its pid free). */
const sleeper = () => spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" })
const endedPid = async (): Promise<number> => {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
  await new Promise((resolve) => child.once("exit", resolve))
  return child.pid!
}

describe("DataDirLock: one server per data directory", () => {
  it("takes a fresh directory's lock with this process's id and stamp, and releases it", () =>
    inFreshDir((dir) => {
      const held = acquire(dir, new Date("2026-11-27T00:00:00Z"))
      expect(readFileSync(lockFileIn(dir), "utf8")).toBe(`${process.pid}\n2026-11-27T00:00:00.000Z\n${stampOf(process.pid)}\n`)
      held.release()
      expect(existsSync(lockFileIn(dir))).toBe(false)
    }))

  it("refuses while another live process holds it (its stamp, or a lock without one), naming that process, and leaves its lock alone", async () => {
    const other = sleeper()
    await new Promise((resolve) => other.once("spawn", resolve))
    try {
      for (const stamp of [stampOf(other.pid!), ""]) {
        await inFreshDir((dir) => {
          const theirs = `${other.pid}\n2026-11-27T10:00:00.000Z\n${stamp}\n`
          writeFileSync(lockFileIn(dir), theirs)
          let refusal: unknown
          try {
            acquire(dir)
          } catch (error) {
            refusal = error
          }
          expect(refusal).toBeInstanceOf(DataDirInUse)
          expect((refusal as DataDirInUse).message).toBe(
            `SPOT_DATA_DIR ${dir} is in use by another server (pid ${other.pid}, since 2026-11-27T10:00:00.000Z): one server per data directory ` +
              `(its embedded database, snapshots and key file are one process's). Stop that server or give this one another SPOT_DATA_DIR; ` +
              `if no server is running, delete ${lockFileIn(dir)}.`
          )
          expect(readFileSync(lockFileIn(dir), "utf8")).toBe(theirs)
        })
      }
    } finally {
      other.kill("SIGKILL")
    }
  })

  it("takes over a lock whose pid now belongs to another process (another start, or another boot)", async () => {
    const other = sleeper()
    await new Promise((resolve) => other.once("spawn", resolve))
    try {
      const [boot, start] = stampOf(other.pid!).split("/")
      for (const stamp of [`${boot}/${Number(start) - 1}`, `00000000-0000-0000-0000-000000000000/${start}`]) {
        await inFreshDir((dir) => {
          writeFileSync(lockFileIn(dir), `${other.pid}\n2026-11-26T00:00:00.000Z\n${stamp}\n`)
          const held = acquire(dir)
          expect(readFileSync(lockFileIn(dir), "utf8").split("\n")[0]).toBe(String(process.pid))
          held.release()
        })
      }
    } finally {
      other.kill("SIGKILL")
    }
  })

  it("reads a process's stamp as /proc has it, and none for a process that is gone", async () => {
    expect(processStamp(process.pid)).toBe(stampOf(process.pid))
    expect(processStamp(await endedPid())).toBeUndefined()
  })

  it("takes over a lock left by a process that is gone (kill -9, a crash), or one naming this very process (a container's pid 1 again)", async () => {
    for (const stalePid of [await endedPid(), process.pid]) {
      await inFreshDir((dir) => {
        writeFileSync(lockFileIn(dir), `${stalePid}\n2026-11-26T00:00:00.000Z\n`)
        const held = acquire(dir)
        expect(readFileSync(lockFileIn(dir), "utf8").split("\n")[0]).toBe(String(process.pid))
        expect(existsSync(`${lockFileIn(dir)}.stale-${process.pid}`)).toBe(false)
        held.release()
        expect(existsSync(lockFileIn(dir))).toBe(false)
      })
    }
  })

  it("takes over a lock whose process has ended but is not collected yet (a zombie: kill(pid, 0) still finds it)", async () => {
    // `sleep 0.05` ends while its parent, the shell turned `sleep 30`, never waits for it: a zombie
    const parent = spawn("sh", ["-c", "sleep 0.05 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] })
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once("data", (chunk) => resolve(String(chunk)))))
      const stateOf = () => readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]!.split(" ")[0]
      for (let waited = 0; stateOf() !== "Z"; waited += 10) {
        if (waited > 5_000) throw new Error("the child did not become a zombie")
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(() => process.kill(zombie, 0)).not.toThrow()
      for (const stamp of [stampOf(zombie), ""]) {
        await inFreshDir((dir) => {
          writeFileSync(lockFileIn(dir), `${zombie}\n2026-11-28T00:00:00.000Z\n${stamp}\n`)
          const held = acquire(dir)
          expect(readFileSync(lockFileIn(dir), "utf8").split("\n")[0]).toBe(String(process.pid))
          held.release()
        })
      }
    } finally {
      parent.kill("SIGKILL")
    }
  })

  it("takes over a lock that cannot be read (empty or damaged: a lock is always written whole)", async () => {
    for (const damaged of ["", "not a pid\n", "\u0000\u0000"]) {
      await inFreshDir((dir) => {
        writeFileSync(lockFileIn(dir), damaged)
        const held = acquire(dir)
        expect(readFileSync(lockFileIn(dir), "utf8").split("\n")[0]).toBe(String(process.pid))
        held.release()
      })
    }
  })

  it("a release leaves a lock alone that is no longer this process's", () =>
    inFreshDir((dir) => {
      const other = sleeper()
      try {
        const held = acquire(dir)
        writeFileSync(lockFileIn(dir), `${other.pid}\nlater\n`)
        held.release()
        expect(readFileSync(lockFileIn(dir), "utf8")).toBe(`${other.pid}\nlater\n`)
      } finally {
        other.kill("SIGKILL")
      }
    }))
})
