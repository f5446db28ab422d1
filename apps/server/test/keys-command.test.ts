import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { maxExpiresInDays, maxNameLength, parseKeysCommand, timeText, usage } from "../src/KeysCommand.js"

const errorOf = (args: ReadonlyArray<string>): string => {
  const parsed = parseKeysCommand(args)
  if (!("error" in parsed)) throw new Error(`accepted ${JSON.stringify(args)}`)
  return parsed.error
}

describe("npm run keys -- … arguments", () => {
  it("reads the three commands", () => {
    expect(parseKeysCommand(["create", "client A"])).toEqual({ command: "create", name: "client A", expiresInDays: null })
    expect(parseKeysCommand(["create", "b", "--expires-in-days", "30"])).toEqual({ command: "create", name: "b", expiresInDays: 30 })
    expect(parseKeysCommand(["create", "c", "--expires-in-days", "0.5"])).toEqual({ command: "create", name: "c", expiresInDays: 0.5 })
    expect(parseKeysCommand(["create", "d", "--expires-in-days", String(maxExpiresInDays)])).toEqual({ command: "create", name: "d", expiresInDays: maxExpiresInDays })
    expect(parseKeysCommand(["list"])).toEqual({ command: "list" })
    expect(parseKeysCommand(["revoke", "key_0123"])).toEqual({ command: "revoke", id: "key_0123" })
  })

  it("refuses an option it does not know, a repeated one, or a stray argument, before anything is stored", () => {
    expect(errorOf(["create", "w", "--bogus"])).toMatch(/unknown or repeated option "--bogus"/)
    expect(errorOf(["create", "w", "--expires-in-day", "1"])).toMatch(/unknown or repeated option "--expires-in-day"/)
    expect(errorOf(["create", "w", "--expires-in-days", "1", "--expires-in-days", "2"])).toMatch(/repeated option/)
    expect(errorOf(["list", "extra"])).toBe(usage)
    expect(errorOf(["revoke"])).toBe(usage)
    expect(errorOf(["revoke", "a", "b"])).toBe(usage)
    expect(errorOf(["create"])).toBe(usage)
    expect(errorOf(["create", "--expires-in-days", "1"])).toBe(usage)
    expect(errorOf(["create", "  "])).toBe(usage)
    expect(errorOf([])).toBe(usage)
    expect(errorOf(["delete", "x"])).toBe(usage)
  })

  it("takes a number of days it can store and print: plain digits, at least a second, at most 100 years", () => {
    for (const days of ["0", "-1", "abc", "1e9", "Infinity", "NaN", "1e-12", "0.00000001", String(maxExpiresInDays + 1), "", " 1", "0x10"]) {
      expect(errorOf(["create", "x", "--expires-in-days", days])).toMatch(/--expires-in-days needs a number of days/)
    }
    expect(errorOf(["create", "x", "--expires-in-days"])).toMatch(/--expires-in-days needs/)
  })

  it("takes a name that fits on one line of `list`: no control or invisible characters, at most 200 characters (code points)", () => {
    const refused = [
      "nl\nhere", "tab\there", "cr\r", "nul\u0000", "del\u007f", "c1\u0085", "ls\u2028",
      "rlo\u202eb", "zwsp\u200bb", "bom\ufeff", "vs\ufe0f", "x".repeat(maxNameLength + 1), "😀".repeat(maxNameLength + 1)
    ]
    for (const name of refused) {
      expect(errorOf(["create", name]), JSON.stringify(name)).toMatch(/one line of at most 200 characters, without control or invisible characters/)
    }
    for (const name of ["Client Ünïcödé 🚀", "x".repeat(maxNameLength), "😀".repeat(maxNameLength), "a-b_c.d (prod)", "名前"]) {
      expect(parseKeysCommand(["create", name])).toEqual({ command: "create", name, expiresInDays: null })
    }
  })

  it("says in one line that the DATABASE_URL database does not answer, naming it without its password; no stack trace", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const root = fileURLToPath(new URL("../../..", import.meta.url))
    const run = spawnSync(process.execPath, ["--import", "tsx", "apps/server/src/keys.ts", "list"], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: `postgres://spot:s3cret-pw@127.0.0.1:${port}/keysdb` },
      encoding: "utf8",
      timeout: 60_000
    })
    expect(run.status).toBe(2)
    expect(run.stdout).toBe("")
    const lines = run.stderr.trim().split("\n")
    expect(lines, run.stderr).toHaveLength(1)
    expect(lines[0]).toMatch(new RegExp(`^the database at 127\\.0\\.0\\.1:${port}/keysdb \\(DATABASE_URL, where the keys are kept\\) does not answer`))
    expect(lines[0]).toMatch(/nothing was changed: start it or correct DATABASE_URL, then run the command again$/)
    expect(run.stderr).not.toContain("s3cret-pw")
  })

  it("shows any stored time: ISO 8601, or the raw number past what a date can show", () => {
    expect(timeText(0)).toBe("1970-01-01T00:00:00.000Z")
    expect(timeText(86_401_795_784_599_940)).toBe("86401795784599940 ms")
  })
})
