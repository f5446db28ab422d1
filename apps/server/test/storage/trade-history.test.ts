/**
 * The trade history across snapshots and crashes (docs/storage.md, "Trade history"): a snapshot is
 * taken only once the archive holds every trade that left memory before it (skipped while the
 * archive cannot be written), and after a crash — trades that left memory but were never
 * archived — a restart from the snapshot regenerates exactly the missing ones, so the archive
 * ends holding every trade that left memory once, the same JSON as a market that never stopped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { EventStore, Ingest, Market, Snapshots, TradeHistory, TradeStore } from "@spot/application"
import type { MemoryEventStore, MemoryTradeStore, SnapshotSettings } from "@spot/application"
import { defaultEngineOptions } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import type { MarketEvent, TradeRecord } from "@spot/domain"
import { EngineCodecLive, LogIdentityLive, MemorySnapshotStore } from "@spot/adapters-storage"

const events: Array<MarketEvent> = new Simulator.MarketSimulator({ seed: 19, startTime: 1_767_000_000_000, tradesPerSecond: 30, launchesPerMinute: 30 }).runFor(3 * 60_000)
const settings: SnapshotSettings = { enabled: true, everyEvents: 1_000_000_000, minIntervalMs: 0 }
const historySettings: TradeHistory.TradeHistorySettings = { flushEveryMs: 20, tradesPerWrite: 300, retryAfterMs: 20 }

const start = async (log: MemoryEventStore, files: MemorySnapshotStore.MemorySnapshotStore, archive: MemoryTradeStore) => {
  // a small memory, so most trades leave it for the archive
  const market = Market.makeMarket({ ...defaultEngineOptions, recentTradesPerToken: 6 })
  const marketLayer = Layer.succeed(Market.Market, market)
  const history = TradeHistory.layer(historySettings).pipe(Layer.provide(Layer.merge(marketLayer, Layer.succeed(TradeStore, archive))))
  const layer = Snapshots.layer(settings).pipe(
    Layer.provide(Layer.mergeAll(MemorySnapshotStore.layer(files), LogIdentityLive.layerFixed("log-1"), EngineCodecLive.layer)),
    Layer.provideMerge(history),
    Layer.provideMerge(Ingest.layer.pipe(Layer.provideMerge(Layer.merge(marketLayer, Layer.succeed(EventStore, log)))))
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return {
    market,
    ingest: Context.get(context, Ingest.Ingest),
    snapshots: Context.get(context, Snapshots.Snapshots),
    history: Context.get(context, TradeHistory.TradeHistory),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const bySeq = (trades: ReadonlyArray<TradeRecord>) => [...trades].sort((a, b) => a.seq - b.seq).map((t) => JSON.stringify([t.seq, t.timestamp, t.trade]))
/** How many trades the market still holds in memory, over every token. */
const inMemory = (market: Market.MarketShape) => {
  let n = 0
  for (const t of market.engine.allTokens()) n += market.engine.tokenTradePage(t.chain, t.address, null, 1_000).records.length
  return n
}

describe("trade history with snapshots", () => {
  it("snapshots only what the archive holds; a restart after a crash archives exactly the missing trades", async () => {
    // A market that never stops: the reference archive.
    const referenceArchive = TradeStore.makeMemory()
    const reference = await start(EventStore.makeMemory(), MemorySnapshotStore.makeUnsafe(), referenceArchive)
    await run(reference.ingest.publishTrusted(events))
    await run(reference.history.flush)
    const expected = bySeq(referenceArchive.stored())
    // every trade is in memory or in the archive, once
    expect(expected.length).toBeGreaterThan(reference.market.engine.stats.trades / 2)
    expect(expected.length + inMemory(reference.market)).toBe(reference.market.engine.stats.trades)
    await reference.close()

    const log = EventStore.makeMemory()
    const files = MemorySnapshotStore.makeUnsafe()
    const archive = TradeStore.makeMemory()
    const first = await start(log, files, archive)
    await run(first.snapshots.restore)
    await run(first.ingest.publishTrusted(events.slice(0, 2_500)))
    expect(await run(first.snapshots.take)).toMatchObject({ _tag: "Written" })
    // what left memory before the snapshot is all archived
    expect(first.history.queued()).toBe(0)
    expect(archive.stored().length + inMemory(first.market)).toBe(first.market.engine.stats.trades)

    // The archive goes down: trades fold and queue, snapshots are refused.
    archive.failing = true
    await run(first.ingest.publishTrusted(events.slice(2_500, 4_000)))
    expect(first.history.queued()).toBeGreaterThan(0)
    const refused = await run(first.snapshots.take)
    expect(refused._tag).toBe("Skipped")
    expect(refused._tag === "Skipped" && refused.reason).toContain("trade archive")
    const snapshotsBefore = files.entries.size

    // Crash: the queued trades never reach the archive (a copy of it as the crash left it).
    const afterCrash = TradeStore.makeMemory()
    await run(afterCrash.write(archive.groups()))
    const second = await start(log, files, afterCrash)
    expect((await run(second.snapshots.restore))._tag).toBe("Restored")
    await run(second.ingest.catchUp)
    await run(second.ingest.publishTrusted(events.slice(4_000)))
    await run(second.history.flush)
    expect(second.history.queued()).toBe(0)
    expect(bySeq(afterCrash.stored())).toEqual(expected)
    expect(files.entries.size).toBe(snapshotsBefore)

    await second.close()
    archive.failing = false
    await first.close()
  })
})
