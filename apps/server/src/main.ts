/**
 * Starts the service: the embedded market (simulator on by default) behind the REST API.
 * Configuration: see README ("Configuration"). SIGINT/SIGTERM stop it gracefully.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Server from "./Server.js"
import { serverConfig } from "./ServerConfig.js"

const program = Effect.gen(function*() {
  const config = yield* serverConfig
  return yield* Layer.launch(Server.layer(config))
})

NodeRuntime.runMain(program)
