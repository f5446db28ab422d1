/**
 * Port: a snapshot built away from the service's thread (docs/storage.md, "Snapshots": built in
 * a worker). The engine's state at a seq is a function of the log up to it, so it can be made
 * again elsewhere — from the previous snapshot and the events logged since — and serialized
 * there, while the service's own market goes on folding. Nothing of the service's market is read.
 */
import { Context, Data } from "effect"
import type { Effect, Stream } from "effect"
import type { EngineOptions } from "@spot/domain"
import type { SnapshotHeader, SnapshotStoreError } from "./SnapshotStore.js"

/** The build failed (the base did not load, the worker died or ran out of memory, a stored event did not decode). */
export class SnapshotBuildFailed extends Data.TaggedError("SnapshotBuildFailed")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface SnapshotBuildInput<E> {
  /**
   * The stored snapshot to start from: its name in the service's `SnapshotStore`, and its engine
   * bytes loaded here on demand. A builder that reaches the store's files itself reads them there,
   * so the bytes never pass through the service's thread (hundreds of megabytes arriving at once
   * made its collector stop everything for a tenth of a second and more).
   */
  readonly base: { readonly name: string; readonly load: Effect.Effect<Uint8Array, SnapshotStoreError> }
  /** What to store the result under. */
  readonly header: SnapshotHeader
  /** How the service stores it (`SnapshotStore.save`); a builder that reaches the store's files writes it there itself. */
  readonly save: (chunks: ReadonlyArray<Uint8Array>) => Effect.Effect<string, SnapshotStoreError>
  /** The engine's options (the base carries its own, which must be these). */
  readonly options: EngineOptions
  /** The log's events after the base's seq, through the header's seq, in order, as stored text (`EventStore.replayText`). */
  readonly events: Stream.Stream<ReadonlyArray<string>, E>
}

export interface BuiltSnapshot {
  /** The stored snapshot's name. */
  readonly name: string
  /** Its engine bytes' length. */
  readonly bytes: number
  /** Events folded onto the base. */
  readonly events: number
  /** Restoring the base and folding the events (ms, the builder's own time). */
  readonly foldMs: number
  /** Serializing the engine (ms). */
  readonly serializeMs: number
  /** Storing it: checksum and file (ms). */
  readonly writeMs: number
}

export interface SnapshotBuilderShape {
  /** Restores `base`, folds `events` into it as a restart's catch-up would, serializes the engine and stores it. */
  readonly build: <E>(input: SnapshotBuildInput<E>) => Effect.Effect<BuiltSnapshot, SnapshotBuildFailed | SnapshotStoreError | E>
}

export class SnapshotBuilder extends Context.Service<SnapshotBuilder, SnapshotBuilderShape>()("@spot/application/SnapshotBuilder") {}
