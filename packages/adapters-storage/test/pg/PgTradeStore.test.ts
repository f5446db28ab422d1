/**
 * The trade archive's contract, on PostgreSQL (the real server when reachable, else PGlite) and
 * on the in-memory store: idempotent writes of the groups that leave memory, `lastLeftAt`, and
 * pages of one token newest first strictly older than a position (ties on time broken by seq),
 * never another token's — with the groups an engine really hands on (blocks of each token's
 * oldest trades, late trades alone), so that the trades read back are the engine's own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TradeStore } from "@spot/application"
import type { MarketEvent, TradeRecord, TradesLeftMemory } from "@spot/domain"
import { MarketEngine } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { PgTradeStore } from "@spot/adapters-storage"
import * as TestDatabase from "./TestDatabase.js"

const database = await TestDatabase.pick()

const start = 1_700_000_000_000
const depth = 8

/**
 * A simulated market folded with `depth` trades per token in memory, some swaps delivered late
 * (up to a minute behind their neighbours, so some trades arrive older than trades already
 * archived): what left memory, and every trade per token.
 */
const market = () => {
  const events: Array<MarketEvent> = new Simulator.MarketSimulator({ ...Simulator.defaultSimulatorOptions(start), seed: 3 }).runFor(4 * 60_000)
  const engine = new MarketEngine({ tapeRetainMs: 24 * 3_600_000, recentTradesPerToken: depth, identityFeedSize: 100 })
  const left: Array<TradesLeftMemory> = []
  const all = new Map<string, Array<TradeRecord>>()
  let swaps = 0
  for (const e of events) {
    const event = e.type === "swap" && ++swaps % 9 === 0 ? { ...e, timestamp: e.timestamp - 60_000 } : e
    expect(engine.apply(event)).toBeUndefined()
    const changes = engine.drainChanges()
    left.push(...changes.leftMemory)
    for (const trade of changes.trades) {
      const key = `${trade.chain}:${trade.token}`
      all.set(key, [...(all.get(key) ?? []), trade])
    }
  }
  return { left, all }
}

const newestFirst = (a: TradeRecord, b: TradeRecord) => b.timestamp - a.timestamp || b.seq - a.seq
const view = (r: TradeRecord) => [r.seq, r.timestamp, JSON.stringify(r.trade)]

const contract = (name: string, layer: Layer.Layer<TradeStore>) =>
  describe(name, () => {
    it.layer(layer, { timeout: 120_000 })((it) => {
      it.effect("stores each group once, pages one token newest first strictly past a position, and knows its last leftAt", () =>
        Effect.gen(function*() {
          const store = yield* TradeStore
          expect(yield* store.lastLeftAt).toBe(0)
          const { left, all } = market()
          expect(left.some((g) => g.late)).toBe(true)
          expect(left.filter((g) => !g.late).length).toBeGreaterThan(50)
          const half = Math.floor(left.length / 2)
          yield* store.write(left.slice(0, half + 20))
          // overlapping and repeated writes change nothing already stored
          yield* store.write(left.slice(half, left.length))
          yield* store.write(left.slice(0, 30))
          expect(yield* store.lastLeftAt).toBe(left[left.length - 1]!.leftAt)
          let tokens = 0
          for (const [key, trades] of all) {
            const gone = left.filter((g) => `${g.chain}:${g.token}` === key).flatMap((g) => g.trades)
            if (gone.length < 12) continue
            tokens++
            const { chain, token } = gone[0]!
            const expected = [...gone].sort(newestFirst)
            for (const size of [5, 16, 100]) {
              // page by page, each strictly older than the previous page's last
              const read: Array<TradeRecord> = []
              let before: { timestamp: number; seq: number } | null = null
              for (;;) {
                const page: ReadonlyArray<TradeRecord> = yield* store.older(chain, token, before, size)
                read.push(...page)
                if (page.length < size) break
                before = { timestamp: page[size - 1]!.timestamp, seq: page[size - 1]!.seq }
              }
              expect(read.map(view)).toEqual(expected.map(view))
            }
            // from any trade's position, the next page is the trades strictly older than it
            for (const at of expected.filter((_, i) => i % 7 === 3)) {
              const page = yield* store.older(chain, token, { timestamp: at.timestamp, seq: at.seq }, 10)
              expect(page.map(view)).toEqual(expected.filter((t) => newestFirst(t, at) > 0).slice(0, 10).map(view))
            }
            expect(trades.length).toBeGreaterThan(gone.length)
          }
          expect(tokens).toBeGreaterThan(3)
          expect(yield* store.older("bsc", "TokA", null, 10)).toEqual([])
        }))
    })
  })

contract(`PgTradeStore (${database.engine})`, Layer.orDie(Layer.provide(PgTradeStore.layer(), database.layer())))
contract("TradeStore.layerMemory", TradeStore.layerMemory)

describe(`trade archive bodies (${database.engine})`, () => {
  it.layer(Layer.orDie(database.layer()), { timeout: 120_000 })((it) => {
    it.effect("are stored out of line without compression (migration 7: pglz cost the ingest path a fifth of the database's CPU)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ readonly relation: string; readonly storage: string }>`
          SELECT c.relname AS relation, a.attstorage AS storage
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
          WHERE a.attname = 'body' AND c.relname IN ('trade_archive', 'trade_archive_blocks', 'market_events') AND pg_table_is_visible(c.oid)
          ORDER BY c.relname`
        // the event log keeps the default (its bodies stay under the out-of-line threshold)
        expect(rows.map((r) => [r.relation, r.storage])).toEqual([["market_events", "x"], ["trade_archive", "e"], ["trade_archive_blocks", "e"]])
      }))
  })
})
