/**
 * The `SnapshotBuilder` port on a worker thread (docs/storage.md, "Snapshots": built in a
 * worker): a snapshot is built in a thread of its own, started for it and ended after it, so the
 * service's market goes on folding meanwhile. The service's thread reads the base snapshot and the
 * log's texts and hands them over; the worker (`snapshot-worker.ts`) decodes, folds and serializes
 * (`SnapshotFold`) and hands the bytes back. Buffers move between the threads, never copied.
 *
 * Protocol (the service → the worker, each answered before the next is sent):
 *   { base: Uint8Array | null }  → { ack: 0 }           restore the base (or start empty)
 *   { texts: string[] }          → { ack: foldedSoFar } fold the next page of the log
 *   { finish: true }             → { done: { chunks, events, foldMs, serializeMs } }
 * and { error: string } instead of any answer when something fails there.
 */
import { Effect, Layer, Stream } from "effect"
import { Worker } from "node:worker_threads"
import { SnapshotBuilder, SnapshotBuildFailed } from "@spot/application"
import type { BuiltSnapshot, SnapshotBuildInput } from "@spot/application"

/** What the worker posts. */
export type WorkerAnswer =
  | { readonly ack: number }
  | { readonly done: { readonly chunks: ReadonlyArray<Uint8Array>; readonly events: number; readonly foldMs: number; readonly serializeMs: number } }
  | { readonly error: string }

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
  return (message: unknown, transfer: ReadonlyArray<ArrayBuffer> = []): Effect.Effect<WorkerAnswer, SnapshotBuildFailed> =>
    Effect.flatMap(
      Effect.callback<WorkerAnswer>((resume) => {
        if (failure !== undefined) return resume(Effect.succeed({ error: failure }))
        waiting = (answer) => resume(Effect.succeed(answer))
        worker.postMessage(message, transfer as Array<ArrayBuffer>)
      }),
      (answer) => ("error" in answer ? Effect.fail(new SnapshotBuildFailed({ message: answer.error })) : Effect.succeed(answer))
    )
}

/**
 * The base's buffer, to move rather than copy (the builder owns the base it is given). A small
 * one is copied: Node keeps small buffers in shared pools, which must not move.
 */
const movable = (base: Uint8Array): Array<ArrayBuffer> =>
  base.buffer instanceof ArrayBuffer && base.buffer.byteLength >= 1 << 20 ? [base.buffer] : []

const build = <E>(input: SnapshotBuildInput<E>): Effect.Effect<BuiltSnapshot, SnapshotBuildFailed | E> =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () => {
        return new Worker(entry(), { workerData: { options: input.options, context: input.context } })
      },
      catch: (error) => new SnapshotBuildFailed({ message: `the worker did not start: ${String(error)}`, cause: error })
    }),
    (worker) =>
      Effect.gen(function*() {
        const ask = talkTo(worker)
        yield* ask({ base: input.base }, input.base === null ? [] : movable(input.base))
        yield* Stream.runForEach(input.events, (texts) => ask({ texts }))
        const answer = yield* ask({ finish: true })
        if (!("done" in answer)) return yield* new SnapshotBuildFailed({ message: "the worker answered out of turn" })
        return answer.done
      }),
    // Done, failed or interrupted (a stop): the thread and its copy of the market go.
    (worker) => Effect.promise(() => worker.terminate())
  )

export const builder: SnapshotBuilder["Service"] = SnapshotBuilder.of({ build })

export const layer: Layer.Layer<SnapshotBuilder> = Layer.succeed(SnapshotBuilder, builder)
