/**
 * Chain-shaped random identifiers: Solana base58 addresses and signatures, EVM hex addresses and
 * transaction hashes. These run per swap, so they are joined from precomputed chunks picked by 16
 * random bits each: an 88-character signature is 6 lookups and 6 joins (96 random bits), an EVM
 * hash 5 (80 random bits) — unique in practice for billions of transactions.
 *
 * The chunk tables are fixed (built from a constant mixing of the index, not from a seed), so the
 * seed alone decides the output; they are built on first use (a few MB) so importing costs nothing.
 */
import type { Prng } from "./Prng.js"

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

/** A fixed bijective mixing of 32-bit values (murmur3 finalizer). */
const mix32 = (value: number): number => {
  let x = value >>> 0
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0
  return (x ^ (x >>> 16)) >>> 0
}

interface ChunkTables {
  readonly hex4: ReadonlyArray<string>
  readonly hex8: ReadonlyArray<string>
  readonly hex16: ReadonlyArray<string>
  readonly base58x4: ReadonlyArray<string>
  readonly base58x8: ReadonlyArray<string>
  readonly base58x16: ReadonlyArray<string>
}

const size = 65536

const buildTables = (): ChunkTables => {
  const hex4 = Array.from({ length: size }, (_, i) => i.toString(16).padStart(4, "0"))
  const hex8 = Array.from({ length: size }, (_, i) => mix32(i).toString(16).padStart(8, "0"))
  const hex16 = Array.from({ length: size }, (_, i) => hex8[i]! + hex8[mix32(i + size) & 0xffff]!)
  const base58x4 = Array.from({ length: size }, (_, i) => {
    let x = mix32(i + 2 * size)
    let out = ""
    for (let k = 0; k < 4; k++) {
      out += base58Alphabet[x % 58]
      x = mix32(x + k + 1)
    }
    return out
  })
  const base58x8 = Array.from({ length: size }, (_, i) => base58x4[i]! + base58x4[mix32(i + 3 * size) & 0xffff]!)
  const base58x16 = Array.from({ length: size }, (_, i) => base58x8[i]! + base58x8[mix32(i + 4 * size) & 0xffff]!)
  return {
    hex4: hex4.map(flat),
    hex8: hex8.map(flat),
    hex16: hex16.map(flat),
    base58x4: base58x4.map(flat),
    base58x8: base58x8.map(flat),
    base58x16: base58x16.map(flat)
  }
}

/**
 * The same text as one flat string. The chunks above are joined piece by piece, so each is a tree
 * of string pieces; every identifier joined from them would be a deep tree too, which the engine
 * walks in full the first time it reads the identifier's characters (hashing a swap's event id
 * for its trade id cost about 7% of the fold's time that way). Flat chunks make an identifier a
 * handful of flat pieces.
 */
const flat = (text: string): string => text.split("").join("")

let cachedTables: ChunkTables | undefined
const tables = (): ChunkTables => (cachedTables ??= buildTables())

/** A 44-character base58 account address; `suffix` (vanity, such as `pump`) replaces its tail. */
export const solanaAddress = (prng: Prng, suffix = ""): string => {
  const t = tables()
  const a = prng.nextUint32()
  const b = prng.nextUint32()
  const body = t.base58x16[a & 0xffff]! + t.base58x16[a >>> 16]! + t.base58x8[b & 0xffff]! + t.base58x4[b >>> 16]!
  return suffix.length === 0 ? body : body.slice(0, 44 - suffix.length) + suffix
}

/** An 88-character base58 transaction signature. */
export const solanaSignature = (prng: Prng): string => {
  const t = tables().base58x16
  const a = prng.nextUint32()
  const b = prng.nextUint32()
  const c = prng.nextUint32()
  return t[a & 0xffff]! + t[a >>> 16]! + t[b & 0xffff]! + t[b >>> 16]! + t[c & 0xffff]! + tables().base58x8[c >>> 16]!
}

/** A lower-case `0x` address; `suffix` (vanity, such as `4444`) replaces its tail. */
export const evmAddress = (prng: Prng, suffix = ""): string => {
  const t = tables()
  const a = prng.nextUint32()
  const b = prng.nextUint32()
  const c = prng.nextUint32()
  const body = t.hex16[a & 0xffff]! + t.hex8[a >>> 16]! + t.hex4[b & 0xffff]! + t.hex4[b >>> 16]! + t.hex4[c & 0xffff]! + t.hex4[c >>> 16]!
  return suffix.length === 0 ? `0x${body}` : `0x${body.slice(0, 40 - suffix.length)}${suffix}`
}

/** A `0x` + 64 hex transaction hash. */
export const evmTransactionHash = (prng: Prng): string => {
  const t = tables()
  const a = prng.nextUint32()
  const b = prng.nextUint32()
  const c = prng.nextUint32()
  return "0x" + t.hex16[a & 0xffff]! + t.hex16[a >>> 16]! + t.hex16[b & 0xffff]! + t.hex8[b >>> 16]! + t.hex8[c & 0xffff]!
}

/** An IPFS-style content id for token images. */
export const contentId = (prng: Prng): string => {
  const t = tables().base58x16
  const a = prng.nextUint32()
  const b = prng.nextUint32()
  return "Qm" + t[a & 0xffff]! + t[a >>> 16]! + t[b & 0xffff]! + tables().base58x4[b >>> 16]!
}
