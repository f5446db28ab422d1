/**
 * The `EngineCodec` port with the object-graph codec (EngineSnapshot.ts, ObjectGraphCodec.ts):
 * what the codec throws becomes the port's typed errors.
 */
import { Effect, Layer } from "effect"
import { EngineChangedWhileEncoding, EngineCodec, EngineDecodeFailed, EngineEncodeFailed } from "@spot/application"
import type { EngineEncoding } from "@spot/application"
import type { MarketEngine } from "@spot/domain/engine-state"
import * as EngineSnapshot from "./EngineSnapshot.js"

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const encodeFailure = (error: unknown): EngineEncodeFailed | EngineChangedWhileEncoding =>
  error instanceof EngineSnapshot.SnapshotChangedError
    ? new EngineChangedWhileEncoding({ message: error.message })
    : new EngineEncodeFailed({ message: messageOf(error), cause: error })

const encodingOf = (steps: Generator<void, ReadonlyArray<Uint8Array>, void>): EngineEncoding => ({
  step: Effect.try({
    try: () => {
      const next = steps.next()
      return next.done === true ? next.value : undefined
    },
    catch: encodeFailure
  }),
  cancel: Effect.sync(() => void steps.return([]))
})

const serializeInSteps = (engine: MarketEngine, endStep: () => boolean): Effect.Effect<EngineEncoding> =>
  Effect.sync(() => encodingOf(EngineSnapshot.snapshotInSlices(engine, { endStep })))

const serialize = (engine: MarketEngine): Effect.Effect<ReadonlyArray<Uint8Array>, EngineEncodeFailed> =>
  Effect.try({
    try: () => {
      const steps = EngineSnapshot.snapshotInSlices(engine, { endStep: () => false })
      for (;;) {
        const step = steps.next()
        if (step.done === true) return step.value
      }
    },
    catch: (error) => new EngineEncodeFailed({ message: messageOf(error), cause: error })
  })

const restoreInto = (engine: MarketEngine, bytes: Uint8Array): Effect.Effect<void, EngineDecodeFailed> =>
  Effect.try({
    try: () => EngineSnapshot.restoreInto(engine, bytes),
    catch: (error) => new EngineDecodeFailed({ message: messageOf(error), cause: error })
  })

/**
 * The codec of this thread's engine code. Its fingerprint is read when it is made: in a worker
 * thread, make it after `EngineSnapshot.joinThreadContext`.
 */
export const make: Effect.Effect<EngineCodec["Service"]> = Effect.sync(() =>
  EngineCodec.of({ fingerprint: EngineSnapshot.fingerprint(), serialize, serializeInSteps, restoreInto })
)

export const layer: Layer.Layer<EngineCodec> = Layer.effect(EngineCodec, make)
