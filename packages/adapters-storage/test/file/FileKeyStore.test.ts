import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { KeyStore } from "@spot/application"
import * as FileKeyStore from "../../src/file/FileKeyStore.js"

/** A key file's path in a directory of its own, removed after the file's tests. */
const freshPath = () => {
  const dir = mkdtempSync(join(tmpdir(), "spot-keys-"))
  madeDirs.push(dir)
  return join(dir, "api-keys.json")
}
const madeDirs: Array<string> = []
afterAll(() => {
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true })
})
const withStore = <A, E>(path: string, use: (store: KeyStore["Service"]) => Effect.Effect<A, E>, seedKeys: Array<string> = []) =>
  Effect.flatMap(FileKeyStore.make({ path, seedKeys: seedKeys.map((k) => Redacted.make(k)) }), use)

describe("FileKeyStore", () => {
  it.effect("keeps created keys across store instances (restarts), as hashes only", () =>
    Effect.gen(function*() {
      const path = freshPath()
      const created = yield* withStore(path, (store) => store.create({ name: "client A" }))
      const key = Redacted.value(created.key)
      const file = readFileSync(path, "utf8")
      expect(file).not.toContain(key)
      expect(file).toContain("client A")
      const again = yield* withStore(path, (store) => store.verify(Redacted.make(key)))
      expect(again).toEqual(created.record)
      expect(yield* withStore(path, (store) => store.verify(Redacted.make(key + "x")))).toBeNull()
    }))

  it.effect("revokes by id: the record stays, marked revoked; an unknown id answers null", () =>
    Effect.gen(function*() {
      const path = freshPath()
      const created = yield* withStore(path, (store) => store.create({ name: "b", expiresAt: 9_999_999_999_999 }))
      const revoked = yield* withStore(path, (store) => store.revoke(created.record.id))
      expect(revoked?.revokedAt).toBeTypeOf("number")
      const seen = yield* withStore(path, (store) => store.verify(created.key))
      expect(seen?.revokedAt).toBe(revoked?.revokedAt)
      expect(yield* withStore(path, (store) => store.revoke("key_missing"))).toBeNull()
    }))

  it.effect("dates a key with a lifetime from its own creation time, exactly, and keeps it so", () =>
    Effect.gen(function*() {
      const path = freshPath()
      const created = yield* withStore(path, (store) => store.create({ name: "c", lifetimeMs: 3_153_600_000_000 }))
      expect(created.record.expiresAt).toBe(created.record.createdAt + 3_153_600_000_000)
      expect((yield* withStore(path, (store) => store.verify(created.key)))?.expiresAt).toBe(created.record.expiresAt)
    }))

  it.effect("accepts seeded keys without writing them", () =>
    Effect.gen(function*() {
      const path = freshPath()
      const record = yield* withStore(path, (store) => store.verify(Redacted.make("sk_test_seeded")), ["sk_test_seeded"])
      expect(record?.name).toBe("configured-1")
      expect(() => readFileSync(path)).toThrow()
    }))

  it.effect("a corrupted key file makes the store unavailable (503), never an empty store (401)", () =>
    Effect.gen(function*() {
      const path = freshPath()
      writeFileSync(path, "{ not json")
      const result = yield* Effect.flip(FileKeyStore.make({ path }))
      expect(result._tag).toBe("KeyStoreUnavailable")
    }))

  it.effect("a change waits for another process's change to the file: both land (two keys commands at once)", () =>
    Effect.gen(function*() {
      const path = freshPath()
      yield* withStore(path, (store) => store.create({ name: "first" }))
      // Another process's change, as the store makes one: take the lock, read, think 300 ms, write its record, let go.
      const other = spawn(process.execPath, ["-e", `
        const fs = require("node:fs")
        const [path] = process.argv.slice(1)
        fs.closeSync(fs.openSync(path + ".lock", "wx"))
        const file = JSON.parse(fs.readFileSync(path, "utf8"))
        setTimeout(() => {
          file.keys.push({ hash: "0".repeat(64), record: { id: "key_other", name: "other", createdAt: 1, expiresAt: null, revokedAt: null } })
          fs.writeFileSync(path, JSON.stringify(file))
          fs.unlinkSync(path + ".lock")
        }, 300)`, path], { stdio: "inherit" })
      const exited = new Promise<number | null>((resolve) => other.on("exit", resolve))
      yield* Effect.promise(async () => {
        while (!existsSync(`${path}.lock`)) await new Promise((r) => setTimeout(r, 5))
      })
      // started while the other holds the lock: it reads the file only once the other has written
      yield* withStore(path, (store) => store.create({ name: "mine" }))
      expect(yield* Effect.promise(() => exited)).toBe(0)
      const names = yield* withStore(path, (store) => Effect.map(store.list, (records) => records.map((r) => r.name)))
      expect(names.sort()).toEqual(["first", "mine", "other"])
      expect(existsSync(`${path}.lock`)).toBe(false)
    }))

  it.effect("a lock left behind by a process that died holding it is taken over after 30 s", () =>
    Effect.gen(function*() {
      const path = freshPath()
      writeFileSync(`${path}.lock`, "")
      const minuteAgo = new Date(Date.now() - 60_000)
      utimesSync(`${path}.lock`, minuteAgo, minuteAgo)
      const created = yield* withStore(path, (store) => store.create({ name: "after a crash" }))
      expect(created.record.name).toBe("after a crash")
      expect(existsSync(`${path}.lock`)).toBe(false)
    }))
})
