/**
 * A process that writes snapshots through `FileSnapshotStore` one after another until it is
 * killed (snapshot-files.test.ts kills it with SIGKILL mid-write). Body of snapshot `seq`: 24 MB of
 * a pattern the test can check. Prints `saved <seq>` once a save returned.
 *
 *   node --import tsx snapshot-writer.child.ts <directory>
 */
import { Effect } from "effect"
import { FileSnapshotStore } from "@spot/adapters-storage"

export const bodyOf = (seq: number): Uint8Array => {
  const body = new Uint8Array(24 * 1024 * 1024)
  body.fill(seq & 0xff)
  for (let i = 0; i < body.length; i += 4096) body[i] = (i / 4096 + seq) & 0xff
  return body
}

if (process.argv[1]?.endsWith("snapshot-writer.child.ts")) {
  const store = await Effect.runPromise(FileSnapshotStore.make({ directory: process.argv[2]! }))
  for (let seq = 1; ; seq++) {
    await Effect.runPromise(store.save({ logId: "kill-test-log", seq, eventId: `event-${seq}`, engine: "test", takenAt: Date.now() }, [bodyOf(seq)]))
    process.stdout.write(`saved ${seq}\n`)
  }
}
