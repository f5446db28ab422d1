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
import type { KeyStore, RateLimiter } from "@spot/application"
import * as ApiRoute from "./ApiRoute.js"
import * as PlatformMiddleware from "./PlatformMiddleware.js"

export interface ApiServerOptions<E = never, R = never> {
  /** Served routes (`ApiRoute.get(...)`, `ApiRoute.post(...)`), or a layer registering them. */
  readonly routes: ReadonlyArray<HttpRouter.Route<any, never>> | Layer.Layer<never, E, R>
  /** The HttpApi contract the OpenAPI document is generated from. */
  readonly contract: HttpApi.HttpApi<any, any>
  readonly platform?: PlatformMiddleware.PlatformOptions
}

/** The OpenAPI document, generated and encoded once. */
export const openApiRoute = (contract: HttpApi.HttpApi<any, any>, path: HttpRouter.PathInput = "/openapi.json") => {
  const body = JSON.stringify(OpenApi.fromApi(contract as any))
  return HttpRouter.route("GET", path, Effect.sync(() => ApiRoute.preEncoded(body)))
}

/**
 * All routes and the middleware, as one app layer (no server yet): for `HttpRouter.serve`,
 * `HttpRouter.toWebHandler`, or composing with other routes such as the stream.
 */
export const app = <E = never, R = never>(options: ApiServerOptions<E, R>) => {
  const openApiPath = (options.platform?.openApiPath ?? "/openapi.json") as HttpRouter.PathInput
  const routes = Layer.isLayer(options.routes)
    ? options.routes
    : HttpRouter.addAll(options.routes as ReadonlyArray<HttpRouter.Route<any, any>>)
  return Layer.mergeAll(
    routes as Layer.Layer<never, E, any>,
    HttpRouter.addAll([openApiRoute(options.contract, openApiPath)]),
    PlatformMiddleware.layer(options.platform)
  )
}

/**
 * The served API: needs an `HttpServer` (e.g. `NodeHttpServer.layer(createServer, { port })`),
 * a `KeyStore` and a `RateLimiter`.
 */
export const layer = <E = never, R = never>(
  options: ApiServerOptions<E, R>
): Layer.Layer<never, E, HttpServer.HttpServer | KeyStore | RateLimiter | Exclude<R, HttpRouter.HttpRouter>> =>
  HttpRouter.serve(app(options), { disableLogger: true, disableListenLog: true }) as any
