/**
 * One server per data directory. The embedded database (PGlite) is one process's database: two
 * servers started on one `SPOT_DATA_DIR` would each open it, each run a market of its own on the
 * same files, and batches one of them had acknowledged would be gone after a restart. The
 * snapshots and the key file are one server's too.
 *
 * The lock is the file `server.lock` in the directory, created exclusively and whole (linked into
 * place), holding the owner's process id, start time and, on Linux, its process stamp (the host's
 * boot id and the process's start in clock ticks, from `/proc`). A second server finds it and refuses to
 * start, naming the owner. A lock whose process is gone (a `kill -9`, a crash, a reboot), or that
 * cannot be read (damaged), is stale and taken over. The takeover
 * renames the stale file aside before creating a new one, so two servers taking over at once
 * cannot both succeed: exactly one rename moves the stale file, and a rename that moved a fresh
 * lock instead (another server's, created meanwhile) puts it back and refuses.
 *
 * Liveness is `kill(pid, 0)` on this host, and on Linux the stamp too: a pid that now belongs to
 * another process (reused after a crash or a reboot; in a container the server often gets the same
 * small pid every time) has another start or another boot id, and the lock is stale. So is a
 * process that has ended and is only waiting for its parent to collect it (a zombie, state `Z` or
 * `X` in `/proc`: `kill(pid, 0)` still finds it, but it holds no file any more): a restart one
 * second after a `kill -9` can find one, and would otherwise refuse to start. A lock naming
 * this very process is stale (a container restarted with the same pid 1). Without `/proc`, a
 * reused pid reads as alive: the message says to delete the file when no server runs.
 */
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Data, Effect, Layer } from "effect"

export const lockFileIn = (directory: string): string => join(directory, "server.lock")

/** Another live process holds the directory. */
export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{
  readonly lockFile: string
  readonly pid: number
  readonly since: string
  readonly message: string
}> {}

const inUse = (directory: string, lockFile: string, owner: Owner): DataDirInUse =>
  new DataDirInUse({
    lockFile,
    pid: owner.pid,
    since: owner.since,
    message: `SPOT_DATA_DIR ${directory} is in use by another server (pid ${owner.pid}, since ${owner.since}): one server per data ` +
      `directory (its embedded database, snapshots and key file are one process's). Stop that server or give this one another ` +
      `SPOT_DATA_DIR; if no server is running, delete ${lockFile}.`
  })

interface Owner {
  readonly pid: number
  readonly since: string
  /** `processStamp(pid)` when the lock was taken; absent off Linux. */
  readonly stamp: string | undefined
}

/**
 * Which process `pid` is, beyond its number: this boot's id and the process's start (clock ticks
 * since boot, field 22 of `/proc/<pid>/stat`, read after the command name's closing parenthesis,
 * since the name may hold spaces). Undefined where there is no `/proc` or no such process.
 */
export const processStamp = (pid: number): string | undefined => processStat(pid)?.stamp

/**
 * `pid`'s stamp ({@link processStamp}) and state (field 3 of `/proc/<pid>/stat`: `R`, `S`, ...,
 * `Z` for a zombie, `X` dead), or undefined where there is no `/proc` or no such process.
 */
const processStat = (pid: number): { readonly stamp: string; readonly state: string } | undefined => {
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const start = fields[19]
    return start !== undefined && /^\d+$/.test(start) ? { stamp: `${boot}/${start}`, state: fields[0]! } : undefined
  } catch {
    return undefined
  }
}

/** An ended process its parent has not collected yet: it holds no file any more. */
const hasEnded = (state: string): boolean => state === "Z" || state === "X"

const ownerOf = (text: string): Owner | undefined => {
  const [pid, since, stamp] = text.split("\n")
  const n = Number(pid)
  return Number.isSafeInteger(n) && n > 0
    ? { pid: n, since: since ?? "unknown", stamp: stamp !== undefined && stamp !== "" ? stamp : undefined }
    : undefined
}

const readOwner = (file: string): Owner | undefined => {
  try {
    return ownerOf(readFileSync(file, "utf8"))
  } catch {
    return undefined
  }
}

const isAlive = (owner: Owner): boolean => {
  if (owner.pid === process.pid) return false
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    // EPERM: it exists, owned by another user
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  const now = processStat(owner.pid)
  if (now !== undefined && hasEnded(now.state)) return false
  if (owner.stamp === undefined) return true
  // Another start or another boot: the pid was reused. No stamp to read now: judge by the pid alone.
  return now === undefined || now.stamp === owner.stamp
}

/**
 * Creates `file` with `content` only if it does not exist (false when it does), whole: the content
 * is written to a file of this process first and hard-linked into place, so the lock is never seen
 * empty (a crash between creating and writing it left an empty lock no start could take).
 */
const createExclusive = (file: string, content: string): boolean => {
  const own = `${file}.${process.pid}`
  writeFileSync(own, content, { mode: 0o600 })
  try {
    linkSync(own, file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  } finally {
    unlinkSync(own)
  }
}

/** A held lock: `release` removes it (once, and only while it is still this process's). */
export interface HeldLock {
  readonly lockFile: string
  readonly release: () => void
}

/**
 * Takes the directory's lock (creating the directory), or fails with `DataDirInUse`. Synchronous:
 * it runs once, at start-up, before anything opens the directory's files.
 */
export const acquire = (directory: string, now: Date = new Date()): HeldLock => {
  mkdirSync(directory, { recursive: true })
  const lockFile = lockFileIn(directory)
  const content = `${process.pid}\n${now.toISOString()}\n${processStamp(process.pid) ?? ""}\n`
  for (let attempt = 0; attempt < 10; attempt++) {
    if (createExclusive(lockFile, content)) {
      let held = true
      return {
        lockFile,
        release: () => {
          if (!held) return
          held = false
          if (readOwner(lockFile)?.pid === process.pid) unlinkSync(lockFile)
        }
      }
    }
    // A lock is never empty (createExclusive): one that cannot be read is damaged, and stale.
    const owner = readOwner(lockFile)
    if (owner !== undefined && isAlive(owner)) throw inUse(directory, lockFile, owner)
    // Stale: move it aside, then make sure what moved is that stale lock and not a fresh one.
    const aside = `${lockFile}.stale-${process.pid}`
    try {
      renameSync(lockFile, aside)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue // another server moved it first
      throw error
    }
    const moved = readOwner(aside)
    if (moved !== undefined && (moved.pid !== owner?.pid || moved.stamp !== owner?.stamp) && isAlive(moved)) {
      // Another server took the stale lock over and created its own meanwhile: put it back.
      try {
        linkSync(aside, lockFile)
      } catch {
        // a third one made its own lock: it decides; this one refuses all the same
      }
      unlinkSync(aside)
      throw inUse(directory, lockFile, moved)
    }
    unlinkSync(aside)
  }
  throw new Error(`could not take ${lockFile}: it keeps changing; is another server starting on the same SPOT_DATA_DIR?`)
}

/** The lock for the layer's lifetime: taken when it is built, released when its scope closes. */
export const layer = (directory: string): Layer.Layer<never, DataDirInUse> =>
  Layer.effectDiscard(
    Effect.acquireRelease(
      Effect.suspend(() => {
        try {
          return Effect.succeed(acquire(directory))
        } catch (error) {
          return error instanceof DataDirInUse ? Effect.fail(error) : Effect.die(error)
        }
      }),
      (held) => Effect.sync(() => held.release())
    )
  )
