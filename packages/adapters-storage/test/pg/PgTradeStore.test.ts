/**
 * The trade archive's contract, on PostgreSQL (the real server when reachable, else PGlite) and
 * on the in-memory store: idempotent writes by seq, `lastSeq`, and pages of one token newest
 * first strictly older than a position (ties on time broken by seq), never another token's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TradeStore } from "@spot/application"
import type { ArchivedTrade } from "@spot/application"
import { MemoryTradeStore, PgTradeStore } from "@spot/adapters-storage"
import * as TestDatabase from "./TestDatabase.js"

const database = await TestDatabase.pick()

/** Trades of two tokens on two chains, with equal times (seq decides) and late arrivals (seq not in time order). */
const trades = (): Array<ArchivedTrade> => {
  const out: Array<ArchivedTrade> = []
  for (let seq = 1; seq <= 300; seq++) {
    const token = seq % 3 === 0 ? "TokB" : "TokA"
    const chain = seq % 7 === 0 ? "base" as const : "solana" as const
    // every fifth trade is a late arrival, 10 s in the past; pairs share a millisecond
    const timestamp = 1_700_000_000_000 + Math.floor(seq / 2) * 1_000 - (seq % 5 === 0 ? 10_000 : 0)
    out.push({ chain, token, timestamp, seq, body: JSON.stringify([1, `t${seq}`, "ünïcode ✓"]) })
  }
  return out
}

const newestFirst = (a: ArchivedTrade, b: ArchivedTrade) => b.timestamp - a.timestamp || b.seq - a.seq

const contract = (name: string, layer: Layer.Layer<TradeStore>) =>
  describe(name, () => {
    it.layer(layer, { timeout: 120_000 })((it) => {
      it.effect("stores each trade once, pages one token newest first strictly past a position, and knows its last seq", () =>
        Effect.gen(function*() {
          const store = yield* TradeStore
          expect(yield* store.lastSeq).toBe(0)
          const all = trades()
          yield* store.write(all.slice(0, 200))
          // overlapping and repeated writes change nothing already stored
          yield* store.write(all.slice(150, 300))
          yield* store.write(all.slice(0, 50))
          expect(yield* store.lastSeq).toBe(300)
          for (const [chain, token] of [["solana", "TokA"], ["solana", "TokB"], ["base", "TokA"]] as const) {
            const expected = all.filter((t) => t.chain === chain && t.token === token).sort(newestFirst)
            expect(expected.length).toBeGreaterThan(5)
            // page by page, 7 at a time, each strictly older than the previous page's last
            const read: Array<ArchivedTrade> = []
            let before: { timestamp: number; seq: number } | null = null
            for (;;) {
              const page: ReadonlyArray<ArchivedTrade> = yield* store.older(chain, token, before, 7)
              read.push(...page)
              if (page.length < 7) break
              before = { timestamp: page[6]!.timestamp, seq: page[6]!.seq }
            }
            expect(read).toEqual(expected)
          }
          expect(yield* store.older("bsc", "TokA", null, 10)).toEqual([])
        }))
    })
  })

contract(`PgTradeStore (${database.engine})`, Layer.orDie(Layer.provide(PgTradeStore.layer(), database.layer())))
contract("MemoryTradeStore", MemoryTradeStore.layer(MemoryTradeStore.make()))
