/**
 * Starts the service: the embedded market (simulator on by default) behind the REST API and the
 * stream. Configuration: see README ("Configuration"); an invalid setting stops start-up with a
 * message naming it. SIGINT/SIGTERM stop it gracefully.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Layer, Runtime } from "effect"
import { createServer } from "node:net"
import * as Server from "./Server.js"
import { serverConfig } from "./ServerConfig.js"

/** Start-up stops with one line naming what to fix, not a stack trace. */
const stopWith = (message: string) => Effect.flatMap(Console.error(message), () => Effect.sync(() => process.exit(1)))
const invalidConfiguration = (error: { readonly message: string }) => stopWith(`invalid configuration: ${error.message}`)

/**
 * Whether HOST:PORT can be listened on now (a probe, closed at once), so that a port already taken
 * is told before anything, not only when the server listens, after the whole warm-up and a snapshot.
 */
const portProblem = (host: string, port: number): Effect.Effect<string | undefined> =>
  Effect.callback<string | undefined>((resume) => {
    const probe = createServer()
    probe.once("error", (error) => resume(Effect.succeed(error.message)))
    probe.listen(port, host, () => probe.close(() => resume(Effect.succeed(undefined))))
  })

const program = Effect.gen(function*() {
  const config = yield* serverConfig.pipe(
    Effect.catchTag("ConfigError", invalidConfiguration)
  )
  const taken = config.port === 0 ? undefined : yield* portProblem(config.host, config.port)
  if (taken !== undefined) return yield* stopWith(`cannot listen on HOST=${config.host} PORT=${config.port}: ${taken}`)
  return yield* Layer.launch(Server.layer(config)).pipe(
    // Settings read by the layers themselves (the rate limits)
    Effect.catchTag("ConfigError", invalidConfiguration),
    Effect.catchTag("DataDirInUse", (error) => stopWith(error.message)),
    Effect.catchTag("ServeError", (error) =>
      stopWith(`cannot listen on HOST=${config.host} PORT=${config.port}: ${error.cause instanceof Error ? error.cause.message : String(error.cause)}`)
    )
  )
})

/**
 * SIGINT/SIGTERM interrupt the service and its finalizers run (the stream closes, the archive and
 * a snapshot are written): a clean stop, exit 0 — process managers count another code as a crash.
 * A stop whose finalizers failed, or any other failure, keeps Effect's codes (1).
 */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

NodeRuntime.runMain(program, { teardown })
