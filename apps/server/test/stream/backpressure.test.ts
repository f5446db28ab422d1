/**
 * A reader that stops reading is closed with 4008 once more than 1,024 frames are unsent; the
 * server never holds more than that for it, a fast reader on the same updates gets them all, and
 * the closed reader's connection stops counting against its key at once (not when its stalled
 * socket finally closes).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Socket } from "node:net"
import { simulatedMarket } from "../http/support/ReadApi.js"
import type { StreamApi } from "./support/StreamClient.js"
import { connect, open, startStreamApi } from "./support/StreamClient.js"

describe("stream backpressure", () => {
  const sim = simulatedMarket({ minutes: 3, seed: 9, tradesPerSecond: 100 })
  let api: StreamApi
  beforeAll(async () => {
    api = await startStreamApi({ market: sim.market, streamLimits: { connectionsPerKey: 3 } })
  })
  afterAll(async () => {
    await api.close()
  })

  it("closes a stalled reader with 4008 and keeps serving the others", async () => {
    const tokens = [...sim.market.engine.allTokens()].filter((t) => t.chain === "solana").slice(-100).map((t) => t.address)
    const slow = await open(api.wsUrl)
    const fast = await open(api.wsUrl)
    const fastIds: Array<string> = []
    for (let i = 0; i < 20; i++) {
      expect((await slow.subscribe("spot.tokens", { chain: "solana", tokens })).type).toBe("subscribed")
      fastIds.push((await fast.subscribe("spot.tokens", { chain: "solana", tokens })).subscriptionId)
    }
    // The slow client stops reading: its kernel buffers fill, then the server's queue.
    ;(slow.ws as unknown as { _socket: Socket })._socket.pause()
    let maxUnsent = 0
    let t = sim.endTime
    for (let i = 0; i < 40 && api.stream.connectionCount === 2; i++) {
      t += 3_000
      sim.market.apply(sim.simulator.advance(t))
      for (const connection of api.stream.hub.connections) maxUnsent = Math.max(maxUnsent, connection.unsentFrames)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(api.stream.connectionCount).toBe(1)
    expect(maxUnsent).toBeLessThanOrEqual(1_024)
    // Still stalled (its close frame waits behind its full buffer), it no longer holds a slot:
    // with 3 per key and only the fast reader open, two more connect and a third is refused.
    const others = [await open(api.wsUrl), await open(api.wsUrl)]
    const refused = await connect(api.wsUrl)
    expect("status" in refused ? refused.status : "opened").toBe(429)
    for (const other of others) other.ws.terminate()
    ;(slow.ws as unknown as { _socket: Socket })._socket.resume()
    expect(await slow.closed).toBe(4008)

    // The fast reader got every update of every subscription, in the same order.
    const id = "after"
    fast.send({ action: "ping", id })
    await fast.waitFor((f) => f.id === id, 10_000)
    const first = fast.updates(fastIds[0]!).map((d) => `${d.address}:${d.updatedAt}`)
    expect(first.length).toBeGreaterThan(100)
    for (const sid of fastIds) expect(fast.updates(sid).map((d) => `${d.address}:${d.updatedAt}`)).toEqual(first)
    expect(fast.closeCode).toBeUndefined()
    fast.ws.terminate()
  })
})
