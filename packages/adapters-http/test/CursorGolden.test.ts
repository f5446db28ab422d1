import { describe, expect, it } from "@effect/vitest"
import { Cursor } from "@spot/domain"

// Cursors issued by the service are held by clients across deployments: these texts were made by
// the service and must keep decoding to their positions, and the same reads must keep making them.
const secret = new TextEncoder().encode("golden-cursor-secret-0123456789abcdef")
const golden: ReadonlyArray<{ binding: string; position: Cursor.CursorPosition; text: string }> = [
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
    for (const { binding, position, text } of golden) expect(Cursor.encodeCursor(secret, binding, position)).toBe(text)
  })

  it("an issued cursor decodes to its position", () => {
    for (const { binding, position, text } of golden) {
      expect(Cursor.decodeCursor(secret, binding, text)).toEqual({ _tag: "Ok", position })
    }
  })
})
