/**
 * `LogIdentity`: the event log's random identity, made once per database by migration
 * `3_create_log_identity` (table `spot_log_identity`, one row) and read once per process (it never
 * changes); and a fixed identity for in-memory logs in tests.
 */
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { LogIdentity, StoreUnavailable } from "@spot/application"

export const layerPg: Layer.Layer<LogIdentity, never, SqlClient.SqlClient> = Layer.effect(
  LogIdentity,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let known: string | undefined
    const read = sql<{ readonly log_id: string }>`SELECT log_id FROM spot_log_identity`.pipe(
      Effect.timeoutOrElse({ duration: Duration.seconds(15), orElse: () => Effect.fail(new Error("timed out")) }),
      Effect.mapError((cause) => new StoreUnavailable({ message: "event store unavailable (log identity)", cause })),
      Effect.flatMap((rows) =>
        rows.length === 1 ? Effect.succeed(rows[0]!.log_id) : Effect.die(new Error(`spot_log_identity holds ${rows.length} rows, not 1`))
      )
    )
    return LogIdentity.of({
      logId: Effect.suspend(() =>
        known !== undefined ? Effect.succeed(known) : Effect.tap(read, (id) => Effect.sync(() => void (known = id)))
      )
    })
  })
)

/** A fixed identity (an in-memory log in tests). */
export const layerFixed = (logId: string): Layer.Layer<LogIdentity> => Layer.succeed(LogIdentity, LogIdentity.of({ logId: Effect.succeed(logId) }))
