/**
 * The snapshot worker's first import (snapshot-worker.ts), so it runs before the engine's modules
 * are evaluated: the kernel favours the service's own threads (serving, folding, the embedded
 * database) over this one when they want the same core, by this thread's nice value (Linux: set
 * on the thread's own id; elsewhere it runs as is).
 */
import { readlinkSync } from "node:fs"
import { setPriority } from "node:os"

try {
  const tid = Number(readlinkSync("/proc/thread-self").split("/").pop())
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19)
} catch {
  // not Linux, or not allowed: the default priority
}
