/**
 * Port: the engine's whole state as bytes and back (docs/storage.md, "Snapshots"): what a
 * snapshot's body is. The bytes carry the fingerprint of the engine code that wrote them, and
 * code with another fingerprint refuses them: a snapshot is a cache of the log's fold, so bytes
 * of other fold rules are worth nothing (the log is replayed instead).
 */
import { Context, Data } from "effect"
import type { Effect } from "effect"
import type { MarketEngine } from "@spot/domain"

/** The bytes cannot be restored: corrupt or truncated, written by other engine code, or for an engine of other options. */
export class EngineDecodeFailed extends Data.TaggedError("EngineDecodeFailed")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The engine holds state the codec cannot write exactly (a function, an object of an unknown
 * class: a bug in the engine or the codec's registry). Every later attempt would fail the same way.
 */
export class EngineEncodeFailed extends Data.TaggedError("EngineEncodeFailed")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** The engine changed between two steps of a serialization (something folded without the market's write lock): a later attempt may succeed. */
export class EngineChangedWhileEncoding extends Data.TaggedError("EngineChangedWhileEncoding")<{
  readonly message: string
}> {}

/** A serialization a step at a time (`EngineCodec.serializeInSteps`). */
export interface EngineEncoding {
  /**
   * Writes the next step; the bytes, in chunks (their concatenation is what `restoreInto` reads),
   * once the last step is written, undefined before. Nothing may fold into the engine until then.
   */
  readonly step: Effect.Effect<ReadonlyArray<Uint8Array> | undefined, EngineEncodeFailed | EngineChangedWhileEncoding>
  /** Ends the serialization unfinished, freeing the codec for the next one (nothing when it is done). */
  readonly cancel: Effect.Effect<void>
}

export interface EngineCodecShape {
  /** What identifies the engine code the bytes are written and read by: a snapshot header's `engine`. */
  readonly fingerprint: string
  /** The engine's whole state as bytes, in chunks, at once. */
  readonly serialize: (engine: MarketEngine) => Effect.Effect<ReadonlyArray<Uint8Array>, EngineEncodeFailed>
  /**
   * The same a step at a time, so that reads can be served between steps: each step writes until
   * `endStep()` says so (a service gives a deadline of a few milliseconds of its clock).
   */
  readonly serializeInSteps: (engine: MarketEngine, endStep: () => boolean) => Effect.Effect<EngineEncoding>
  /**
   * Restores `bytes` into `engine`, which must have folded nothing yet (readers may already hold
   * it) and have the options the bytes were written with; refused bytes leave it untouched.
   */
  readonly restoreInto: (engine: MarketEngine, bytes: Uint8Array) => Effect.Effect<void, EngineDecodeFailed>
}

export class EngineCodec extends Context.Service<EngineCodec, EngineCodecShape>()("@spot/application/EngineCodec") {}
