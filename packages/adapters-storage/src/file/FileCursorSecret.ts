/**
 * The secret that signs page cursors, as the service keeps it: the configured one when set
 * (`SPOT_CURSOR_SECRET`), else 32 random bytes made on the first start in the data directory
 * (owner read/write only) and read back on every later one, so a client's cursors survive a
 * restart as its keys do. A directory that cannot be written gives a secret of this process only:
 * the service still starts, and its cursors last as long as it runs.
 */
import { Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { CursorSecret } from "@spot/application"

export interface FileCursorSecretOptions {
  /** The configured secret; none: the one kept in `dataDir`. */
  readonly configured: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
}

/** Where the secret is kept in a data directory. */
export const fileIn = (dataDir: string): string => `${dataDir}/cursor-secret`

const secretBytes = 32

const stored = (path: string): Uint8Array => {
  try {
    mkdirSync(dirname(path), { recursive: true })
    try {
      writeFileSync(path, randomBytes(secretBytes), { flag: "wx", mode: 0o600 })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const secret = readFileSync(path)
    if (secret.length >= secretBytes) return new Uint8Array(secret)
  } catch {
    // fall through: a secret of this process
  }
  return new Uint8Array(randomBytes(secretBytes))
}

/** The secret's bytes: the configured text's UTF-8, or the kept (or this process's) random bytes. */
export const secretOf = (options: FileCursorSecretOptions): Uint8Array =>
  Option.match(options.configured, {
    onNone: () => stored(fileIn(options.dataDir)),
    onSome: (secret) => new TextEncoder().encode(Redacted.value(secret))
  })

/** The application's `CursorSecret`, read (or made) once when the layer is built. */
export const layer = (options: FileCursorSecretOptions): Layer.Layer<CursorSecret.CursorSecret> =>
  Layer.sync(CursorSecret.CursorSecret, () => secretOf(options))
