/**
 * Keep-alive pings are spread over the interval: each tick pings one slot's connections (about a
 * `pingSlots`-th of them), every connection is pinged once per interval, and a connection that
 * answered nothing since its previous ping is dropped at its next one (its own protocol pings
 * count as answers). The ticks are driven by
 * hand (the server's own timer is set to an hour), so nothing here depends on timing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { WebSocket } from "ws"
import type { Connection } from "@spot/adapters-ws"
import { pingSlots } from "@spot/adapters-ws"
import { apiKey, simulatedMarket } from "../http/support/ReadApi.js"
import type { StreamApi, StreamClient } from "./support/StreamClient.js"
import { open, startStreamApi } from "./support/StreamClient.js"

const waitUntil = async (done: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe("stream keep-alive", () => {
  const sim = simulatedMarket({ minutes: 1, seed: 3, tradesPerSecond: 20 })
  let api: StreamApi
  beforeAll(async () => {
    api = await startStreamApi({ market: sim.market, streamLimits: { pingIntervalMs: 3_600_000 } })
  })
  afterAll(async () => {
    await api.close()
  })

  it("pings a slot per tick, everyone once per interval, and drops a silent connection (not one that sends its own pings)", async () => {
    const n = 2 * pingSlots + 5
    const clients: Array<StreamClient> = []
    for (let i = 0; i < n; i++) clients.push(await open(api.wsUrl))
    const received = clients.map(() => 0)
    clients.forEach((client, i) => client.ws.on("ping", () => received[i]!++))
    // A client that never answers pings (ws answers them by itself unless told not to).
    const silent = new WebSocket(api.wsUrl, { headers: { authorization: `Bearer ${apiKey}` }, perMessageDeflate: false, autoPong: false })
    const silentClosed = new Promise<number>((resolve) => silent.once("close", (code) => resolve(code)))
    await new Promise((resolve) => silent.once("open", resolve))
    // And one that never answers the server's pings but sends its own (docs/streams.md: clients
    // may): alive all the same.
    const pinging = new WebSocket(api.wsUrl, { headers: { authorization: `Bearer ${apiKey}` }, perMessageDeflate: false, autoPong: false })
    let pingingClosed: number | undefined
    pinging.once("close", (code) => (pingingClosed = code))
    let pingsAnswered = 0
    pinging.on("pong", () => pingsAnswered++)
    await new Promise((resolve) => pinging.once("open", resolve))
    await waitUntil(() => api.stream.connectionCount === n + 2, "every connection to be registered")

    // Pings sent by the server, per connection.
    const pinged = new Map<Connection, number>()
    for (const connection of api.stream.hub.connections) {
      const ws = connection.ws
      const ping = ws.ping.bind(ws)
      pinged.set(connection, 0)
      ws.ping = (...args: Parameters<typeof ws.ping>) => {
        pinged.set(connection, pinged.get(connection)! + 1)
        return ping(...args)
      }
    }
    const total = () => [...pinged.values()].reduce((a, b) => a + b, 0)

    // One interval: no tick pings more than its share, and every connection is pinged exactly once.
    const perTick = Math.ceil((n + 2) / pingSlots)
    for (let tick = 0; tick < pingSlots; tick++) {
      const before = total()
      api.stream.keepAliveTick()
      expect(total() - before).toBeLessThanOrEqual(perTick)
    }
    expect([...pinged.values()]).toEqual([...pinged.values()].map(() => 1))
    await waitUntil(() => received.every((count) => count === 1), "every client to receive its ping")
    // The answering clients' pongs arrive; the silent one stays silent.
    await waitUntil(() => [...api.stream.hub.connections].filter((c) => c.alive).length === n, "the pongs")
    // The pinging client pings once (the server answers it) between the two intervals.
    pinging.ping()
    await waitUntil(() => pingsAnswered === 1, "the server's answer to the client's ping")

    // The next interval: the silent connection is dropped at its slot's tick, the others pinged again.
    for (let tick = 0; tick < pingSlots; tick++) api.stream.keepAliveTick()
    expect(api.stream.connectionCount).toBe(n + 1)
    expect(await silentClosed).toBe(1006)
    expect(pingingClosed).toBeUndefined()
    await waitUntil(() => received.every((count) => count === 2), "every client to receive its second ping")
    for (const client of clients) expect(client.closeCode).toBeUndefined()
    for (const client of clients) client.ws.terminate()
    pinging.terminate()
  })
})
