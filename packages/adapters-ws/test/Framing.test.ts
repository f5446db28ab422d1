import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as ws from "ws"
import { FrameQueue, headerLength } from "../src/Framing.js"

/** ws's client-side frame parser (exported by the package, not declared in @types/ws). */
interface FrameParser {
  on(event: "message", listener: (data: Buffer) => void): void
  on(event: "error", listener: (error: Error) => void): void
  write(chunk: Buffer, encoding: undefined, callback: () => void): void
}
const { Receiver } = ws as unknown as { Receiver: new (options: { isServer: boolean }) => FrameParser }

/** Decodes server frames with ws's own parser (the client side of the protocol). */
const decode = (bytes: Buffer): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    const out: Array<string> = []
    const receiver = new Receiver({ isServer: false })
    receiver.on("message", (data: Buffer) => out.push(data.toString()))
    receiver.on("error", reject)
    receiver.write(bytes, undefined, () => resolve(out))
  })

describe("Framing", () => {
  it("header lengths follow RFC 6455 length classes", () => {
    expect([0, 125, 126, 65_535, 65_536].map(headerLength)).toEqual([2, 2, 4, 4, 10])
  })

  it("a drained queue is exactly the queued texts, as frames a client parser reads back", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant("text" as const), text: fc.string({ unit: "grapheme", maxLength: 300 }) }),
            fc.record({
              kind: fc.constant("update" as const),
              id: fc.string({ minLength: 1, maxLength: 8 }),
              data: fc.oneof(fc.string({ maxLength: 200 }), fc.string({ minLength: 70_000, maxLength: 70_010 }))
            })
          ),
          { maxLength: 20 }
        ),
        async (frames) => {
          const queue = new FrameQueue()
          const expected: Array<string> = []
          for (const frame of frames) {
            if (frame.kind === "text") {
              queue.pushText(Buffer.from(frame.text))
              expected.push(frame.text)
            } else {
              const prefix = `{"subscriptionId":${JSON.stringify(frame.id)},"data":`
              const data = JSON.stringify(frame.data)
              queue.pushUpdate(Buffer.from(prefix), Buffer.from(data))
              expected.push(`${prefix}${data}}`)
            }
          }
          expect(queue.length).toBe(frames.length)
          const bytes = queue.drain()
          expect(queue.length).toBe(0)
          expect(await decode(bytes)).toEqual(expected)
        }
      ),
      { numRuns: 60 }
    )
    // CPU-bound (strings of up to 70,000 graphemes): room for a shared, busy machine
  }, 30_000)
})
