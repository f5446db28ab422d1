/**
 * Manages API keys in the service's key file (`SPOT_DATA_DIR`, default `.data`):
 *
 *   npm run keys -- create <name> [--expires-in-days N]   prints the new key once
 *   npm run keys -- list                                   ids, names, dates, status (never keys)
 *   npm run keys -- revoke <id>
 *
 * With `DATABASE_URL` set, the keys live in that database's `api_keys` table instead.
 * A running server picks changes up within a second.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Clock, Console, Effect, Layer, Redacted } from "effect"
import { ApiKey, KeyStore } from "@spot/application"
import { FileKeyStore, PgDatabase, PgKeyStore } from "@spot/adapters-storage"
import { dataDirFromEnv, keyFilePath } from "./ServerConfig.js"

const usage = "usage: npm run keys -- create <name> [--expires-in-days N] | list | revoke <id>"

const describe = (record: ApiKey.ApiKeyRecord, now: number): string => {
  const status = record.revokedAt !== null ? "revoked" : record.expiresAt !== null && now >= record.expiresAt ? "expired" : "active"
  const expires = record.expiresAt === null ? "never" : new Date(record.expiresAt).toISOString()
  return `${record.id}\t${status}\t${record.name}\tcreated ${new Date(record.createdAt).toISOString()}\texpires ${expires}`
}

/** Where this run keeps keys: a server finds them only there (same SPOT_DATA_DIR or DATABASE_URL). */
const storeDescription = process.env["DATABASE_URL"]
  ? "the api_keys table of the DATABASE_URL database"
  : `${keyFilePath()} (SPOT_DATA_DIR=${dataDirFromEnv()}: start the server with the same SPOT_DATA_DIR)`

const program = Effect.gen(function*() {
  const [command, ...rest] = process.argv.slice(2)
  const store = yield* KeyStore
  const now = yield* Clock.currentTimeMillis
  switch (command) {
    case "create": {
      const name = rest[0]
      if (name === undefined || name.startsWith("--")) return yield* Effect.fail(usage)
      const daysAt = rest.indexOf("--expires-in-days")
      const days = daysAt >= 0 ? Number(rest[daysAt + 1]) : undefined
      if (days !== undefined && !(days > 0)) return yield* Effect.fail("--expires-in-days needs a positive number")
      const created = yield* store.create({ name, expiresAt: days === undefined ? null : now + days * 86_400_000 })
      yield* Console.log(describe(created.record, now))
      yield* Console.log(`key (shown once, store it now): ${Redacted.value(created.key)}`)
      yield* Console.log(`stored in ${storeDescription}`)
      return
    }
    case "list": {
      for (const record of yield* store.list) yield* Console.log(describe(record, now))
      return
    }
    case "revoke": {
      const id = rest[0]
      if (id === undefined) return yield* Effect.fail(usage)
      const record = yield* store.revoke(id)
      if (record === null) return yield* Effect.fail(`no key with id ${id}`)
      yield* Console.log(describe(record, now))
      return
    }
    default:
      return yield* Effect.fail(usage)
  }
}).pipe(
  // With DATABASE_URL the server keeps keys in PostgreSQL (docs/storage.md); otherwise the key file.
  Effect.provide(
    process.env["DATABASE_URL"]
      ? Layer.orDie(PgKeyStore.layer().pipe(Layer.provide(PgDatabase.layerServer({ url: Redacted.make(process.env["DATABASE_URL"]) }))))
      : FileKeyStore.layer({ path: keyFilePath() })
  ),
  Effect.catch((message) => Effect.flatMap(Console.error(String(typeof message === "string" ? message : (message as { message: string }).message)), () => Effect.sync(() => void (process.exitCode = 2))))
)

NodeRuntime.runMain(program)
