import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { hmacSha256, hmacSha256WithKey, prepareHmacKey, sha256 } from "../../src/cursor/Sha256.js"
import { encodeUtf8 } from "../../src/cursor/Utf8.js"

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
const fromHex = (text: string): Uint8Array => Uint8Array.from(text.match(/../g) ?? [], (h) => parseInt(h, 16))
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

describe("hmacSha256 (RFC 4231)", () => {
  const cases: ReadonlyArray<readonly [string, Uint8Array, Uint8Array, string]> = [
    ["1", repeat(0x0b, 20), ascii("Hi There"), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"],
    [
      "2",
      ascii("Jefe"),
      ascii("what do ya want for nothing?"),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    ],
    ["3", repeat(0xaa, 20), repeat(0xdd, 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"],
    [
      "4",
      fromHex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
      repeat(0xcd, 50),
      "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
    ],
    [
      "6",
      repeat(0xaa, 131),
      ascii("Test Using Larger Than Block-Size Key - Hash Key First"),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    ],
    [
      "7",
      repeat(0xaa, 131),
      ascii(
        "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
      ),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
    ]
  ]
  for (const [name, key, data, expected] of cases) {
    it(`test case ${name}`, () => {
      expect(hex(hmacSha256(key, data))).toBe(expected)
    })
  }

  it("test case 5 (truncated to 128 bits)", () => {
    expect(hex(hmacSha256(repeat(0x0c, 20), ascii("Test With Truncation")).subarray(0, 16))).toBe(
      "a3b6167473100ee06e0c796c2955552b"
    )
  })

  it("a prepared key gives the same tag as the raw key, however often it is reused", () => {
    const keys = fc.uint8Array({ maxLength: 150 })
    const messageLists = fc.array(fc.uint8Array({ maxLength: 200 }), { minLength: 1, maxLength: 4 })
    fc.assert(
      fc.property(keys, messageLists, (key, messages) => {
        const prepared = prepareHmacKey(key)
        for (const message of messages) expect(hex(hmacSha256WithKey(prepared, message))).toBe(hex(hmacSha256(key, message)))
      })
    )
  })
})
