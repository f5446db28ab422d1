/**
 * Port: a snapshot built away from the service's thread (docs/storage.md, "Snapshots": built in
 * a worker). The engine's state at a seq is a function of the log up to it, so it can be made
 * again elsewhere — from the previous snapshot and the events logged since — and serialized
 * there, while the service's own market goes on folding. Nothing of the service's market is read.
 */
import { Context, Data } from "effect"
import type { Effect, Stream } from "effect"
import type { EngineOptions, EngineSnapshot } from "@spot/domain"

/** The build failed (the worker died, ran out of memory, or a stored event did not decode). */
export class SnapshotBuildFailed extends Data.TaggedError("SnapshotBuildFailed")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface SnapshotBuildInput<E> {
  /**
   * The engine bytes of a snapshot to start from (`SnapshotStore.load`; the builder may take them
   * over: the caller does not use them again), or null for an empty engine.
   */
  readonly base: Uint8Array | null
  /** The engine's options (an empty engine's; a base carries its own, which must be these). */
  readonly options: EngineOptions
  /**
   * The service's `EngineSnapshot.threadContext()`: the builder runs this same engine code in a
   * thread of its own and joins it (`EngineSnapshot.joinThreadContext`) before restoring the base.
   */
  readonly context: EngineSnapshot.ThreadContext
  /** The log's events after the base's seq, through the seq wanted, in order, as stored text (`EventStore.replayText`). */
  readonly events: Stream.Stream<ReadonlyArray<string>, E>
}

export interface BuiltSnapshot {
  /** The engine's bytes (`EngineSnapshot.snapshotInSlices`' chunks: their concatenation). */
  readonly chunks: ReadonlyArray<Uint8Array>
  /** Events folded onto the base. */
  readonly events: number
  /** Restoring the base and folding the events (ms, the builder's own time). */
  readonly foldMs: number
  /** Serializing the engine (ms). */
  readonly serializeMs: number
}

export interface SnapshotBuilderShape {
  /** Restores `base`, folds `events` into it as a restart's catch-up would, and serializes the engine. */
  readonly build: <E>(input: SnapshotBuildInput<E>) => Effect.Effect<BuiltSnapshot, SnapshotBuildFailed | E>
}

export class SnapshotBuilder extends Context.Service<SnapshotBuilder, SnapshotBuilderShape>()("@spot/application/SnapshotBuilder") {}
