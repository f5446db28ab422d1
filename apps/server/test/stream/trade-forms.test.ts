/**
 * The trade forms of `spot.trades` (token mode: REST trade minus `flags` and `platforms`; wallet
 * and identity modes: minus `platforms`) are the REST bytes minus those members, byte for byte,
 * both ways the hub makes them: cut out of the REST JSON when a reader already encoded it, or
 * encoded alone when none did. Hub and connections are driven directly (stub sockets).
 */
import { describe, expect, it } from "@effect/vitest"
import type { TradeRecord } from "@spot/domain"
import { Encoding } from "@spot/adapters-http"
import { Connection, StreamHub, SubscribeFilters } from "@spot/adapters-ws"
import { simulatedMarket } from "../http/support/ReadApi.js"

/** The text of every frame in `bytes` (server frames: unmasked, payloads under 64 KiB). */
const frameTexts = (bytes: Buffer): Array<string> => {
  const out: Array<string> = []
  for (let at = 0; at < bytes.length;) {
    let length = bytes[at + 1]! & 0x7f
    let header = 2
    if (length === 126) {
      length = bytes.readUInt16BE(at + 2)
      header = 4
    }
    out.push(bytes.toString("utf8", at + header, at + header + length))
    at += header + length
  }
  return out
}

/** The REST trade's JSON without the named members (JSON.stringify keeps the order). */
const restWithout = (record: TradeRecord, fields: ReadonlyArray<string>): string => {
  const rest = JSON.parse(Encoding.tradeJson(record)) as Record<string, unknown>
  for (const field of fields) delete rest[field]
  return JSON.stringify(rest)
}

describe("spot.trades forms", () => {
  const sim = simulatedMarket({ minutes: 3, seed: 17, tradesPerSecond: 60 })
  const engine = sim.market.engine
  const chains = ["solana", "base", "bsc", "robinhood", "arc"] as const
  // kol trades carry flags (the label); the tokens' trades cover every mix of flags and terminal
  const kol = engine.identityTradePage("kol", chains, null, 40).records
  const kindOf = (r: TradeRecord) => `${r.flags.length > 0}|${r.terminal !== null}`
  const byKind = new Map<string, Array<TradeRecord>>()
  for (const token of engine.allTokens()) {
    for (const r of token.recentTrades?.page(null, 50).records ?? []) {
      const list = byKind.get(kindOf(r)) ?? []
      if (list.length < 40) list.push(r)
      byKind.set(kindOf(r), list)
    }
  }
  const records = [...kol, ...[...byKind.values()].flat()]

  it("covers trades with and without flags, with and without a terminal", () => {
    // (a trade through a terminal always carries a flag here: its trader is flagged proTrader or partner)
    expect([...new Set(records.map(kindOf))].sort()).toEqual(["false|false", "true|false", "true|true"])
  })

  for (const cached of [true, false]) {
    it(`are the REST trade minus the mode's fields, byte for byte (REST JSON ${cached ? "already made: cut" : "not made: encoded alone"})`, () => {
      const writes: Array<Buffer> = []
      const socket = { writableLength: 0, writableNeedDrain: false, write: (b: Buffer) => writes.push(Buffer.from(b)) > 0, once: () => socket, on: () => socket }
      const hub = new StreamHub(sim.market, { tokenJson: Encoding.tokenJson, tradeJson: Encoding.tradeJson, encodedTradeJson: Encoding.encodedTradeJson, tradeObjectJson: Encoding.tradeObjectJson, candleJson: Encoding.candleJson, positionJson: Encoding.positionJson })
      hub.stop()
      for (const record of records) {
        // one connection: its subscriptions s1, s2, s3 have distinct prefixes
        const connection = new Connection({ close: () => undefined, terminate: () => undefined } as never, socket as never, "k", hub, 1_024)
        hub.addConnection(connection)
        const subscribe = (channel: string, filters: unknown) => {
          const parsed = SubscribeFilters.parseSubscription(channel, filters)
          if (!parsed.ok) throw new Error(JSON.stringify(parsed.refusal))
          return hub.subscribe(connection, parsed.spec).prefix.toString()
        }
        const token = subscribe("spot.trades", { chain: record.chain, token: record.token })
        const wallet = subscribe("spot.trades", { chain: record.chain, wallet: record.trader })
        const identity = record.flags.includes("kol") ? subscribe("spot.trades", { identity: "kol" }) : undefined
        Encoding.forgetTradeEncoding(record)
        if (cached) Encoding.tradeJson(record)
        writes.length = 0
        hub.onChanges({ tokens: [], trades: [record], positions: [], leftMemory: [] })
        // the stream keeps no REST JSON on a record nobody else encoded (unless it sent the REST form itself)
        if (!cached && record.terminal !== null) expect(Encoding.encodedTradeJson(record)).toBeUndefined()
        const texts = writes.flatMap(frameTexts)
        const dataOf = (prefix: string) => {
          const text = texts.find((t) => t.startsWith(prefix) && t.includes(`"id":${JSON.stringify(record.id)}`))
          expect(text, `${record.id} ${prefix}`).toBeDefined()
          return text!.slice(prefix.length, -1)
        }
        expect(dataOf(token)).toBe(restWithout(record, ["flags", "platforms"]))
        expect(dataOf(wallet)).toBe(restWithout(record, ["platforms"]))
        if (identity !== undefined) expect(dataOf(identity)).toBe(restWithout(record, ["platforms"]))
        connection.markClosed()
      }
    })
  }
})
