import { describe, expect, it } from "@effect/vitest"
import { sha256 } from "../../src/cursor/Sha256.js"
import { encodeUtf8 } from "../../src/cursor/Utf8.js"

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
const repeat = (byte: number, length: number): Uint8Array => new Uint8Array(length).fill(byte)
const ascii = (text: string): Uint8Array => encodeUtf8(text)

describe("sha256", () => {
  it("matches the FIPS 180-2 vectors", () => {
    expect(hex(sha256(ascii("abc")))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(hex(sha256(ascii("")))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(hex(sha256(ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    )
    expect(hex(sha256(repeat(0x61, 1_000_000)))).toBe(
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    )
  })

  it("handles every padding boundary (55, 56 and 64 bytes)", () => {
    // Digests of "a" repeated n times, computed with OpenSSL (node:crypto).
    expect(hex(sha256(repeat(0x61, 55)))).toBe("9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
    expect(hex(sha256(repeat(0x61, 56)))).toBe("b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
    expect(hex(sha256(repeat(0x61, 64)))).toBe("ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
  })
})
