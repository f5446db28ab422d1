/**
 * Unpadded base64url (RFC 4648 section 5) with strict decoding: any character outside the
 * alphabet, padding, an impossible length or non-zero trailing bits is refused, so every byte
 * string has exactly one accepted text and an edited character can never decode to the same bytes.
 */

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const sextetOf = new Int8Array(128).fill(-1)
for (let i = 0; i < alphabet.length; i++) sextetOf[alphabet.charCodeAt(i)] = i

export const encodeBase64Url = (bytes: Uint8Array): string => {
  let out = ""
  let i = 0
  for (; i + 3 <= bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]!
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]!
  }
  return out
}

const sextetAt = (text: string, i: number): number => {
  const code = text.charCodeAt(i)
  return code < 128 ? sextetOf[code]! : -1
}

/** The bytes of an unpadded base64url text, or undefined when it is not canonical base64url. */
export const decodeBase64Url = (text: string): Uint8Array | undefined => {
  const rest = text.length % 4
  if (rest === 1) return undefined
  const out = new Uint8Array(((text.length - rest) / 4) * 3 + (rest === 0 ? 0 : rest - 1))
  let o = 0
  let i = 0
  for (; i + 4 <= text.length; i += 4) {
    const a = sextetAt(text, i)
    const b = sextetAt(text, i + 1)
    const c = sextetAt(text, i + 2)
    const d = sextetAt(text, i + 3)
    if ((a | b | c | d) < 0) return undefined
    const n = (a << 18) | (b << 12) | (c << 6) | d
    out[o++] = n >> 16
    out[o++] = (n >> 8) & 255
    out[o++] = n & 255
  }
  if (rest === 2) {
    const a = sextetAt(text, i)
    const b = sextetAt(text, i + 1)
    if ((a | b) < 0 || (b & 15) !== 0) return undefined
    out[o] = (a << 2) | (b >> 4)
  } else if (rest === 3) {
    const a = sextetAt(text, i)
    const b = sextetAt(text, i + 1)
    const c = sextetAt(text, i + 2)
    if ((a | b | c) < 0 || (c & 3) !== 0) return undefined
    const n = (a << 18) | (b << 12) | (c << 6)
    out[o++] = n >> 16
    out[o] = (n >> 8) & 255
  }
  return out
}
