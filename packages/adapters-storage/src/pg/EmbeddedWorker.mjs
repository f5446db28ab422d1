// The embedded PostgreSQL (PGlite) and its wire-protocol socket, in a worker thread of the
// service's process (PgDatabase.startEmbedded): PGlite executes every statement synchronously in
// WebAssembly, so on the main thread each write would stall the event loop — every request and
// stream frame waiting behind it. Here it runs on its own thread; the service reaches it over
// loopback TCP as it would a server. Plain JavaScript: a worker loads it as is, under tsx or not.
//
// workerData: { dataDir, maxConnections }. Posts { port } once listening, or { error } if it
// cannot start; on the message "stop", stops the socket, closes the database (its files are then
// consistent) and posts "stopped".
import { parentPort, workerData } from "node:worker_threads"
import { mkdirSync } from "node:fs"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"

const { dataDir, maxConnections } = workerData
try {
  if (!dataDir.startsWith("memory://")) mkdirSync(dataDir, { recursive: true })
  const db = await PGlite.create(dataDir)
  // The log kept for reuse after a checkpoint: at most 256 MB (PostgreSQL's default, 1 GB, kept a
  // gigabyte of recycled segments on disk). The service checkpoints (PgDatabase `checkpoints`):
  // PGlite has no checkpointer of its own. Written to this data directory's postgresql.auto.conf.
  await db.exec("ALTER SYSTEM SET max_wal_size = '256MB'")
  await db.query("SELECT pg_reload_conf()")
  // More than one socket so a dropped connection can be replaced at once; PGlite still
  // serializes the queries.
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections })
  await server.start()
  parentPort.on("message", async (message) => {
    if (message !== "stop") return
    try {
      await server.stop()
      await db.close()
    } finally {
      parentPort.postMessage("stopped")
      parentPort.close()
    }
  })
  parentPort.postMessage({ port: Number(server.getServerConn().split(":").pop()) })
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? `${error.message}\n${error.stack}` : String(error) })
}
