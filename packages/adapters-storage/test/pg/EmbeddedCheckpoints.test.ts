/**
 * The embedded database checkpoints (PgDatabase `checkpoints`): PGlite has no checkpointer of
 * its own, so without these its write-ahead log grows for as long as the service runs and a
 * crash leaves all of it to replay. This is the embedded mode's own behaviour (a server checkpoints by
 * itself), so it runs on PGlite whether or not a server is reachable.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgDatabase } from "@spot/adapters-storage"

/** The last checkpoint's redo position, and the log written since it. */
const lastCheckpoint = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ readonly redo: string; readonly bytes: number }>`
    SELECT redo_lsn::text AS redo, pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::float8 AS bytes FROM pg_control_checkpoint()`
  return row!
})

/** Writes about `megabytes` MB of rows (and so at least that much log). */
const write = (megabytes: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS scratch (body text)`
    yield* sql`INSERT INTO scratch SELECT repeat('x', 1000) FROM generate_series(1, ${megabytes * 1000})`
  })

/** Polls `check` every 20 ms until it holds (at most 10 s); whether it did. */
const eventually = <R>(check: Effect.Effect<boolean, unknown, R>) =>
  Effect.gen(function*() {
    for (let waited = 0; waited < 10_000; waited += 20) {
      if (yield* check) return true
      yield* Effect.sleep("20 millis")
    }
    return false
  })

const embedded = (checkpoint: PgDatabase.CheckpointPolicy, dataDir = "memory://") => Layer.orDie(PgDatabase.layerEmbedded({ dataDir, checkpoint }))

describe("the embedded database's checkpoints", () => {
  it.live("checkpoints once the log written since the last checkpoint reaches afterBytes, and the log since then stays below it", () =>
    Effect.gen(function*() {
      const before = yield* lastCheckpoint
      yield* write(4)
      expect(yield* eventually(Effect.map(lastCheckpoint, (now) => now.redo !== before.redo && now.bytes < 1024 * 1024))).toBe(true)
    }).pipe(Effect.provide(embedded({ everyMs: 20, afterBytes: 1024 * 1024, afterMs: 3_600_000 }))))

  it.live("checkpoints a log written to but below afterBytes once the last checkpoint is afterMs old, and leaves an idle one alone", () =>
    Effect.gen(function*() {
      // Start-up wrote the migrations: checkpointed within afterMs, then nothing more is written.
      yield* write(0.1)
      expect(yield* eventually(Effect.map(lastCheckpoint, (now) => now.bytes <= 4096))).toBe(true)
      const idle = yield* lastCheckpoint
      yield* Effect.sleep("600 millis")
      expect((yield* lastCheckpoint).redo).toBe(idle.redo)
      yield* write(0.1)
      expect(yield* eventually(Effect.map(lastCheckpoint, (now) => now.redo !== idle.redo))).toBe(true)
    }).pipe(Effect.provide(embedded({ everyMs: 20, afterBytes: 1024 ** 3, afterMs: 200 }))))

  it.live("keeps at most 256 MB of log for reuse in its data directory (max_wal_size)", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "spot-embedded-"))
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT 1`
      expect(readFileSync(join(dataDir, "postgresql.auto.conf"), "utf8")).toContain("max_wal_size = '256MB'")
    }).pipe(
      Effect.provide(embedded(PgDatabase.defaultCheckpointPolicy, dataDir)),
      Effect.ensuring(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
    )
  })
})
