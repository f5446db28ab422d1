/**
 * The runtime's UTF-8 for the domain's cursor position codec in tests: the domain package
 * compiles against bare ES2022, without the types of `TextEncoder`/`TextDecoder`.
 */
import type { Utf8 } from "../../src/cursor/Cursor.js"

const host = globalThis as unknown as {
  TextEncoder: new () => { encode(text: string): Uint8Array }
  TextDecoder: new (label: string, options: { fatal: boolean; ignoreBOM: boolean }) => { decode(bytes: Uint8Array): string }
}
const encoder = new host.TextEncoder()
const decoder = new host.TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

export const utf8: Utf8 = {
  encodeUtf8: (text) => encoder.encode(text),
  decodeUtf8: (bytes) => {
    try {
      return decoder.decode(bytes)
    } catch {
      return undefined
    }
  }
}
