/**
 * Ports for engine snapshots (docs/storage.md, "Snapshots"): where snapshots are kept, and the
 * identity of the event log they are caches of. A snapshot is the engine's state after folding
 * the log up to `seq`, stored with what proves which log and which prefix of it: the log's
 * identity and the id of the event at `seq`. The log stays the truth; a snapshot that cannot be
 * trusted is skipped and the log replayed.
 */
import { Context, Data } from "effect"
import type { Effect } from "effect"
import type { StoreUnavailable } from "./EventStore.js"

/** What a snapshot is a snapshot of. */
export interface SnapshotHeader {
  /** The identity of the event log it was folded from (`LogIdentity`). */
  readonly logId: string
  /** The last folded event's seq: the state is `fold(log[1..seq])`. */
  readonly seq: number
  /** The id of the event at `seq`, checked against the log before the snapshot is used. */
  readonly eventId: string
  /** What wrote the engine bytes (`EngineCodec.fingerprint`); other code refuses them. */
  readonly engine: string
  /** When it was taken (Unix ms), for operators. */
  readonly takenAt: number
}

/** A stored snapshot, as listed: its name (for log lines and `load`), and its header or why it cannot be read. */
export type SnapshotListing =
  | { readonly name: string; readonly header: SnapshotHeader; readonly bytes: number }
  | { readonly name: string; readonly problem: string }

/** The snapshot store failed (disk full, permissions, a corrupt or missing file). */
export class SnapshotStoreError extends Data.TaggedError("SnapshotStoreError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface SnapshotStoreShape {
  /**
   * Stores a snapshot so that it is never seen half-written (a crash during `save` leaves the
   * previous snapshots as they were), then keeps only the newest few. Returns its name. The body
   * comes in chunks (the engine's bytes as serialized, never copied into one buffer): the bytes
   * are their concatenation, and `load` returns them in one piece.
   */
  readonly save: (header: SnapshotHeader, body: ReadonlyArray<Uint8Array>) => Effect.Effect<string, SnapshotStoreError>
  /** The stored snapshots, newest (highest seq) first; one whose header cannot be read is listed with the problem. */
  readonly list: Effect.Effect<ReadonlyArray<SnapshotListing>, SnapshotStoreError>
  /** The engine bytes of a listed snapshot, their checksum verified: the caller's own (nothing else holds their buffer). */
  readonly load: (name: string) => Effect.Effect<Uint8Array, SnapshotStoreError>
}

export class SnapshotStore extends Context.Service<SnapshotStore, SnapshotStoreShape>()("@spot/application/SnapshotStore") {}

export interface LogIdentityShape {
  /**
   * The event log's identity: random, made once when the log's database is created (so a
   * snapshot of another database's log, however similar its seqs, is never mistaken for one of
   * this log).
   */
  readonly logId: Effect.Effect<string, StoreUnavailable>
}

export class LogIdentity extends Context.Service<LogIdentity, LogIdentityShape>()("@spot/application/LogIdentity") {}
