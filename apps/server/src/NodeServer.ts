/**
 * The service's one Node HTTP server, shared by the REST API and the stream: Effect's HTTP server
 * serves it, its `upgrade` event is routed by path (`/v1/stream` to the stream, adapters-ws
 * `ownUpgrades`), and its `request` event is offered first to the direct reads (adapters-http
 * `DirectReads.ownRequests`: successful token reads answered without Effect's server).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { DirectReads } from "@spot/adapters-http"
import { ownUpgrades, StreamLayer } from "@spot/adapters-ws"

export interface ListenOptions {
  readonly port: number
  readonly host?: string
}

type EffectServer = ReturnType<typeof NodeHttpServer.layer>

export const layer = (
  listen: ListenOptions
): Layer.Layer<
  Layer.Success<EffectServer> | StreamLayer.StreamUpgrades | DirectReads.DirectRequestsService,
  Layer.Error<EffectServer>
> =>
  Layer.unwrap(
    Effect.sync(() => {
      // No Host header is needed to answer (paths are absolute, no virtual hosts): a request
      // without one is served, not refused by Node with a bare 400 outside the envelope.
      const server = createServer({ requireHostHeader: false })
      // An idle kept-alive connection stays open 65 s, not Node's 5 s: with 5 s, an event loop
      // paused for seconds (a snapshot serialized in one piece, docs/storage.md, or any other long
      // pause) closes every connection idle past 5 s at once as it resumes, racing a client that
      // has just sent its next request on it: the client sees a reset. 65 s outlasts the 60 s idle
      // timeout of common load balancers, so they close first. Headers must still arrive within
      // 66 s (Node asks for more than the keep-alive timeout).
      server.keepAliveTimeout = 65_000
      server.headersTimeout = 66_000
      const upgrades = ownUpgrades(server)
      const requests = DirectReads.ownRequests(server)
      return Layer.mergeAll(
        NodeHttpServer.layer(() => server, listen.host === undefined ? { port: listen.port } : { port: listen.port, host: listen.host }),
        Layer.succeed(StreamLayer.StreamUpgrades, upgrades),
        Layer.succeed(DirectReads.DirectRequestsService, requests)
      )
    })
  )
