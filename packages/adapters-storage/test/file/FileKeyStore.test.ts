import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { KeyStore } from "@spot/application"
import * as FileKeyStore from "../../src/file/FileKeyStore.js"

const freshPath = () => join(mkdtempSync(join(tmpdir(), "spot-keys-")), "api-keys.json")
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
})
