/**
 * The cursor secret without `SPOT_CURSOR_SECRET`: made once in the data directory and read back on
 * every start, so cursors survive a restart; the configured one wins; a data directory that cannot
 * be written gives a secret of the process (the service still starts).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Option, Redacted } from "effect"
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FileCursorSecret } from "@spot/adapters-storage"

const scratch = mkdtempSync(join(tmpdir(), "spot-cursor-secret-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const config = (dataDir: string, secret?: string): FileCursorSecret.FileCursorSecretOptions => ({
  configured: secret === undefined ? Option.none() : Option.some(Redacted.make(secret)),
  dataDir
})
const cursorSecretOf = FileCursorSecret.secretOf

describe("cursor secret", () => {
  it("is made once in the data directory (owner-only) and the same on every start", () => {
    const dataDir = join(scratch, "data")
    const first = cursorSecretOf(config(dataDir))
    const second = cursorSecretOf(config(dataDir))
    expect(first.length).toBe(32)
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true)
    expect(statSync(FileCursorSecret.fileIn(dataDir)).mode & 0o777).toBe(0o600)
    // another data directory, another secret
    expect(Buffer.from(cursorSecretOf(config(join(scratch, "other")))).equals(Buffer.from(first))).toBe(false)
  })

  it("SPOT_CURSOR_SECRET wins over the stored one", () => {
    const secret = cursorSecretOf(config(join(scratch, "data"), "configured-secret"))
    expect(new TextDecoder().decode(secret)).toBe("configured-secret")
  })

  it("a data directory that cannot be written: a secret of this process, every start another", () => {
    const blocker = join(scratch, "a-file")
    writeFileSync(blocker, "not a directory")
    const dataDir = join(blocker, "data")
    const a = cursorSecretOf(config(dataDir))
    const b = cursorSecretOf(config(dataDir))
    expect(a.length).toBe(32)
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false)
  })
})
