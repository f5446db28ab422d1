/**
 * The `SnapshotBuilder` port on a worker thread (docs/storage.md, "Snapshots": built in a
 * worker): a snapshot is built in a thread of its own, started for it and ended after it, so the
 * service's market goes on folding meanwhile. The service's thread reads the log's texts and hands
 * them over; the worker (`snapshot-worker.ts`) decodes, folds and serializes (`SnapshotFold`).
 * Given the snapshot directory (the service's `FileSnapshotStore`), the worker reads the base
 * file and writes the new one itself, so no snapshot bytes pass through the service's heap; else
 * (a store of another kind: tests) the bytes move between the threads, never copied, and the
 * service's store saves them.
 *
 * Protocol (the service → the worker, each answered before the next is sent):
 *   { base: Uint8Array } or { baseName, directory }  → { ack: 0 }   restore the base
 *   { texts: string[] }                               → { ack: n }   fold the next page of the log
 *   { finish: { header } | {} }                       → { done }     serialize (and, with a directory, store)
 * and { error, store? } instead of any answer when something fails there (`store`: the write).
 */
import { Effect, Layer, Stream } from "effect"
import { Worker } from "node:worker_threads"
import { SnapshotBuilder, SnapshotBuildFailed, SnapshotStoreError } from "@spot/application"
import type { BuiltSnapshot, SnapshotBuildInput } from "@spot/application"
import { EngineSnapshot } from "@spot/adapters-storage"

/** What the worker posts. */
export type WorkerAnswer =
  | { readonly ack: number }
  | {
    readonly done: {
      /** The bytes, when the service stores them; else the stored file's name. */
      readonly chunks?: ReadonlyArray<Uint8Array>
      readonly name?: string
      readonly bytes: number
      readonly events: number
      readonly foldMs: number
      readonly serializeMs: number
      readonly writeMs: number
    }
  }
  | { readonly error: string; readonly store?: boolean }

/**
 * The worker's entry: the bundled file beside the bundled server (`scripts/bundle.mjs` builds
 * both), or, when the service runs from its TypeScript source (tests, benchmarks), a bootstrap
 * that registers tsx in the new thread and loads the source.
 */
const entry = (): URL =>
  new URL(import.meta.url.endsWith(".ts") ? "./snapshot-worker-source.mjs" : "./snapshot-worker.mjs", import.meta.url)

/** A started worker: one question at a time, each answered by its next message (or its failure). */
const talkTo = (worker: Worker) => {
  let waiting: ((answer: WorkerAnswer) => void) | undefined
  let failure: string | undefined
  const fail = (why: string) => {
    failure ??= why
    waiting?.({ error: failure })
    waiting = undefined
  }
  worker.on("message", (answer: WorkerAnswer) => {
    const resolve = waiting
    waiting = undefined
    resolve?.(answer)
  })
  worker.on("error", (error) => fail(`the worker failed: ${error instanceof Error ? error.message : String(error)}`))
  worker.on("exit", (code) => fail(`the worker exited (code ${code})`))
  return (message: unknown, transfer: ReadonlyArray<ArrayBuffer> = []): Effect.Effect<WorkerAnswer, SnapshotBuildFailed | SnapshotStoreError> =>
    Effect.flatMap(
      Effect.callback<WorkerAnswer>((resume) => {
        if (failure !== undefined) return resume(Effect.succeed({ error: failure }))
        waiting = (answer) => resume(Effect.succeed(answer))
        worker.postMessage(message, transfer as Array<ArrayBuffer>)
      }),
      (answer) =>
        "error" in answer
          ? Effect.fail(answer.store === true ? new SnapshotStoreError({ message: answer.error }) : new SnapshotBuildFailed({ message: answer.error }))
          : Effect.succeed(answer)
    )
}

/**
 * The base's buffer, to move rather than copy (the builder owns the base it is given). A small
 * one is copied: Node keeps small buffers in shared pools, which must not move.
 */
const movable = (base: Uint8Array): Array<ArrayBuffer> =>
  base.buffer instanceof ArrayBuffer && base.buffer.byteLength >= 1 << 20 ? [base.buffer] : []

export interface SnapshotWorkerOptions {
  /** The service's snapshot directory (`FileSnapshotStore`): the worker reads and writes its files itself. */
  readonly directory?: string
}

const baseFailed = (name: string) => (error: { readonly message: string }) =>
  new SnapshotBuildFailed({ message: `its base ${name} does not load: ${error.message}`, cause: error })

const makeBuild = (options: SnapshotWorkerOptions) =>
<E>(input: SnapshotBuildInput<E>): Effect.Effect<BuiltSnapshot, SnapshotBuildFailed | SnapshotStoreError | E> =>
  Effect.acquireUseRelease(
    Effect.try({
      // the thread runs this same engine code, loaded on its own: it joins this thread's codec context
      try: () => new Worker(entry(), { workerData: { options: input.options, context: EngineSnapshot.threadContext() } }),
      catch: (error) => new SnapshotBuildFailed({ message: `the worker did not start: ${String(error)}`, cause: error })
    }),
    (worker) =>
      Effect.gen(function*() {
        const ask = talkTo(worker)
        const directory = options.directory
        if (directory !== undefined) {
          yield* ask({ baseName: input.base.name, directory })
        } else {
          const base = yield* Effect.mapError(input.base.load, baseFailed(input.base.name))
          yield* ask({ base }, movable(base))
        }
        yield* Stream.runForEach(input.events, (texts) => ask({ texts }))
        const answer = yield* ask({ finish: directory === undefined ? {} : { header: input.header } })
        if (!("done" in answer)) return yield* new SnapshotBuildFailed({ message: "the worker answered out of turn" })
        const { chunks, name, ...figures } = answer.done
        if (name !== undefined) return { name, ...figures }
        // bytes back: stored here
        const started = performance.now()
        const saved = yield* input.save(chunks ?? [])
        return { ...figures, name: saved, writeMs: performance.now() - started }
      }),
    // Done, failed or interrupted (a stop): the thread and its copy of the market go.
    (worker) => Effect.promise(() => worker.terminate())
  )

/** A builder whose worker reads and writes the snapshot files in `options.directory`, or hands the bytes back without one. */
export const make = (options: SnapshotWorkerOptions = {}): SnapshotBuilder["Service"] => SnapshotBuilder.of({ build: makeBuild(options) })

/** Bytes handed back to the service's store (any kind of store). */
export const builder: SnapshotBuilder["Service"] = make()

export const layer = (options: SnapshotWorkerOptions = {}): Layer.Layer<SnapshotBuilder> => Layer.succeed(SnapshotBuilder, make(options))
