/**
 * Opaque, signed, read-bound page cursors (spec "Cursor pagination rules"; docs/cursors.md).
 *
 * A cursor is the base64url text of
 *
 *   version (1 byte) | binding hash (8 bytes) | position | tag (16 bytes)
 *
 * where the binding hash is the first 8 bytes of SHA-256 of the read's `binding` text (endpoint,
 * filters and sort, as the caller spells them) and the tag is the first 16 bytes of
 * HMAC-SHA256(secret, everything before it). The tag is checked first, so a malformed, truncated,
 * edited or foreign-secret cursor is `Unreadable` and is never reinterpreted; a genuine cursor made
 * for another read is `OtherRead`. Both are 400 VALIDATION_ERROR on field `cursor` for the caller;
 * the distinction only sharpens the message.
 *
 * Position values: `null`; numbers (safe integers as a sign tag plus a varint of the magnitude,
 * anything else as a float64); strings (UTF-8, length-prefixed). At most 255 values.
 *
 * The domain lays the bytes out and decides what a text means; digests, the secret's HMAC and
 * UTF-8 come from the platform as {@link Primitives} (the service's are `node:crypto`'s, in
 * adapters-http's `CursorCodecLive`).
 */
import { Result } from "effect"
import { Base64Url } from "effect/encoding"

/** Where a page ended: the sort key values of its last row, in sort order. */
export type CursorPosition = ReadonlyArray<string | number | null>

/** UTF-8 as the platform spells it (`TextEncoder`, and `TextDecoder` with `fatal` and `ignoreBOM`). */
export interface Utf8 {
  /** The UTF-8 bytes of `text`; a lone surrogate becomes U+FFFD. */
  readonly encodeUtf8: (text: string) => Uint8Array
  /** The text of `bytes`, a leading U+FEFF kept; undefined when they are not well-formed UTF-8. */
  readonly decodeUtf8: (bytes: Uint8Array) => string | undefined
}

/** What sealing and reading a cursor needs from outside the domain, which computes no digests. */
export interface Primitives extends Utf8 {
  /** SHA-256 of `bytes` (32 bytes). */
  readonly sha256: (bytes: Uint8Array) => Uint8Array
  /** HMAC-SHA256 of `bytes` under the server's cursor secret (32 bytes). */
  readonly hmacSha256: (bytes: Uint8Array) => Uint8Array
  /** Whether two byte strings of one length are equal, in a time that does not tell where they differ. */
  readonly timingSafeEqual: (a: Uint8Array, b: Uint8Array) => boolean
}

export type DecodedCursor =
  | { readonly _tag: "Ok"; readonly position: CursorPosition }
  | { readonly _tag: "Unreadable" }
  | { readonly _tag: "OtherRead" }

const VERSION = 1
const BINDING_HASH_BYTES = 8
const TAG_BYTES = 16
const HEADER_BYTES = 1 + BINDING_HASH_BYTES
export const MAX_POSITION_VALUES = 255

// The tag byte in front of each position value.
const ValueTag = { Null: 0, NonNegativeInteger: 1, NegativeInteger: 2, Float: 3, Text: 4 } as const

const unreadable: DecodedCursor = { _tag: "Unreadable" }
const otherRead: DecodedCursor = { _tag: "OtherRead" }

const bindingHash = (primitives: Primitives, binding: string): Uint8Array =>
  primitives.sha256(primitives.encodeUtf8(binding)).subarray(0, BINDING_HASH_BYTES)

const floatScratch = new DataView(new ArrayBuffer(8))

const pushVarint = (out: Array<number>, n: number): void => {
  while (n >= 128) {
    out.push((n % 128) | 128)
    n = Math.floor(n / 128)
  }
  out.push(n)
}

const pushValue = (out: Array<number>, utf8: Utf8, value: string | number | null): void => {
  if (value === null) {
    out.push(ValueTag.Null)
  } else if (typeof value === "number") {
    if (Number.isSafeInteger(value) && !Object.is(value, -0)) {
      out.push(value >= 0 ? ValueTag.NonNegativeInteger : ValueTag.NegativeInteger)
      pushVarint(out, value >= 0 ? value : -value)
    } else {
      out.push(ValueTag.Float)
      floatScratch.setFloat64(0, value)
      for (let i = 0; i < 8; i++) out.push(floatScratch.getUint8(i))
    }
  } else {
    const bytes = utf8.encodeUtf8(value)
    out.push(ValueTag.Text)
    pushVarint(out, bytes.length)
    for (let i = 0; i < bytes.length; i++) out.push(bytes[i]!)
  }
}

const pushPosition = (out: Array<number>, utf8: Utf8, position: CursorPosition): void => {
  if (position.length > MAX_POSITION_VALUES) throw new Error(`a cursor position holds at most ${MAX_POSITION_VALUES} values`)
  out.push(position.length)
  for (let i = 0; i < position.length; i++) pushValue(out, utf8, position[i]!)
}

/**
 * The bytes of `position` as a cursor holds them. Throws on more than {@link MAX_POSITION_VALUES}
 * values (a programming error, not input).
 */
export const encodePosition = (utf8: Utf8, position: CursorPosition): Uint8Array => {
  const out: Array<number> = []
  pushPosition(out, utf8, position)
  return Uint8Array.from(out)
}

/**
 * The cursor text for `position` in the read described by `binding`, signed through `primitives`.
 * Throws on more than {@link MAX_POSITION_VALUES} values (a programming error, not input).
 */
export const encodeCursor = (primitives: Primitives, binding: string, position: CursorPosition): string => {
  const out: Array<number> = [VERSION]
  const hash = bindingHash(primitives, binding)
  for (let i = 0; i < BINDING_HASH_BYTES; i++) out.push(hash[i]!)
  pushPosition(out, primitives, position)
  const signed = Uint8Array.from(out)
  const tag = primitives.hmacSha256(signed)
  const bytes = new Uint8Array(signed.length + TAG_BYTES)
  bytes.set(signed, 0)
  bytes.set(tag.subarray(0, TAG_BYTES), signed.length)
  return Base64Url.encode(bytes)
}

/** Reads a varint at `state.offset`; undefined when truncated or beyond a safe integer. */
const readVarint = (bytes: Uint8Array, end: number, state: { offset: number }): number | undefined => {
  let value = 0
  let scale = 1
  for (let i = 0; i < 8; i++) {
    if (state.offset >= end) return undefined
    const b = bytes[state.offset++]!
    value += (b & 127) * scale
    if (b < 128) return value <= Number.MAX_SAFE_INTEGER ? value : undefined
    scale *= 128
  }
  return undefined
}

const readPosition = (utf8: Utf8, bytes: Uint8Array, start: number, end: number): CursorPosition | undefined => {
  if (start >= end) return undefined
  const count = bytes[start]!
  const state = { offset: start + 1 }
  const values: Array<string | number | null> = []
  for (let k = 0; k < count; k++) {
    if (state.offset >= end) return undefined
    const tag = bytes[state.offset++]
    if (tag === ValueTag.Null) {
      values.push(null)
    } else if (tag === ValueTag.NonNegativeInteger || tag === ValueTag.NegativeInteger) {
      const n = readVarint(bytes, end, state)
      if (n === undefined) return undefined
      values.push(tag === ValueTag.NegativeInteger ? -n : n)
    } else if (tag === ValueTag.Float) {
      if (state.offset + 8 > end) return undefined
      for (let i = 0; i < 8; i++) floatScratch.setUint8(i, bytes[state.offset + i]!)
      state.offset += 8
      values.push(floatScratch.getFloat64(0))
    } else if (tag === ValueTag.Text) {
      const length = readVarint(bytes, end, state)
      if (length === undefined || state.offset + length > end) return undefined
      const text = utf8.decodeUtf8(bytes.subarray(state.offset, state.offset + length))
      if (text === undefined) return undefined
      state.offset += length
      values.push(text)
    } else {
      return undefined
    }
  }
  return state.offset === end ? values : undefined
}

/** The position of bytes made by {@link encodePosition}; undefined when they are not one. */
export const decodePosition = (utf8: Utf8, bytes: Uint8Array): CursorPosition | undefined =>
  readPosition(utf8, bytes, 0, bytes.length)

/**
 * The bytes of an unpadded base64url text, or undefined when it is not the one text of its bytes:
 * padding, line breaks or non-zero trailing bits are refused, so an edited character can never
 * decode to the bytes of the cursor it was edited from.
 */
const canonicalBase64UrlBytes = (text: string): Uint8Array | undefined => {
  const bytes = Result.getOrUndefined(Base64Url.decode(text))
  return bytes !== undefined && Base64Url.encode(bytes) === text ? bytes : undefined
}

/**
 * Reads a cursor made by {@link encodeCursor}: `Ok` with its position; `Unreadable` when the text is
 * not a cursor signed with the secret of `primitives` (malformed, truncated, edited, foreign,
 * unknown version); `OtherRead` when it is genuine but was made for a read with another `binding`.
 */
export const decodeCursor = (primitives: Primitives, binding: string, text: string): DecodedCursor => {
  const bytes = canonicalBase64UrlBytes(text)
  if (bytes === undefined || bytes.length < HEADER_BYTES + 1 + TAG_BYTES) return unreadable
  const signedLength = bytes.length - TAG_BYTES
  const expected = primitives.hmacSha256(bytes.subarray(0, signedLength)).subarray(0, TAG_BYTES)
  if (!primitives.timingSafeEqual(expected, bytes.subarray(signedLength)) || bytes[0] !== VERSION) return unreadable
  const hash = bindingHash(primitives, binding)
  for (let i = 0; i < BINDING_HASH_BYTES; i++) if (hash[i] !== bytes[1 + i]) return otherRead
  const position = readPosition(primitives, bytes, HEADER_BYTES, signedLength)
  return position === undefined ? unreadable : { _tag: "Ok", position }
}
