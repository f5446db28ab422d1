/**
 * The snapshot use case on in-memory stores: which snapshot a start-up restores and why the others
 * are skipped (another log, other engine code, ahead of the log, another event at its seq, a
 * damaged body), that ingest then replays exactly the tail, and that the market equals a full
 * replay's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { Ingest, Market, Snapshots } from "@spot/application"
import type { RestoreOutcome, SnapshotHeader, SnapshotSettings } from "@spot/application"
import { Simulator } from "@spot/domain"
import type { MarketEvent } from "@spot/domain"
import { LogIdentityLive, MemoryEventStore, MemorySnapshotStore } from "@spot/adapters-storage"

const events: Array<MarketEvent> = new Simulator.MarketSimulator({ seed: 9, startTime: 1_767_000_000_000, tradesPerSecond: 30, launchesPerMinute: 30 }).runFor(3 * 60_000)
const settings: SnapshotSettings = { enabled: true, everyEvents: 1_000_000_000, minIntervalMs: 0 }

interface Instance {
  readonly market: Market.MarketShape
  readonly ingest: Ingest.IngestShape
  readonly snapshots: Snapshots.Snapshots["Service"]
  readonly close: () => Promise<void>
}

const start = async (
  log: MemoryEventStore.MemoryEventStore,
  files: MemorySnapshotStore.MemorySnapshotStore,
  logId: string,
  snapshotSettings: SnapshotSettings = settings
): Promise<Instance> => {
  const market = Market.makeMarket()
  const layer = Snapshots.layer(snapshotSettings).pipe(
    Layer.provide(Layer.merge(MemorySnapshotStore.layer(files), LogIdentityLive.layerFixed(logId))),
    Layer.provideMerge(Ingest.layer.pipe(Layer.provideMerge(Layer.merge(Layer.succeed(Market.Market, market), MemoryEventStore.layer(log)))))
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return {
    market,
    ingest: Context.get(context, Ingest.Ingest),
    snapshots: Context.get(context, Snapshots.Snapshots),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** What the market serves, as text (tokens, their trades and positions). */
const served = (market: Market.MarketShape): string => {
  const parts: Array<string> = [JSON.stringify(market.engine.stats)]
  const wallets = new Set<string>()
  for (const token of market.engine.allTokens()) {
    parts.push(JSON.stringify(token.toWire()))
    parts.push(JSON.stringify(market.engine.tokenTradePage(token.chain, token.address, null, 50).records.map((r) => r.trade)))
    for (const slot of token.positions.slots()) wallets.add(token.positions.walletAt(slot))
  }
  parts.push(JSON.stringify(market.engine.positionsOfWallets([...wallets]).map((entry) => market.engine.positionWire(entry))))
  return parts.join("\n")
}

/** A log with all events, snapshots taken at a third and two thirds, and the full replay's answers. */
const prepare = async () => {
  const log = MemoryEventStore.makeUnsafe()
  const files = MemorySnapshotStore.makeUnsafe()
  const writer = await start(log, files, "log-1")
  await run(writer.snapshots.restore)
  for (const [i, part] of [events.slice(0, 2_000), events.slice(2_000, 4_000), events.slice(4_000)].entries()) {
    await run(writer.ingest.publishTrusted(part))
    if (i < 2) expect(await run(writer.snapshots.take)).toMatchObject({ _tag: "Written" })
  }
  const expected = served(writer.market)
  files.entries.forEach((entry) => expect(entry.header.logId).toBe("log-1"))
  // as after a crash: exactly the two taken, not the one written at shutdown
  const taken = [...files.entries.entries()]
  await writer.close()
  files.entries.clear()
  for (const [name, entry] of taken) files.entries.set(name, entry)
  const [older, newer] = [...files.entries.entries()].sort((a, b) => a[1].header.seq - b[1].header.seq)
  return { log, files, expected, older: older!, newer: newer! }
}

const restart = async (log: MemoryEventStore.MemoryEventStore, files: MemorySnapshotStore.MemorySnapshotStore, logId = "log-1") => {
  const instance = await start(log, files, logId)
  const outcome: RestoreOutcome = await run(instance.snapshots.restore)
  const tail = await run(instance.ingest.catchUp)
  const answers = served(instance.market)
  // the snapshot written at shutdown is not part of the scenario
  const before = [...files.entries.entries()]
  await instance.close()
  files.entries.clear()
  for (const [name, entry] of before) files.entries.set(name, entry)
  return { outcome, tail, answers }
}

describe("Snapshots use case", () => {
  it("restores the newest snapshot, replays exactly the tail, and serves what a full replay serves", async () => {
    const { expected, files, log, newer } = await prepare()
    const { answers, outcome, tail } = await restart(log, files)
    expect(outcome).toMatchObject({ _tag: "Restored", name: newer[0], seq: newer[1].header.seq, skipped: [] })
    expect(tail).toBe(log.log.length - newer[1].header.seq)
    expect(answers).toBe(expected)
  })

  it("falls back to the previous snapshot, then to the full log, saying why", async () => {
    const { expected, files, log, newer, older } = await prepare()
    files.damage(newer[0])
    let result = await restart(log, files)
    expect(result.outcome._tag).toBe("Restored")
    expect(result.outcome).toMatchObject({ name: older[0] })
    expect((result.outcome as { readonly skipped: ReadonlyArray<string> }).skipped).toEqual([expect.stringMatching(/checksum mismatch/)])
    expect(result.tail).toBe(log.log.length - older[1].header.seq)
    expect(result.answers).toBe(expected)

    files.damage(older[0])
    result = await restart(log, files)
    expect(result.outcome._tag).toBe("FullReplay")
    expect(result.tail).toBe(log.log.length)
    expect(result.answers).toBe(expected)
  })

  it("skips snapshots of another log, of other engine code, ahead of the log, or with another event at their seq", async () => {
    const { expected, files, log, newer, older } = await prepare()
    const body = newer[1].body
    const variants: Array<[Partial<SnapshotHeader>, RegExp]> = [
      [{ logId: "log-2" }, /belongs to another event log/],
      [{ engine: "engine-v0-other" }, /written by other engine code/],
      [{ seq: log.log.length + 10 }, /ahead of the log/],
      [{ eventId: "not-the-event-at-that-seq" }, /the log's event at seq \d+ is .*, not not-the-event-at-that-seq/]
    ]
    for (const [change, reason] of variants) {
      files.entries.clear()
      files.entries.set("candidate", { header: { ...newer[1].header, ...change }, body, damaged: false })
      const result = await restart(log, files)
      expect(result.outcome).toEqual({ _tag: "FullReplay", reasons: [expect.stringMatching(reason)] })
      expect(result.answers).toBe(expected)
    }
    // bytes that do not decode: skipped too, and the market is left empty for the replay
    files.entries.clear()
    files.entries.set("candidate", { header: older[1].header, body: body.slice(0, body.length >> 1), damaged: false })
    const result = await restart(log, files)
    expect(result.outcome).toEqual({ _tag: "FullReplay", reasons: [expect.stringMatching(/does not restore: corrupt snapshot/)] })
    expect(result.answers).toBe(expected)
  })

  it("takes snapshots periodically once enough events were folded, and at shutdown", async () => {
    const log = MemoryEventStore.makeUnsafe()
    const files = MemorySnapshotStore.makeUnsafe()
    const instance = await start(log, files, "log-1", { enabled: true, everyEvents: 1_500, minIntervalMs: 0, checkEveryMs: 20 })
    await run(instance.snapshots.restore)
    await run(instance.snapshots.startPeriodic)
    await run(instance.ingest.publishTrusted(events.slice(0, 1_000)))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(files.entries.size).toBe(0) // fewer than everyEvents folded
    await run(instance.ingest.publishTrusted(events.slice(1_000, 2_000)))
    for (let waited = 0; files.entries.size === 0 && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
    expect([...files.entries.values()].map((entry) => entry.header.seq)).toEqual([2_000])
    await run(instance.ingest.publishTrusted(events.slice(2_000, 2_100)))
    await instance.close()
    expect([...files.entries.values()].map((entry) => entry.header.seq).sort((a, b) => a - b)).toEqual([2_000, 2_100])
  })

  it("writes the engine a step per event-loop turn: reads are answered between the steps, a fold waits for the last", async () => {
    const log = MemoryEventStore.makeUnsafe()
    const files = MemorySnapshotStore.makeUnsafe()
    const writer = await start(log, files, "log-1", { ...settings, stepMs: 0 })
    await run(writer.snapshots.restore)
    await run(writer.ingest.publishTrusted(events.slice(0, 2_500)))
    const stats = JSON.stringify(writer.market.engine.stats)
    let done = false
    const taking = Effect.runPromise(writer.snapshots.take).finally(() => (done = true))
    // sent while the engine is being written: stored at once, folded only after the last step
    const folding = Effect.runPromise(writer.ingest.publishTrusted(events.slice(2_500)))
    let turns = 0
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve))
      if (done) break
      turns++
      expect(writer.ingest.foldedSeq()).toBe(2_500)
      expect(JSON.stringify(writer.market.engine.stats)).toBe(stats)
      if (turns % 50 === 0) served(writer.market) // every kind of read, between two steps
    }
    const outcome = await taking
    expect(outcome).toMatchObject({ _tag: "Written", seq: 2_500 })
    expect(outcome._tag === "Written" ? outcome.steps : 0).toBeGreaterThan(100)
    expect(turns).toBeGreaterThan(100)
    await folding
    expect(writer.ingest.foldedSeq()).toBe(events.length)
    const expected = served(writer.market)
    await writer.close()
    // what it wrote is the market at seq 2,500: restored and the tail replayed, the same market
    for (const [name, entry] of [...files.entries]) if (entry.header.seq !== 2_500) files.entries.delete(name)
    const result = await restart(log, files)
    expect(result.outcome).toMatchObject({ _tag: "Restored", seq: 2_500 })
    expect(result.tail).toBe(events.length - 2_500)
    expect(result.answers).toBe(expected)
  })

  it("a stop during a periodic snapshot's steps ends it, frees the lock, and writes its own", async () => {
    const log = MemoryEventStore.makeUnsafe()
    const files = MemorySnapshotStore.makeUnsafe()
    const writer = await start(log, files, "log-1", { enabled: true, everyEvents: 1_000, minIntervalMs: 0, checkEveryMs: 5, stepMs: 0 })
    await run(writer.snapshots.restore)
    await run(writer.snapshots.startPeriodic)
    await run(writer.ingest.publishTrusted(events.slice(0, 2_500)))
    // the periodic snapshot holds the write lock while it writes, a step per turn
    const lockTaken = () => Option.isNone(Effect.runSync(writer.market.writeLock.withPermitsIfAvailable(1)(Effect.void)))
    let turns = 0
    while (!lockTaken() && turns++ < 10_000) await new Promise((resolve) => setImmediate(resolve))
    expect(lockTaken()).toBe(true)
    expect(files.entries.size).toBe(0)
    const expected = served(writer.market)
    await writer.close()
    // only the stop's snapshot: the periodic one was ended, and the lock it held freed for it
    expect([...files.entries.values()].map((entry) => entry.header.seq)).toEqual([2_500])
    const result = await restart(log, files)
    expect(result.outcome).toMatchObject({ _tag: "Restored", seq: 2_500 })
    expect(result.answers).toBe(expected)
  })

  it("another process's log identity is refused even with identical events and seqs", async () => {
    const { expected, files, log } = await prepare()
    const result = await restart(log, files, "log-of-another-database")
    expect(result.outcome._tag).toBe("FullReplay")
    expect(result.answers).toBe(expected)
  })
})
