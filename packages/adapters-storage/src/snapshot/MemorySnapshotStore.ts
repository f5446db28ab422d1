/**
 * In-memory `SnapshotStore` for tests: the same contract as the file store (newest first, only the
 * newest `keep` of a log kept, bodies returned as written), plus `damage` to simulate a corrupt
 * file.
 */
import { Effect, Layer } from "effect"
import { SnapshotStore, SnapshotStoreError } from "@spot/application"
import type { SnapshotHeader, SnapshotListing, SnapshotStoreShape } from "@spot/application"

export interface MemorySnapshotStore extends SnapshotStoreShape {
  /** What is stored, by name. */
  readonly entries: Map<string, { readonly header: SnapshotHeader; body: Uint8Array; damaged: boolean }>
  /** Marks a snapshot damaged: loading it then fails as a checksum mismatch would. */
  readonly damage: (name: string) => void
}

export const makeUnsafe = (keep = 2): MemorySnapshotStore => {
  const entries: MemorySnapshotStore["entries"] = new Map()
  const sorted = (): Array<SnapshotListing> =>
    [...entries].map(([name, entry]) => ({ name, header: entry.header, bytes: entry.body.length })).sort((a, b) => b.header.seq - a.header.seq || b.header.takenAt - a.header.takenAt)
  return {
    entries,
    damage: (name) => {
      const entry = entries.get(name)
      if (entry !== undefined) entry.damaged = true
    },
    save: (header, body) =>
      Effect.sync(() => {
        const name = `snapshot-${String(header.seq).padStart(16, "0")}-${header.takenAt}`
        const bytes = new Uint8Array(body.reduce((sum, chunk) => sum + chunk.length, 0))
        let at = 0
        for (const chunk of body) {
          bytes.set(chunk, at)
          at += chunk.length
        }
        entries.set(name, { header, body: bytes, damaged: false })
        let kept = 0
        for (const listing of sorted()) {
          if ("header" in listing && listing.header.logId === header.logId && kept < keep) kept++
          else if (listing.name !== name) entries.delete(listing.name)
        }
        return name
      }),
    list: Effect.sync(sorted),
    load: (name) =>
      Effect.suspend(() => {
        const entry = entries.get(name)
        if (entry === undefined) return Effect.fail(new SnapshotStoreError({ message: `reading snapshot ${name}: no such snapshot` }))
        if (entry.damaged) return Effect.fail(new SnapshotStoreError({ message: `reading snapshot ${name}: checksum mismatch: the file is damaged` }))
        return Effect.succeed(entry.body.slice()) // the caller's own (a builder moves it to a worker)
      })
  }
}

export const layer = (store: MemorySnapshotStore = makeUnsafe()): Layer.Layer<SnapshotStore> => Layer.succeed(SnapshotStore, store)
