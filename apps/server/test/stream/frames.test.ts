/**
 * Client frames and their answers: subscribe acknowledgements echo `id`, every validation error
 * the spec lists is an error frame in the REST envelope's shape, unsubscribe, ping/pong, the
 * 100-subscription cap, and trade data per mode (REST trade minus the mode's fields, byte for byte).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { simulatedMarket } from "../http/support/ReadApi.js"
import type { StreamApi, StreamClient } from "./support/StreamClient.js"
import { open, startStreamApi } from "./support/StreamClient.js"

const sol = "So11111111111111111111111111111111111111112"
const evm = "0x4200000000000000000000000000000000000006"
const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
/** `count` distinct well-formed solana addresses. */
const distinctSolana = (count: number): Array<string> =>
  Array.from({ length: count }, (_, i) => `${sol.slice(0, -2)}${base58[Math.floor(i / 58)]}${base58[i % 58]}`)

describe("stream frames", () => {
  let api: StreamApi
  let client: StreamClient
  const sim = simulatedMarket({ minutes: 3, seed: 5, tradesPerSecond: 60 })
  beforeAll(async () => {
    api = await startStreamApi({ market: sim.market })
    client = await open(api.wsUrl)
  })
  afterAll(async () => {
    client.ws.terminate()
    await api.close()
  })

  const expectRefused = async (channel: unknown, filters: unknown, code: string, fields: Array<string>) => {
    const answer = await client.subscribe(channel as string, filters)
    expect(answer.type, JSON.stringify(answer)).toBe("error")
    expect(Object.keys(answer).sort()).toEqual(["error", "id", "type"])
    expect(answer.error.code).toBe(code)
    expect(answer.error.message.length).toBeGreaterThan(0)
    const named = answer.error.details.map((d: { field: string }) => d.field)
    for (const field of fields) expect(named, JSON.stringify(answer.error)).toContain(field)
  }

  it("acknowledges a subscribe with a server-chosen subscriptionId and the client's id", async () => {
    const ack = await client.subscribe("spot.tokens", { chain: "solana", token: sol }, "mine-1")
    expect(ack).toEqual({ type: "subscribed", channel: "spot.tokens", subscriptionId: expect.any(String), id: "mine-1" })
    client.send({ action: "unsubscribe", subscriptionId: ack.subscriptionId, id: "u1" })
    expect(await client.waitFor((f) => f.id === "u1")).toEqual({ type: "unsubscribed", subscriptionId: ack.subscriptionId, id: "u1" })
    client.send({ action: "unsubscribe", subscriptionId: ack.subscriptionId, id: "u2" })
    expect((await client.waitFor((f) => f.id === "u2")).error.code).toBe("VALIDATION_ERROR")
    client.send({ action: "ping", id: "p1" })
    const pong = await client.waitFor((f) => f.id === "p1")
    expect(pong.type).toBe("pong")
    expect(typeof pong.time).toBe("number")
  })

  it("refuses malformed frames with an error frame and keeps the connection", async () => {
    const from = client.frames.length
    client.send("not json")
    client.send(JSON.stringify({ action: "dance", id: "d" }))
    client.send(JSON.stringify({ action: "subscribe", channel: "spot.tokens", filters: {}, id: "x", extra: 1 }))
    await client.waitFor((f) => f.id === "x", 5_000, from)
    const errors = client.frames.slice(from).filter((f) => f.type === "error")
    expect(errors.map((f) => f.error.details[0].field)).toEqual(["frame", "action", "extra"])
    // every refusal worded alike, an unknown field's too
    for (const error of errors) expect(error.error.message).toMatch(/^The frame was refused: /)
    expect(errors[2].error.message).toBe("The frame was refused: extra: not a field of a subscribe frame (it takes action, channel, filters, id).")
    expect(client.closeCode).toBeUndefined()
  })

  it("answers every listed validation error with an error frame", async () => {
    await expectRefused("spot.nope", {}, "VALIDATION_ERROR", ["channel"])
    await expectRefused("spot.tokens", { tokens: [sol] }, "VALIDATION_ERROR", ["filters.chain"])
    await expectRefused("spot.tokens", { chain: "solana" }, "VALIDATION_ERROR", ["filters.tokens"])
    await expectRefused("spot.tokens", { chain: "solana", tokens: [] }, "VALIDATION_ERROR", ["filters.tokens"])
    await expectRefused("spot.tokens", { chain: "solana", tokens: distinctSolana(101) }, "VALIDATION_ERROR", ["filters.tokens"])
    await expectRefused("spot.tokens", { chain: "base", tokens: [sol] }, "VALIDATION_ERROR", ["filters.tokens"])
    await expectRefused("spot.tokens", { chain: "solana", tokens: [sol], depth: 1 }, "VALIDATION_ERROR", ["filters.depth"])
    await expectRefused("spot.tokens", { chain: "ethereum", tokens: [evm] }, "UNSUPPORTED_CHAIN", ["filters.chain"])
    await expectRefused("spot.candles", { chain: "solana" }, "VALIDATION_ERROR", ["filters.token"])
    await expectRefused("spot.candles", { token: sol }, "VALIDATION_ERROR", ["filters.chain"])
    await expectRefused("spot.candles", { chain: "base", token: "0x12" }, "VALIDATION_ERROR", ["filters.token"])
    await expectRefused("spot.candles", { chain: "solana", token: sol, timeframe: "2m", metric: "volume", denomination: "eur", x: 1 }, "VALIDATION_ERROR", [
      "filters.timeframe",
      "filters.metric",
      "filters.denomination",
      "filters.x"
    ])
    await expectRefused("spot.candles", { chain: "tron", token: sol }, "UNSUPPORTED_CHAIN", ["filters.chain"])
    await expectRefused("spot.trades", {}, "VALIDATION_ERROR", ["filters"])
    await expectRefused("spot.trades", { chain: "solana", token: sol, wallet: sol }, "VALIDATION_ERROR", ["filters.wallet"])
    await expectRefused("spot.trades", { token: sol }, "VALIDATION_ERROR", ["filters.chain"])
    await expectRefused("spot.trades", { wallet: sol }, "VALIDATION_ERROR", ["filters.chain"])
    await expectRefused("spot.trades", { chain: "base", wallet: sol }, "VALIDATION_ERROR", ["filters.wallet"])
    await expectRefused("spot.trades", { identity: "celebrity" }, "VALIDATION_ERROR", ["filters.identity"])
    await expectRefused("spot.trades", { identity: "kol", flags: ["sniper", "astrologer"] }, "VALIDATION_ERROR", ["filters.flags"])
    await expectRefused("spot.trades", { identity: "kol", chain: "tron" }, "UNSUPPORTED_CHAIN", ["filters.chain"])
    await expectRefused("spot.trades", { identity: "kol", since: 1 }, "VALIDATION_ERROR", ["filters.since"])
    await expectRefused("spot.positions", {}, "VALIDATION_ERROR", ["filters.wallets"])
    await expectRefused("spot.positions", { wallets: ["nope"] }, "VALIDATION_ERROR", ["filters.wallets"])
    await expectRefused("spot.positions", { wallets: [sol], chains: ["tron"] }, "UNSUPPORTED_CHAIN", ["filters.chains"])
    // identity ignores a supported chain
    expect((await client.subscribe("spot.trades", { identity: "kol", chain: "base" })).type).toBe("subscribed")
  })

  it("counts the distinct addresses of a subscription: repeats and other letter cases count once", async () => {
    // 100 distinct and a repeat: 101 entries, 100 addresses.
    const hundred = distinctSolana(100)
    expect((await client.subscribe("spot.tokens", { chain: "solana", tokens: [...hundred, hundred[0]!] })).type).toBe("subscribed")
    // One EVM address in two letter cases is one address.
    const evmTwice = [...Array.from({ length: 99 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`), evm, evm.toUpperCase().replace("0X", "0x")]
    expect((await client.subscribe("spot.tokens", { chain: "base", tokens: evmTwice })).type).toBe("subscribed")
    await expectRefused("spot.tokens", { chain: "solana", tokens: [...distinctSolana(101), hundred[0]!] }, "VALIDATION_ERROR", ["filters.tokens"])
    const wallets = distinctSolana(100)
    expect((await client.subscribe("spot.positions", { wallets: [...wallets, wallets[5]!] })).type).toBe("subscribed")
    await expectRefused("spot.positions", { wallets: distinctSolana(101) }, "VALIDATION_ERROR", ["filters.wallets"])
  })

  it("holds at most 100 subscriptions per connection", async () => {
    const own = await open(api.wsUrl)
    for (let i = 0; i < 100; i++) own.send({ action: "subscribe", channel: "spot.tokens", filters: { chain: "solana", token: sol }, id: `s${i}` })
    await own.waitFor((f) => f.id === "s99")
    expect(own.frames.filter((f) => f.type === "subscribed")).toHaveLength(100)
    const refused = await own.subscribe("spot.tokens", { chain: "solana", token: sol })
    expect(refused.type).toBe("error")
    expect(refused.error.code).toBe("RATE_LIMITED")
    own.ws.terminate()
  })

  it("trade data per mode is the REST trade minus the mode's fields, byte for byte", async () => {
    const trades = sim.market.engine.identityTradePage("kol", ["solana", "base", "bsc", "robinhood", "arc"], null, 50).records
    const sample = trades.find((t) => t.terminal !== null && t.flags.length > 0) ?? trades[0]!
    const c = await open(api.wsUrl)
    const byToken = await c.subscribe("spot.trades", { chain: sample.chain, token: sample.token })
    const byWallet = await c.subscribe("spot.trades", { chain: sample.chain, wallet: sample.trader })
    const byIdentity = await c.subscribe("spot.trades", { identity: "kol" })
    const everything = await c.subscribe("spot.trades", { identity: "kol", flags: ["partner", "kol"] })
    // advance until the subscribed token and wallet trade
    let t = sim.endTime
    for (let i = 0; i < 60 && (c.updates(byToken.subscriptionId).length === 0 || c.updates(byIdentity.subscriptionId).length === 0); i++) {
      t += 5_000
      sim.market.apply(sim.simulator.advance(t))
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const restOf = async (data: any) => {
      const page = await api.get(`/v1/tokens/${data.chain}/${data.token}/trades?limit=100`)
      return page.trades.find((r: any) => r.id === data.id)
    }
    const strip = (trade: any, fields: Array<string>) => {
      const out: any = {}
      for (const [k, v] of Object.entries(trade)) if (!fields.includes(k)) out[k] = v
      return JSON.stringify(out)
    }
    const rawData = (subscriptionId: string) =>
      c.raw.filter((r) => r.startsWith(`{"type":"update"`) && r.includes(`"subscriptionId":"${subscriptionId}"`)).map((r) => r.slice(r.indexOf(`"data":`) + 7, -1))
    const tokenRaw = rawData(byToken.subscriptionId)
    expect(tokenRaw.length).toBeGreaterThan(0)
    for (const raw of tokenRaw.slice(0, 10)) {
      const rest = await restOf(JSON.parse(raw))
      expect(raw).toBe(strip(rest, ["flags", "platforms"]))
    }
    for (const raw of rawData(byIdentity.subscriptionId).slice(0, 10)) {
      const data = JSON.parse(raw)
      expect(data.flags).toContain("kol")
      const rest = await restOf(data)
      expect(raw).toBe(strip(rest, ["platforms"]))
    }
    for (const raw of rawData(byWallet.subscriptionId).slice(0, 10)) {
      expect(raw).toBe(strip(await restOf(JSON.parse(raw)), ["platforms"]))
    }
    expect(c.updates(everything.subscriptionId).length).toBe(c.updates(byIdentity.subscriptionId).length)
    c.ws.terminate()
  })
})
