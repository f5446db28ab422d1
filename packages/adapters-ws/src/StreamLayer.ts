/**
 * The stream as layers: an HTTP server whose `upgrade` event this adapter owns (replacing
 * `NodeHttpServer.layer(createServer, …)` in the composition), and the stream server on it.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { Market } from "@spot/application"
import type { HandshakeGate } from "./Handshake.js"
import type { Encoders } from "./StreamHub.js"
import type { StreamLimits } from "./StreamServer.js"
import { StreamServer } from "./StreamServer.js"
import type { UpgradeRoutes } from "./UpgradeRouting.js"
import { ownUpgrades } from "./UpgradeRouting.js"

export const streamPath = "/v1/stream"

export class StreamUpgrades extends Context.Service<StreamUpgrades, UpgradeRoutes>()("@spot/adapters-ws/StreamUpgrades") {}

/** The running stream server (for tests and summaries). */
export class Stream extends Context.Service<Stream, StreamServer>()("@spot/adapters-ws/Stream") {}

export interface ListenOptions {
  readonly port: number
  readonly host?: string
}

/**
 * `NodeHttpServer.layer` on a Node server whose `upgrade` event is routed by path: `/v1/stream`
 * to the stream (once its layer is built), anything else to Effect's own upgrade handling.
 */
export const httpServerLayer = (listen: ListenOptions) =>
  Layer.unwrap(
    Effect.sync(() => {
      const server = createServer()
      const routes = ownUpgrades(server)
      return Layer.merge(
        NodeHttpServer.layer(() => server, listen.host === undefined ? { port: listen.port } : { port: listen.port, host: listen.host }),
        Layer.succeed(StreamUpgrades, routes)
      )
    })
  )

export interface StreamLayerOptions<R> {
  /** Builds the handshake gate (the REST platform's auth and budgets) from services. */
  readonly gate: Effect.Effect<HandshakeGate, never, R>
  readonly encoders: Encoders
  readonly limits?: Partial<StreamLimits>
}

/** Serves `/v1/stream` on the server of {@link httpServerLayer}; closes every connection on shutdown. */
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
