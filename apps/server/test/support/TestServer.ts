/**
 * The real server composition (`Server.layer`) as the tests start it: `testServerConfig` holds the
 * configuration every test shares (port 0, loopback, the simulator off, a fixed cursor secret, no
 * configured keys, this file's data directory), so a test names only what it changes;
 * `startTestServer` builds the server in a scope of its own and gives its address and services,
 * and `close` ends it.
 */
import { Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import { HttpServer } from "effect/http"
import * as Server from "../../src/Server.js"
import type { ServerConfig } from "../../src/ServerConfig.js"
import { testDataDir } from "./TestDataDir.js"

/** Fixed, so the cursors a test reads stay valid on the next server it starts. */
export const testCursorSecret = "read-api-test-cursor-secret"

/** The tests' configuration; the data directory is made only when `overrides` names none. */
export const testServerConfig = (overrides: Partial<ServerConfig> = {}): ServerConfig => ({
  port: 0,
  host: "127.0.0.1",
  simulator: null,
  cursorSecret: Option.some(Redacted.make(testCursorSecret)),
  apiKeys: [],
  ...overrides,
  dataDir: overrides.dataDir ?? testDataDir()
})

export type TestServerServices = Layer.Success<ReturnType<typeof Server.layer>>

export interface TestServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  readonly port: number
  /** The running server's services. */
  readonly context: Context.Context<TestServerServices>
  readonly close: () => Promise<void>
}

/** Starts the server on `config` with `layers` in place of the defaults; the banner is off unless `layers` turns it on. */
export const startTestServer = async (config: ServerConfig, layers: Server.ServerOverrides = {}): Promise<TestServer> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(Server.layer(config, { announce: false, ...layers }), scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    context,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
