/**
 * Long, unique, plain texts (addresses, transaction hashes) kept as Latin-1 bytes in one growing
 * buffer instead of one string each: a 44- to 88-character string costs 60-104 bytes of the JS
 * heap and is traced by every collection; here it costs its characters, off the heap. A text is
 * named by a number (`offset × 256 + length`); a text that is not Latin-1 or longer than 255
 * characters is kept as the string itself, so every text round-trips exactly.
 */
export type TextRef = number | string | null

export class TextBytes {
  private bytes = new Uint8Array(4_096)
  private used = 0

  /** Stores `text`: its reference (`read` gives the text back). */
  add(text: string | null): TextRef {
    if (text === null || text.length > 255) return text
    const at = this.used
    if (at + text.length > this.bytes.length) this.grow(at + text.length)
    const bytes = this.bytes
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code > 255) return text
      bytes[at + i] = code
    }
    this.used = at + text.length
    return at * 256 + text.length
  }

  /** The text `add` stored under `ref`. */
  read(ref: TextRef): string | null {
    if (typeof ref !== "number") return ref
    const length = ref % 256
    const at = (ref - length) / 256
    return String.fromCharCode.apply(null, this.bytes.subarray(at, at + length) as unknown as Array<number>)
  }

  /** Bytes held (for memory accounting). */
  get byteLength(): number {
    return this.bytes.byteLength
  }

  private grow(needed: number): void {
    let size = this.bytes.length * 2
    while (size < needed) size *= 2
    const next = new Uint8Array(size)
    next.set(this.bytes.subarray(0, this.used))
    this.bytes = next
  }
}
