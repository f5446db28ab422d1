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
      const upgrades = ownUpgrades(server)
      const requests = DirectReads.ownRequests(server)
      return Layer.mergeAll(
        NodeHttpServer.layer(() => server, listen.host === undefined ? { port: listen.port } : { port: listen.port, host: listen.host }),
        Layer.succeed(StreamLayer.StreamUpgrades, upgrades),
        Layer.succeed(DirectReads.DirectRequestsService, requests)
      )
    })
  )
