/**
 * The stream as a layer: the stream server, on the routes of a Node server whose `upgrade` event
 * this adapter owns (`ownUpgrades`, provided as `StreamUpgrades` by the composition that creates
 * the server: apps/server NodeServer.ts).
 */
import { Context, Effect, Layer } from "effect"
import { Market } from "@spot/application"
import type { HandshakeGate } from "./Handshake.js"
import type { Encoders } from "./StreamHub.js"
import type { StreamLimits } from "./StreamServer.js"
import { StreamServer } from "./StreamServer.js"
import type { UpgradeRoutes } from "./UpgradeRouting.js"

export const streamPath = "/v1/stream"

export class StreamUpgrades extends Context.Service<StreamUpgrades, UpgradeRoutes>()("@spot/adapters-ws/StreamUpgrades") {}

/** The running stream server (for tests and summaries). */
export class Stream extends Context.Service<Stream, StreamServer>()("@spot/adapters-ws/Stream") {}

export interface StreamLayerOptions<R> {
  /** Builds the handshake gate (the REST platform's auth and budgets) from services. */
  readonly gate: Effect.Effect<HandshakeGate, never, R>
  readonly encoders: Encoders
  readonly limits?: Partial<StreamLimits>
}

/** Serves `/v1/stream` on the server whose upgrades `StreamUpgrades` routes; closes every connection on shutdown. */
export const layer = <R>(options: StreamLayerOptions<R>): Layer.Layer<Stream, never, R | Market.Market | StreamUpgrades> =>
  Layer.effect(
    Stream,
    Effect.gen(function*() {
      const market = yield* Market.Market
      const upgrades = yield* StreamUpgrades
      const gate = yield* options.gate
      const stream = yield* Effect.acquireRelease(
        Effect.sync(() => new StreamServer(market, options.limits === undefined ? { gate, encoders: options.encoders } : { gate, encoders: options.encoders, limits: options.limits })),
        (stream) => Effect.promise(() => stream.close())
      )
      upgrades.route(streamPath, stream.handleUpgrade)
      yield* Effect.addFinalizer(() => Effect.sync(() => upgrades.unroute(streamPath)))
      return stream
    })
  )
