import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { createHash, createHmac } from "node:crypto"
import type { Cursor } from "@spot/domain"
import * as CursorCodecLive from "../src/CursorCodecLive.js"

type CursorPosition = Cursor.CursorPosition

const encodeCursor = (secret: Uint8Array, binding: string, position: CursorPosition): string =>
  CursorCodecLive.make(secret).encode(binding, position)
const decodeCursor = (secret: Uint8Array, binding: string, text: string): Cursor.DecodedCursor =>
  CursorCodecLive.make(secret).decode(binding, text)

const secret = new TextEncoder().encode("cursor-secret-for-tests-0123456789")
const otherSecret = new TextEncoder().encode("another-secret")
const binding = "GET /v1/positions|wallets=abc|lifecycle=open|sort=value:desc"

const base64UrlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const positionValue = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  // Full code points: a well-formed string survives UTF-8 exactly (lone surrogates cannot).
  fc.string({ unit: "binary" })
)
const position: fc.Arbitrary<CursorPosition> = fc.array(positionValue, { maxLength: 8 })

describe("cursor round trip", () => {
  it("decoding an encoded cursor gives back its position", () => {
    fc.assert(
      fc.property(position, fc.string(), (values, read) => {
        expect(decodeCursor(secret, read, encodeCursor(secret, read, values))).toEqual({ _tag: "Ok", position: values })
      })
    )
  })

  it("keeps typical keyset positions small", () => {
    const text = encodeCursor(secret, binding, [1763745882000, 123456789])
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(text.length).toBeLessThan(60)
    expect(decodeCursor(secret, binding, text)).toEqual({ _tag: "Ok", position: [1763745882000, 123456789] })
  })

  it("keeps -0, NaN and infinities", () => {
    const values = [-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.1, -Number.MAX_SAFE_INTEGER]
    const decoded = decodeCursor(secret, binding, encodeCursor(secret, binding, values))
    expect(decoded).toEqual({ _tag: "Ok", position: values })
  })

  it("refuses a position of more than 255 values", () => {
    expect(() => encodeCursor(secret, binding, new Array(256).fill(1))).toThrow()
  })
})

describe("text values", () => {
  it("keep a leading U+FEFF and every code point", () => {
    const values = ["\uFEFFbom", "\uFEFF", "a\u0000b", "𝔘𝔫𝔦", "\u{10FFFF}"]
    expect(decodeCursor(secret, binding, encodeCursor(secret, binding, values))).toEqual({ _tag: "Ok", position: values })
  })

  it("a signed cursor whose text is not well-formed UTF-8 is Unreadable", () => {
    // version 1 | binding hash | one value: Text of length 1, the byte 0xff | tag
    const hash = createHash("sha256").update(binding).digest().subarray(0, 8)
    const signed = Buffer.concat([Buffer.from([1]), hash, Buffer.from([1, 4, 1, 0xff])])
    const tag = createHmac("sha256", secret).update(signed).digest().subarray(0, 16)
    const text = Buffer.concat([signed, tag]).toString("base64url")
    expect(decodeCursor(secret, binding, text)._tag).toBe("Unreadable")
    const wellFormed = Buffer.concat([Buffer.from([1]), hash, Buffer.from([1, 4, 1, 0x41])])
    const wellFormedTag = createHmac("sha256", secret).update(wellFormed).digest().subarray(0, 16)
    expect(decodeCursor(secret, binding, Buffer.concat([wellFormed, wellFormedTag]).toString("base64url"))).toEqual({
      _tag: "Ok",
      position: ["A"]
    })
  })
})

describe("cursor refusals", () => {
  it("a cursor made for another read is OtherRead", () => {
    fc.assert(
      fc.property(position, fc.string(), fc.string(), (values, a, b) => {
        fc.pre(a !== b)
        expect(decodeCursor(secret, b, encodeCursor(secret, a, values))._tag).toBe("OtherRead")
      })
    )
  })

  it("a cursor signed with another secret is Unreadable", () => {
    fc.assert(
      fc.property(position, (values) => {
        expect(decodeCursor(otherSecret, binding, encodeCursor(secret, binding, values))._tag).toBe("Unreadable")
      })
    )
  })

  it("changing any one character makes a cursor Unreadable", () => {
    fc.assert(
      fc.property(position, fc.nat(), fc.integer({ min: 1, max: 63 }), (values, at, shift) => {
        const text = encodeCursor(secret, binding, values)
        const index = at % text.length
        const replaced = base64UrlAlphabet[(base64UrlAlphabet.indexOf(text[index]!) + shift) % 64]!
        const edited = text.slice(0, index) + replaced + text.slice(index + 1)
        expect(decodeCursor(secret, binding, edited)._tag).toBe("Unreadable")
      })
    )
  })

  it("every proper prefix of a cursor is Unreadable", () => {
    fc.assert(
      fc.property(position, (values) => {
        const text = encodeCursor(secret, binding, values)
        for (let length = 0; length < text.length; length++) {
          expect(decodeCursor(secret, binding, text.slice(0, length))._tag).toBe("Unreadable")
        }
      })
    )
  })

  it("a cursor with characters appended is Unreadable", () => {
    fc.assert(
      fc.property(position, fc.string({ minLength: 1 }), (values, tail) => {
        expect(decodeCursor(secret, binding, encodeCursor(secret, binding, values) + tail)._tag).toBe("Unreadable")
      })
    )
  })

  it("arbitrary text is Unreadable and never throws", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        expect(decodeCursor(secret, binding, text)._tag).toBe("Unreadable")
      })
    )
  })

  it("refuses padding, standard-base64 characters and empty text", () => {
    const text = encodeCursor(secret, binding, [1, 2])
    expect(decodeCursor(secret, binding, "")._tag).toBe("Unreadable")
    expect(decodeCursor(secret, binding, `${text}=`)._tag).toBe("Unreadable")
    expect(decodeCursor(secret, binding, text.replaceAll("-", "+").replaceAll("_", "/"))._tag).toBe(
      text.includes("-") || text.includes("_") ? "Unreadable" : "Ok"
    )
  })
})

// Cursors issued by the service are held by clients across deployments: these texts were made by
// the service and must keep decoding to their positions, and the same reads must keep making them.
const goldenSecret = new TextEncoder().encode("golden-cursor-secret-0123456789abcdef")
const golden: ReadonlyArray<{ binding: string; position: CursorPosition; text: string }> = [
  {
    binding: "GET /v1/tokens/solana/So1anaTokenAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/trades",
    position: [1763745882000, 123456789],
    text: "AREXaeLjU4JEAgGQv8m7qjMBlZrvOsRvV742yFYcSq8LWMqSEpk"
  },
  { binding: "GET /v1/trades?identity=kol&chains=*", position: [0, 0], text: "AdZcoOYd7aMlAgEAAQCbajuxuXOzmGoxM7CmpmSV" },
  {
    binding: "GET /v1/positions|wallets=abc|lifecycle=open|sort=value:desc",
    position: [null, -42, 3.25, "Pépé 🐸 ₿", -0, 1e21],
    text: "AQzus2WCRGYhBgACKgNACgAAAAAAAAQPUMOpcMOpIPCfkLgg4oK_A4AAAAAAAAAAA0RLGuTW4u9Q4G-mdn_gZ_Btv_ufQBSXBA"
  },
  {
    binding: "GET /v1/positions|q=ünïcödé",
    position: ["", -9007199254740991, 9007199254740991, Number.NaN, Number.NEGATIVE_INFINITY, -1.5e-300, null],
    text: "AVkYZFG6xrFMBwQAAv________8PAf________8PA3_4AAAAAAAAA__wAAAAAAAAA4GwEpfSOraDAGavo2ewlsaJTsdROD0PkMY"
  },
  { binding: "", position: [], text: "AeOwxEKY_BwUANGMM3D-AOqKnX44DDpLLno" }
]

describe("cursors issued before stay valid", () => {
  it("the same read makes the same cursor text", () => {
    for (const { binding, position, text } of golden) expect(encodeCursor(goldenSecret, binding, position)).toBe(text)
  })

  it("an issued cursor decodes to its position", () => {
    for (const { binding, position, text } of golden) {
      expect(decodeCursor(goldenSecret, binding, text)).toEqual({ _tag: "Ok", position })
    }
  })
})
