/**
 * The read API's HTTP server: routes + the keyless OpenAPI document + the platform middleware
 * (request id, limits, auth, error envelope), served by effect/http's HttpRouter with the
 * per-request logger off (it halves throughput; failures are logged by the middleware).
 *
 * Why HttpRouter and not HttpApiBuilder: measured on the same token GET with auth and limits,
 * the router route plus one hand-written middleware costs less CPU per request than HttpApi's
 * security middleware (docs/http-platform.md has the numbers). The HttpApi definition stays the
 * contract: /openapi.json is generated from it, and routes decode with the same schema objects.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { OpenApi } from "effect/http-api"
import type { HttpApi } from "effect/http-api"
import type { Admission } from "@spot/application"
import * as ApiRoute from "./ApiRoute.js"
import type * as DirectReads from "./DirectReads.js"
import * as PlatformMiddleware from "./PlatformMiddleware.js"

/** Any HttpApi definition: the contract /openapi.json is generated from. */
export type Contract = HttpApi.HttpApi<any, any>

export interface ApiServerOptions<E, R, RD = never> {
  /**
   * The served routes as a router layer: `HttpRouter.addAll([ApiRoute.get(...), ...])`, or
   * `HttpRouter.addAll(Effect.gen(...))` when building them needs services. Services the handlers
   * use become requirements of the server layer: provide them to it.
   */
  readonly routes: Layer.Layer<never, E, R>
  /** The HttpApi contract the OpenAPI document is generated from. */
  readonly contract: Contract
  readonly platform?: PlatformMiddleware.PlatformOptions
  /**
   * Reads answered without Effect's server when certain to succeed (DirectReads), on a server
   * that provides `DirectReads.DirectRequestsService`; without that service they are served by
   * the routes like any other request.
   */
  readonly directRoutes?: Effect.Effect<ReadonlyArray<DirectReads.DirectRoute>, never, RD>
}

/** The OpenAPI document, generated and encoded (to bytes) once. */
export const openApiRoute = (contract: Contract, path: HttpRouter.PathInput = "/openapi.json") => {
  const body = Buffer.from(JSON.stringify(OpenApi.fromApi(contract)), "utf8")
  return HttpRouter.route("GET", path, Effect.sync(() => ApiRoute.preEncodedBytes(body)))
}

/**
 * All routes and the middleware, as one app layer (no server yet): for `HttpRouter.serve`,
 * `HttpRouter.toWebHandler`, or merging with other routes such as the stream upgrade.
 */
export const app = <E, R, RD = never>(
  options: ApiServerOptions<E, R, RD>
): Layer.Layer<never, E, R | RD | HttpRouter.HttpRouter | Admission.Admission> =>
  Layer.mergeAll(
    options.routes,
    HttpRouter.addAll([openApiRoute(options.contract, (options.platform?.openApiPath ?? "/openapi.json") as HttpRouter.PathInput)]),
    PlatformMiddleware.layer(options.platform, options.directRoutes)
  )

/**
 * The served API (request logger off: it halves throughput; the middleware logs failures). Needs
 * an `HttpServer` (e.g. `NodeHttpServer.layer(createServer, { port })`), the `Admission` use case
 * (`Admission.layer` over a `KeyStore` and a `RateLimiter`, and a `KeyCache` when answers may be
 * reused), and whatever the routes need.
 */
export const layer = <E, R, RD = never>(options: ApiServerOptions<E, R, RD>) =>
  HttpRouter.serve(app(options), { disableLogger: true, disableListenLog: true })
