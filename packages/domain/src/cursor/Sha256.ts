/**
 * SHA-256 (FIPS 180-4) in plain TypeScript, because the domain package cannot import
 * `node:crypto`: the engine fingerprint (`snapshot/EngineSnapshot.ts`) is hashed with it. Cursors
 * are signed outside the domain (`Cursor.Primitives`).
 */

const roundConstants = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
])

const initialState = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
])

const BLOCK_BYTES = 64
export const DIGEST_BYTES = 32

// One message schedule shared by every call: the functions are synchronous and never re-entrant.
const schedule = new Int32Array(64)

/** Folds one 64-byte block of `bytes` starting at `offset` into `state`. */
const compress = (state: Int32Array, bytes: Uint8Array, offset: number): void => {
  const w = schedule
  for (let i = 0; i < 16; i++) {
    const j = offset + i * 4
    w[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!
  }
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!
    const y = w[i - 2]!
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0
  }
  let a = state[0]!
  let b = state[1]!
  let c = state[2]!
  let d = state[3]!
  let e = state[4]!
  let f = state[5]!
  let g = state[6]!
  let h = state[7]!
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
    const ch = (e & f) ^ (~e & g)
    const t1 = (h + S1 + ch + roundConstants[i]! + w[i]!) | 0
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
    const maj = (a & b) ^ (a & c) ^ (b & c)
    const t2 = (S0 + maj) | 0
    h = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  state[0] = (state[0]! + a) | 0
  state[1] = (state[1]! + b) | 0
  state[2] = (state[2]! + c) | 0
  state[3] = (state[3]! + d) | 0
  state[4] = (state[4]! + e) | 0
  state[5] = (state[5]! + f) | 0
  state[6] = (state[6]! + g) | 0
  state[7] = (state[7]! + h) | 0
}

/** Absorbs `message` into a fresh `state`, pads, and writes the digest into `out`. */
const finish = (state: Int32Array, message: Uint8Array, out: Uint8Array): void => {
  const length = message.length
  let offset = 0
  for (; offset + BLOCK_BYTES <= length; offset += BLOCK_BYTES) compress(state, message, offset)
  const rest = length - offset
  // The tail, the 0x80 marker and the 8-byte bit length fit in one block or spill into a second.
  const tail = new Uint8Array(rest + 9 <= BLOCK_BYTES ? BLOCK_BYTES : BLOCK_BYTES * 2)
  tail.set(message.subarray(offset), 0)
  tail[rest] = 0x80
  const bits = length * 8
  const high = Math.floor(bits / 0x100000000)
  const low = bits >>> 0
  const end = tail.length
  tail[end - 8] = high >>> 24
  tail[end - 7] = high >>> 16
  tail[end - 6] = high >>> 8
  tail[end - 5] = high
  tail[end - 4] = low >>> 24
  tail[end - 3] = low >>> 16
  tail[end - 2] = low >>> 8
  tail[end - 1] = low
  compress(state, tail, 0)
  if (end > BLOCK_BYTES) compress(state, tail, BLOCK_BYTES)
  for (let i = 0; i < 8; i++) {
    const v = state[i]!
    out[i * 4] = v >>> 24
    out[i * 4 + 1] = v >>> 16
    out[i * 4 + 2] = v >>> 8
    out[i * 4 + 3] = v
  }
}

/** The SHA-256 digest (32 bytes) of `message`. */
export const sha256 = (message: Uint8Array): Uint8Array => {
  const out = new Uint8Array(DIGEST_BYTES)
  finish(initialState.slice(), message, out)
  return out
}
