/**
 * A snapshot builder's thread (SnapshotWorker.ts says the protocol): restores the base, folds the
 * log's pages as they come, serializes the engine and hands its bytes back (moved, not copied).
 * workerData: { options: EngineOptions, context: EngineSnapshot.ThreadContext } (the service's: this
 * thread runs the same engine code, loaded on its own).
 */
import { readlinkSync } from "node:fs"
import { setPriority } from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { SnapshotFold } from "@spot/application"
import { EngineSnapshot } from "@spot/domain"
import type { EngineOptions } from "@spot/domain"
import type { WorkerAnswer } from "./SnapshotWorker.js"

// The kernel favours the service's own threads (serving, folding, the embedded database) over
// this one when they want the same core: a thread's nice value (Linux; elsewhere it runs as is).
try {
  const tid = Number(readlinkSync("/proc/thread-self").split("/").pop())
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19)
} catch {
  // not Linux, or not allowed: the default priority
}

const port = parentPort!
const { context, options } = workerData as { readonly options: EngineOptions; readonly context: EngineSnapshot.ThreadContext }
EngineSnapshot.joinThreadContext(context)
let fold: SnapshotFold.SnapshotFold | undefined
let folded = 0
let foldMs = 0

const answer = (message: WorkerAnswer, transfer: Array<ArrayBuffer> = []) => port.postMessage(message, transfer)

port.on("message", (message: { readonly base?: Uint8Array | null; readonly texts?: ReadonlyArray<string>; readonly finish?: true }) => {
  try {
    const started = performance.now()
    if (message.base !== undefined) {
      fold = SnapshotFold.start(message.base, options)
      foldMs += performance.now() - started
      return answer({ ack: 0 })
    }
    if (fold === undefined) throw new Error("no base given")
    if (message.texts !== undefined) {
      folded = fold.fold(message.texts)
      foldMs += performance.now() - started
      return answer({ ack: folded })
    }
    const chunks = fold.finish()
    fold = undefined
    const buffers = [...new Set(chunks.map((chunk) => chunk.buffer as ArrayBuffer))]
    answer({ done: { chunks, events: folded, foldMs, serializeMs: performance.now() - started } }, buffers)
  } catch (error) {
    answer({ error: error instanceof Error ? `${error.message}` : String(error) })
  }
})
