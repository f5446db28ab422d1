/**
 * A snapshot builder's thread (SnapshotWorker.ts says the protocol): restores the base (read from
 * its file here, or moved here), folds the log's pages as they come, serializes the engine and
 * stores it in the snapshot directory (or hands its bytes back, moved, not copied).
 * workerData: { options: EngineOptions, context: EngineSnapshot.ThreadContext } (the service's: this
 * thread runs the same engine code, loaded on its own).
 */
import "./snapshot-worker-priority.js" // first: lowers this thread's priority before the rest loads
import { parentPort, workerData } from "node:worker_threads"
import { Effect } from "effect"
import { SnapshotFold } from "@spot/application"
import type { SnapshotHeader, SnapshotStore } from "@spot/application"
import { EngineCodecLive, EngineSnapshot, FileSnapshotStore } from "@spot/adapters-storage"
import type { EngineOptions } from "@spot/domain"
import type { WorkerAnswer } from "./SnapshotWorker.js"

const port = parentPort!
const { context, options } = workerData as { readonly options: EngineOptions; readonly context: EngineSnapshot.ThreadContext }
EngineSnapshot.joinThreadContext(context)
const codec = Effect.runSync(EngineCodecLive.make) // after joining: the process's fingerprint
let fold: SnapshotFold.SnapshotFold | undefined
let files: SnapshotStore["Service"] | undefined
let folded = 0
let foldMs = 0

const answer = (message: WorkerAnswer, transfer: Array<ArrayBuffer> = []) => port.postMessage(message, transfer)
const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)

interface Question {
  readonly base?: Uint8Array
  readonly baseName?: string
  readonly directory?: string
  readonly texts?: ReadonlyArray<string>
  readonly finish?: { readonly header?: SnapshotHeader }
}

/** One question at a time (the service waits for each answer). */
const handle = async (message: Question): Promise<void> => {
  const started = performance.now()
  if (message.baseName !== undefined && message.directory !== undefined) {
    files = await Effect.runPromise(FileSnapshotStore.make({ directory: message.directory }))
    const loaded = await Effect.runPromise(Effect.result(files.load(message.baseName)))
    if (loaded._tag === "Failure") return answer({ error: `its base ${message.baseName} does not load: ${loaded.failure.message}` })
    fold = await Effect.runPromise(SnapshotFold.start(codec, loaded.success, options))
    foldMs += performance.now() - started
    return answer({ ack: 0 })
  }
  if (message.base !== undefined) {
    fold = await Effect.runPromise(SnapshotFold.start(codec, message.base, options))
    foldMs += performance.now() - started
    return answer({ ack: 0 })
  }
  if (fold === undefined) throw new Error("no base given")
  if (message.texts !== undefined) {
    folded = fold.fold(message.texts)
    foldMs += performance.now() - started
    return answer({ ack: folded })
  }
  const chunks = await Effect.runPromise(fold.finish)
  fold = undefined
  const serializeMs = performance.now() - started
  const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const header = message.finish?.header
  if (header === undefined || files === undefined) {
    const buffers = [...new Set(chunks.map((chunk) => chunk.buffer as ArrayBuffer))]
    return answer({ done: { chunks, bytes, events: folded, foldMs, serializeMs, writeMs: 0 } }, buffers)
  }
  const writeStarted = performance.now()
  const saved = await Effect.runPromise(Effect.result(files.save(header, chunks)))
  if (saved._tag === "Failure") return answer({ error: saved.failure.message, store: true })
  answer({ done: { name: saved.success, bytes, events: folded, foldMs, serializeMs, writeMs: performance.now() - writeStarted } })
}

port.on("message", (message: Question) => {
  handle(message).catch((error: unknown) => answer({ error: describe(error) }))
})
