/**
 * UTF-8 encoding and strict decoding without `TextEncoder`/`TextDecoder`, whose types the domain
 * package does not load (it compiles against the bare ES2022 library).
 */

/** The UTF-8 bytes of `text`; a lone surrogate becomes U+FFFD, as `TextEncoder` does. */
export const encodeUtf8 = (text: string): Uint8Array => {
  const out: Array<number> = []
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i)
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0
      if (next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00)
        i++
      } else {
        code = 0xfffd
      }
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      code = 0xfffd
    }
    if (code < 0x80) out.push(code)
    else if (code < 0x800) out.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f))
    else if (code < 0x10000) out.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f))
    else {
      out.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f))
    }
  }
  return Uint8Array.from(out)
}

/**
 * The text of `length` UTF-8 bytes of `bytes` from `offset`, or undefined when they are not
 * well-formed UTF-8 (overlong forms, surrogates and truncated sequences are refused).
 */
export const decodeUtf8 = (bytes: Uint8Array, offset: number, length: number): string | undefined => {
  let text = ""
  const end = offset + length
  if (end > bytes.length) return undefined
  let i = offset
  while (i < end) {
    const b0 = bytes[i]!
    let code: number
    let extra: number
    let least: number
    if (b0 < 0x80) {
      text += String.fromCharCode(b0)
      i++
      continue
    } else if (b0 >= 0xc2 && b0 <= 0xdf) {
      code = b0 & 0x1f
      extra = 1
      least = 0x80
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      code = b0 & 0x0f
      extra = 2
      least = 0x800
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      code = b0 & 0x07
      extra = 3
      least = 0x10000
    } else {
      return undefined
    }
    // The continuation bytes must lie inside the slice.
    if (i + extra >= end) return undefined
    for (let k = 1; k <= extra; k++) {
      const b = bytes[i + k]!
      if ((b & 0xc0) !== 0x80) return undefined
      code = (code << 6) | (b & 0x3f)
    }
    if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined
    text += String.fromCodePoint(code)
    i += extra + 1
  }
  return text
}
