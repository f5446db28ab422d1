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
 */
import { encodeBase64Url, decodeBase64Url } from "./Base64Url.js"
import { type HmacKey, hmacSha256WithKey, prepareHmacKey, sha256 } from "./Sha256.js"
import { decodeUtf8, encodeUtf8 } from "./Utf8.js"

/** Where a page ended: the sort key values of its last row, in sort order. */
export type CursorPosition = ReadonlyArray<string | number | null>

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

// The prepared key pads of each secret. A server has one or two secrets (rotation), so this
// stays tiny; secrets are treated as immutable once used.
const preparedKeys = new WeakMap<Uint8Array, HmacKey>()
const hmacKeyOf = (secret: Uint8Array): HmacKey => {
  let key = preparedKeys.get(secret)
  if (key === undefined) {
    key = prepareHmacKey(secret)
    preparedKeys.set(secret, key)
  }
  return key
}

const bindingHash = (binding: string): Uint8Array => sha256(encodeUtf8(binding)).subarray(0, BINDING_HASH_BYTES)

const floatScratch = new DataView(new ArrayBuffer(8))

const pushVarint = (out: Array<number>, n: number): void => {
  while (n >= 128) {
    out.push((n % 128) | 128)
    n = Math.floor(n / 128)
  }
  out.push(n)
}

const pushValue = (out: Array<number>, value: string | number | null): void => {
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
    const bytes = encodeUtf8(value)
    out.push(ValueTag.Text)
    pushVarint(out, bytes.length)
    for (let i = 0; i < bytes.length; i++) out.push(bytes[i]!)
  }
}

/**
 * The cursor text for `position` in the read described by `binding`, signed with `secret`.
 * Throws on more than {@link MAX_POSITION_VALUES} values (a programming error, not input).
 */
export const encodeCursor = (secret: Uint8Array, binding: string, position: CursorPosition): string => {
  if (position.length > MAX_POSITION_VALUES) throw new Error(`a cursor position holds at most ${MAX_POSITION_VALUES} values`)
  const out: Array<number> = [VERSION]
  const hash = bindingHash(binding)
  for (let i = 0; i < BINDING_HASH_BYTES; i++) out.push(hash[i]!)
  out.push(position.length)
  for (let i = 0; i < position.length; i++) pushValue(out, position[i]!)
  const signed = Uint8Array.from(out)
  const tag = hmacSha256WithKey(hmacKeyOf(secret), signed)
  const bytes = new Uint8Array(signed.length + TAG_BYTES)
  bytes.set(signed, 0)
  bytes.set(tag.subarray(0, TAG_BYTES), signed.length)
  return encodeBase64Url(bytes)
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

const readPosition = (bytes: Uint8Array, start: number, end: number): CursorPosition | undefined => {
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
      const text = decodeUtf8(bytes, state.offset, length)
      if (text === undefined) return undefined
      state.offset += length
      values.push(text)
    } else {
      return undefined
    }
  }
  return state.offset === end ? values : undefined
}

/**
 * Reads a cursor made by {@link encodeCursor}: `Ok` with its position; `Unreadable` when the text is
 * not a cursor signed with `secret` (malformed, truncated, edited, foreign, unknown version);
 * `OtherRead` when it is genuine but was made for a read with another `binding`.
 */
export const decodeCursor = (secret: Uint8Array, binding: string, text: string): DecodedCursor => {
  const bytes = decodeBase64Url(text)
  if (bytes === undefined || bytes.length < HEADER_BYTES + 1 + TAG_BYTES) return unreadable
  const signedLength = bytes.length - TAG_BYTES
  const expected = hmacSha256WithKey(hmacKeyOf(secret), bytes.subarray(0, signedLength))
  // Compare every byte whatever the first difference, so timing tells nothing about the tag.
  let difference = 0
  for (let i = 0; i < TAG_BYTES; i++) difference |= expected[i]! ^ bytes[signedLength + i]!
  if (difference !== 0 || bytes[0] !== VERSION) return unreadable
  const hash = bindingHash(binding)
  for (let i = 0; i < BINDING_HASH_BYTES; i++) if (hash[i] !== bytes[1 + i]) return otherRead
  const position = readPosition(bytes, HEADER_BYTES, signedLength)
  return position === undefined ? unreadable : { _tag: "Ok", position }
}
