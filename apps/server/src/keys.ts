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
import { Cause, Clock, Console, Effect, Layer, Redacted } from "effect"
import { ApiKey, KeyStore } from "@spot/application"
import { FileKeyStore, PgDatabase, PgKeyStore } from "@spot/adapters-storage"
import { dayMs, parseKeysCommand, timeText } from "./KeysCommand.js"
import { dataDirFromEnv, keyFilePath } from "./ServerConfig.js"

const describe = (record: ApiKey.ApiKeyRecord, now: number): string => {
  const status = record.revokedAt !== null ? "revoked" : record.expiresAt !== null && now >= record.expiresAt ? "expired" : "active"
  const expires = record.expiresAt === null ? "never" : timeText(record.expiresAt)
  return `${record.id}\t${status}\t${record.name}\tcreated ${timeText(record.createdAt)}\texpires ${expires}`
}

/** Where this run keeps keys: a server finds them only there (same SPOT_DATA_DIR or DATABASE_URL). */
const storeDescription = process.env["DATABASE_URL"]
  ? "the api_keys table of the DATABASE_URL database"
  : `${keyFilePath()} (SPOT_DATA_DIR=${dataDirFromEnv()}: start the server with the same SPOT_DATA_DIR)`

/**
 * The key table of the `DATABASE_URL` database. One that does not answer is said in one line
 * naming it (never its password) and what to do: not the driver's stack trace.
 */
const databaseKeyStore = (url: Redacted.Redacted<string>) =>
  PgKeyStore.layer().pipe(
    Layer.provide(PgDatabase.layerServer({ url })),
    Layer.catchCause((cause) =>
      Layer.effect(KeyStore, Effect.fail(
        `the database at ${PgDatabase.serverAddress(url)} (DATABASE_URL, where the keys are kept) does not answer or could not be ` +
          `prepared (${String(Cause.squash(cause)).split("\n")[0]}); nothing was changed: start it or correct DATABASE_URL, then run the command again`
      ))
    )
  )

const program = Effect.gen(function*() {
  const parsed = parseKeysCommand(process.argv.slice(2))
  if ("error" in parsed) return yield* Effect.fail(parsed.error)
  const store = yield* KeyStore
  const now = yield* Clock.currentTimeMillis
  switch (parsed.command) {
    case "create": {
      const days = parsed.expiresInDays
      const created = yield* store.create({ name: parsed.name, lifetimeMs: days === null ? null : Math.round(days * dayMs) })
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
      const record = yield* store.revoke(parsed.id)
      if (record === null) return yield* Effect.fail(`no key with id ${parsed.id}`)
      yield* Console.log(describe(record, now))
      return
    }
  }
}).pipe(
  // With DATABASE_URL the server keeps keys in PostgreSQL (docs/storage.md); otherwise the key file.
  Effect.provide(process.env["DATABASE_URL"] ? databaseKeyStore(Redacted.make(process.env["DATABASE_URL"])) : FileKeyStore.layer({ path: keyFilePath() })),
  Effect.catch((message) => Effect.flatMap(Console.error(String(typeof message === "string" ? message : (message as { message: string }).message)), () => Effect.sync(() => void (process.exitCode = 2))))
)

NodeRuntime.runMain(program)
