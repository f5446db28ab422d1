/**
 * `CursorCodec` on `node:crypto`: the domain's cursor layout (`Cursor`), signed with
 * HMAC-SHA256 under the server's `CursorSecret`, its binding hashed with SHA-256, the tag compared
 * with `timingSafeEqual`.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto"
import { Effect, Layer } from "effect"
import { Cursor } from "@spot/domain"
import { CursorCodec, CursorSecret } from "@spot/application"

const textEncoder = new TextEncoder()
// `fatal`: malformed UTF-8 is refused, not replaced; `ignoreBOM`: a leading U+FEFF is text, kept.
const textDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The platform's UTF-8, as the domain's `Cursor` takes it. */
export const utf8: Cursor.Utf8 = {
  encodeUtf8: (text) => textEncoder.encode(text),
  decodeUtf8: (bytes) => {
    try {
      return textDecoder.decode(bytes)
    } catch {
      return undefined
    }
  }
}

/** The primitives of cursors signed with `secret`. */
export const primitives = (secret: Uint8Array): Cursor.Primitives => ({
  ...utf8,
  sha256: (bytes) => createHash("sha256").update(bytes).digest(),
  hmacSha256: (bytes) => createHmac("sha256", secret).update(bytes).digest(),
  timingSafeEqual: (a, b) => timingSafeEqual(a, b)
})

/** Cursors signed with `secret`. */
export const make = (secret: Uint8Array) => {
  const signing = primitives(secret)
  return CursorCodec.of({
    encode: (binding, position) => Cursor.encodeCursor(signing, binding, position),
    decode: (binding, text) => Cursor.decodeCursor(signing, binding, text)
  })
}

/** Cursors signed with the `CursorSecret` the layer is given. */
export const layer: Layer.Layer<CursorCodec, never, CursorSecret.CursorSecret> = Layer.effect(
  CursorCodec,
  Effect.gen(function*() {
    return make(yield* CursorSecret.CursorSecret)
  })
)
