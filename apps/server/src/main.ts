/**
 * Starts the service: the embedded market (simulator on by default) behind the REST API and the
 * stream. Configuration: see README ("Configuration"); an invalid setting stops start-up with a
 * message naming it. SIGINT/SIGTERM stop it gracefully.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import * as Server from "./Server.js"
import { serverConfig } from "./ServerConfig.js"

const program = Effect.gen(function*() {
  const config = yield* serverConfig.pipe(
    Effect.catchTag("ConfigError", (error) =>
      Effect.flatMap(Console.error(`invalid configuration: ${error.message}`), () =>
        Effect.sync(() => process.exit(1))
      )
    )
  )
  return yield* Layer.launch(Server.layer(config))
})

NodeRuntime.runMain(program)
