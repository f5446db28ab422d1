/**
 * `SnapshotStore` in a directory of files (by default `${SPOT_DATA_DIR}/snapshots`): one file per
 * snapshot, a cache next to the data that can be deleted at any time (the log is replayed then).
 *
 * File layout (little-endian):
 *
 *   "SPOTSNAP"                 8 bytes, magic
 *   u32 file format version    (FILE_FORMAT_VERSION; other versions are listed as unreadable)
 *   u32 header length
 *   header                     UTF-8 JSON: logId, seq, eventId, engine, takenAt, bodyBytes, sha256
 *   body                       the engine bytes (EngineSnapshot), bodyBytes long
 *
 * Writing is atomic: the file is written under a temporary name (never listed or read), flushed
 * to disk (fsync), renamed to its final name, and the directory flushed; a crash at any point
 * leaves either no new snapshot or a complete one. Temporary files left by a crash are removed
 * when the store starts. After each write only the newest `keep` snapshots (default 2) of the
 * written log are kept; other files in the snapshot naming (older ones, another log's, damaged
 * ones) are removed. Listing reads only headers and sizes (a truncated file is told from its
 * size); loading verifies the SHA-256 of the body, and a file that fails it is renamed
 * `<name>.damaged` (never listed again; removed by the next write). Hashing yields to the event
 * loop every few megabytes.
 */
import { Effect, Layer } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises"
import { join } from "node:path"
import { SnapshotStore, SnapshotStoreError } from "@spot/application"
import type { SnapshotHeader, SnapshotListing, SnapshotStoreShape } from "@spot/application"

export const FILE_FORMAT_VERSION = 1
const MAGIC = "SPOTSNAP"
const PREFIX_BYTES = 16
/** Headers are small; anything larger is damage, not a header. */
const MAX_HEADER_BYTES = 64 * 1024

export interface FileSnapshotStoreOptions {
  /** The directory (created on the first write). */
  readonly directory: string
  /** Snapshots kept after a write (default 2): the newest, and one to fall back on. */
  readonly keep?: number
}

interface FileHeader extends SnapshotHeader {
  readonly bodyBytes: number
  readonly sha256: string
}

const namePattern = /^snapshot-(\d{16})-(\d+)\.snap$/
const temporaryPattern = /^\.snapshot-.*\.tmp$/
const damagedPattern = /^snapshot-\d{16}-\d+\.snap\.damaged$/

/** A snapshot file that is certainly damaged (not an I/O failure): set aside, not retried. */
class DamagedSnapshot extends Error {}

export const fileNameOf = (header: SnapshotHeader): string => `snapshot-${String(header.seq).padStart(16, "0")}-${header.takenAt}.snap`

/** Bytes hashed between two turns of the event loop (a few milliseconds each). */
const HASH_SLICE = 8 * 1024 * 1024

/**
 * SHA-256 of the concatenation of `chunks`, a slice per event-loop turn: the service keeps
 * serving while a snapshot is hashed. (node:crypto's hash uses the CPU's SHA instructions, about
 * 0.3 s per 500 MB here; WebCrypto's `digest`, although off the event loop, copies its input
 * first and cost several times more CPU.)
 */
const sha256Hex = async (chunks: ReadonlyArray<Uint8Array>): Promise<string> => {
  const hash = createHash("sha256")
  let sinceTurn = 0
  for (const bytes of chunks) {
    for (let at = 0; at < bytes.length; at += HASH_SLICE) {
      const slice = bytes.subarray(at, Math.min(bytes.length, at + HASH_SLICE))
      hash.update(slice)
      sinceTurn += slice.length
      if (sinceTurn >= HASH_SLICE) {
        await new Promise((resolve) => setImmediate(resolve))
        sinceTurn = 0
      }
    }
  }
  return hash.digest("hex")
}

const encodeHeader = (header: FileHeader): Uint8Array => {
  const json = Buffer.from(JSON.stringify(header), "utf8")
  const out = Buffer.alloc(PREFIX_BYTES + json.length)
  out.write(MAGIC, 0, "latin1")
  out.writeUInt32LE(FILE_FORMAT_VERSION, 8)
  out.writeUInt32LE(json.length, 12)
  json.copy(out, PREFIX_BYTES)
  return out
}

const isHeader = (value: unknown): value is FileHeader => {
  if (typeof value !== "object" || value === null) return false
  const h = value as Record<string, unknown>
  return typeof h.logId === "string" &&
    Number.isSafeInteger(h.seq) && (h.seq as number) > 0 &&
    typeof h.eventId === "string" &&
    typeof h.engine === "string" &&
    Number.isSafeInteger(h.takenAt) &&
    Number.isSafeInteger(h.bodyBytes) && (h.bodyBytes as number) >= 0 &&
    typeof h.sha256 === "string" && /^[0-9a-f]{64}$/.test(h.sha256)
}

/** The header of a snapshot file from its first bytes, or why there is none. */
const parseHeader = async (
  prefix: Buffer,
  readMore: (length: number) => Promise<Buffer>
): Promise<{ header: FileHeader; headerEnd: number } | string> => {
  if (prefix.length < PREFIX_BYTES || prefix.toString("latin1", 0, 8) !== MAGIC) return "not a snapshot file"
  const version = prefix.readUInt32LE(8)
  if (version !== FILE_FORMAT_VERSION) return `file format version ${version} (this code reads version ${FILE_FORMAT_VERSION})`
  const length = prefix.readUInt32LE(12)
  if (length > MAX_HEADER_BYTES) return "damaged header"
  const json = await readMore(length)
  if (json.length < length) return "truncated header"
  let parsed: unknown
  try {
    parsed = JSON.parse(json.toString("utf8"))
  } catch {
    return "damaged header"
  }
  if (!isHeader(parsed)) return "damaged header"
  return { header: parsed, headerEnd: PREFIX_BYTES + length }
}

const failure = (what: string) => (cause: unknown) =>
  new SnapshotStoreError({ message: `${what}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })

export const make = (options: FileSnapshotStoreOptions): Effect.Effect<SnapshotStoreShape> =>
  Effect.gen(function*() {
    const directory = options.directory
    const keep = Math.max(1, options.keep ?? 2)

    const names = async (): Promise<Array<string>> => {
      try {
        return await readdir(directory)
      } catch (error) {
        if ((error as { code?: string }).code === "ENOENT") return []
        throw error
      }
    }

    const readListing = async (name: string): Promise<SnapshotListing> => {
      const path = join(directory, name)
      let handle
      try {
        handle = await open(path, "r")
      } catch (error) {
        return { name, problem: `unreadable: ${(error as Error).message}` }
      }
      try {
        const size = (await handle.stat()).size
        const prefix = Buffer.alloc(PREFIX_BYTES)
        const { bytesRead } = await handle.read(prefix, 0, PREFIX_BYTES, 0)
        const parsed = await parseHeader(prefix.subarray(0, bytesRead), async (length) => {
          const json = Buffer.alloc(length)
          const read = await handle.read(json, 0, length, PREFIX_BYTES)
          return json.subarray(0, read.bytesRead)
        })
        if (typeof parsed === "string") return { name, problem: parsed }
        const expected = parsed.headerEnd + parsed.header.bodyBytes
        if (size !== expected) return { name, problem: `truncated or damaged: ${size} bytes, its header says ${expected}` }
        const { bodyBytes: _bodyBytes, sha256: _sha256, ...header } = parsed.header
        return { name, header, bytes: size }
      } catch (error) {
        return { name, problem: `unreadable: ${(error as Error).message}` }
      } finally {
        await handle.close()
      }
    }

    const listNow = async (): Promise<Array<SnapshotListing>> => {
      const listings = await Promise.all((await names()).filter((name) => namePattern.test(name)).map(readListing))
      return listings.sort((a, b) => {
        if ("header" in a && "header" in b) return b.header.seq - a.header.seq || b.header.takenAt - a.header.takenAt || (a.name < b.name ? 1 : -1)
        if ("header" in a) return -1
        if ("header" in b) return 1
        return a.name < b.name ? 1 : -1
      })
    }

    const writeAll = async (handle: Awaited<ReturnType<typeof open>>, bytes: Uint8Array, at: number): Promise<number> => {
      let offset = 0
      while (offset < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, at + offset)
        offset += bytesWritten
      }
      return at + bytes.length
    }

    const syncDirectory = async () => {
      const handle = await open(directory, "r")
      try {
        await handle.sync()
      } finally {
        await handle.close()
      }
    }

    const saveNow = async (header: SnapshotHeader, body: ReadonlyArray<Uint8Array>): Promise<string> => {
      await mkdir(directory, { recursive: true })
      const bodyBytes = body.reduce((sum, chunk) => sum + chunk.length, 0)
      const fileHeader: FileHeader = { ...header, bodyBytes, sha256: await sha256Hex(body) }
      const name = fileNameOf(header)
      const temporary = join(directory, `.${name}.${randomBytes(4).toString("hex")}.tmp`)
      const handle = await open(temporary, "wx", 0o600)
      try {
        let end = await writeAll(handle, encodeHeader(fileHeader), 0)
        for (const chunk of body) end = await writeAll(handle, chunk, end)
        await handle.sync()
      } catch (error) {
        await handle.close().catch(() => {})
        await unlink(temporary).catch(() => {})
        throw error
      }
      await handle.close()
      await rename(temporary, join(directory, name))
      await syncDirectory()
      // Keep the newest `keep` of this log; everything else in the snapshot naming goes.
      let kept = 0
      for (const listing of await listNow()) {
        const mine = "header" in listing && listing.header.logId === header.logId
        if (mine && kept < keep) {
          kept++
          continue
        }
        if (listing.name !== name) await unlink(join(directory, listing.name)).catch(() => {})
      }
      for (const other of await names()) if (damagedPattern.test(other)) await unlink(join(directory, other)).catch(() => {})
      return name
    }

    const loadNow = async (name: string): Promise<Uint8Array> => {
      if (!namePattern.test(name)) throw new Error(`${name} is not a snapshot name`)
      const path = join(directory, name)
      const file = await readFile(path)
      try {
        const parsed = await parseHeader(file.subarray(0, PREFIX_BYTES), async (length) => file.subarray(PREFIX_BYTES, PREFIX_BYTES + length))
        if (typeof parsed === "string") throw new DamagedSnapshot(parsed)
        const body = file.subarray(parsed.headerEnd)
        if (body.length !== parsed.header.bodyBytes) {
          throw new DamagedSnapshot(`truncated or damaged: ${body.length} body bytes, its header says ${parsed.header.bodyBytes}`)
        }
        if ((await sha256Hex([body])) !== parsed.header.sha256) throw new DamagedSnapshot("checksum mismatch: the file is damaged")
        return new Uint8Array(body.buffer, body.byteOffset, body.byteLength)
      } catch (error) {
        if (error instanceof DamagedSnapshot) await rename(path, `${path}.damaged`).catch(() => {})
        throw error
      }
    }

    // Temporary files of writes a crash interrupted: never read, removed here.
    yield* Effect.promise(async () => {
      for (const name of await names().catch(() => [])) {
        if (temporaryPattern.test(name)) await unlink(join(directory, name)).catch(() => {})
      }
    })

    return SnapshotStore.of({
      save: (header, body) => Effect.tryPromise({ try: () => saveNow(header, body), catch: failure(`writing snapshot seq ${header.seq}`) }),
      list: Effect.tryPromise({ try: listNow, catch: failure("listing snapshots") }),
      load: (name) => Effect.tryPromise({ try: () => loadNow(name), catch: failure(`reading snapshot ${name}`) })
    })
  })

export const layer = (options: FileSnapshotStoreOptions): Layer.Layer<SnapshotStore> => Layer.effect(SnapshotStore, make(options))

/** Where the service keeps its snapshots under its data directory. */
export const directoryIn = (dataDir: string): string => join(dataDir, "snapshots")
