/**
 * The snapshot use case on in-memory stores: which snapshot a start-up restores and why the others
 * are skipped (another log, other engine code, ahead of the log, another event at its seq, a
 * damaged body), that ingest then replays exactly the tail, and that the market equals a full
 * replay's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Layer, Option, Scope, Stream } from "effect"
import { EventStore, Ingest, Market, SnapshotBuilder, SnapshotBuildFailed, Snapshots, SnapshotStoreError } from "@spot/application"
import type { MemoryEventStore, RestoreOutcome, SnapshotHeader, SnapshotSettings, TakeOutcome } from "@spot/application"
import { Events, MarketEngine } from "@spot/domain"
import * as Simulator from "@spot/simulator"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { MarketEvent } from "@spot/domain"
import { EngineCodecLive, EngineSnapshot, FileSnapshotStore, LogIdentityLive, MemorySnapshotStore } from "@spot/adapters-storage"
import * as SnapshotWorker from "../../src/SnapshotWorker.js"

const events: Array<MarketEvent> = new Simulator.MarketSimulator({ seed: 9, startTime: 1_767_000_000_000, tradesPerSecond: 30, launchesPerMinute: 30 }).runFor(3 * 60_000)
const settings: SnapshotSettings = { enabled: true, everyEvents: 1_000_000_000, minIntervalMs: 0 }

interface Instance {
  readonly market: Market.MarketShape
  readonly ingest: Ingest.IngestShape
  readonly snapshots: Snapshots.Snapshots["Service"]
  readonly close: () => Promise<void>
}

const start = async (
  log: MemoryEventStore,
  files: MemorySnapshotStore.MemorySnapshotStore,
  logId: string,
  snapshotSettings: SnapshotSettings = settings,
  builder?: SnapshotBuilder["Service"]
): Promise<Instance> => {
  const market = Market.makeMarket()
  const layer = Snapshots.layer(snapshotSettings).pipe(
    Layer.provide(Layer.mergeAll(
      MemorySnapshotStore.layer(files),
      LogIdentityLive.layerFixed(logId),
      EngineCodecLive.layer,
      builder === undefined ? Layer.empty : Layer.succeed(SnapshotBuilder, builder)
    )),
    Layer.provideMerge(Ingest.layer.pipe(Layer.provideMerge(Layer.merge(Layer.succeed(Market.Market, market), Layer.succeed(EventStore, log)))))
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
  const log = EventStore.makeMemory()
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

const restart = async (log: MemoryEventStore, files: MemorySnapshotStore.MemorySnapshotStore, logId = "log-1") => {
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

/** Restarts from the snapshot at `seq` alone (the others dropped): what a start from it serves. */
const restartFrom = (log: MemoryEventStore, files: MemorySnapshotStore.MemorySnapshotStore, seq: number) => {
  for (const [name, entry] of [...files.entries]) if (entry.header.seq !== seq) files.entries.delete(name)
  return restart(log, files)
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
    const log = EventStore.makeMemory()
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
    const log = EventStore.makeMemory()
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
    const result = await restartFrom(log, files, 2_500)
    expect(result.outcome).toMatchObject({ _tag: "Restored", seq: 2_500 })
    expect(result.tail).toBe(events.length - 2_500)
    expect(result.answers).toBe(expected)
  })

  it("a stop during a periodic snapshot's steps ends it, frees the lock, and writes its own", async () => {
    const log = EventStore.makeMemory()
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

describe("Snapshots built in a worker thread", () => {
  /** The worker's builder, waiting at the gate (while closed) before it starts, and noting an interruption. */
  const gated = () => {
    const reached = Effect.runSync(Deferred.make<void>())
    let open = Effect.runSync(Deferred.make<void>())
    const state = { builds: 0, interrupted: 0 }
    const builder = SnapshotBuilder.of({
      build: (input) =>
        Effect.andThen(Deferred.succeed(reached, undefined), Deferred.await(open)).pipe(
          Effect.andThen(Effect.suspend(() => {
            state.builds++
            return SnapshotWorker.builder.build(input)
          })),
          Effect.onInterrupt(() => Effect.sync(() => void state.interrupted++))
        )
    })
    Effect.runSync(Deferred.succeed(open, undefined))
    return {
      builder,
      state,
      reached,
      close: () => (open = Effect.runSync(Deferred.make<void>())),
      open: () => Effect.runSync(Deferred.succeed(open, undefined))
    }
  }

  it("folding goes on while a worker builds the snapshot, and what it built restores to the market a full replay makes", async () => {
    const log = EventStore.makeMemory()
    const files = MemorySnapshotStore.makeUnsafe()
    const gate = gated()
    const writer = await start(log, files, "log-1", settings, gate.builder)
    await run(writer.snapshots.restore)
    await run(writer.ingest.publishTrusted(events.slice(0, 1_000)))
    // the first, with nothing to build on: serialized here
    const first = await run(writer.snapshots.take)
    expect(first).toMatchObject({ _tag: "Written", seq: 1_000 })
    expect(first._tag === "Written" && first.built === undefined && first.steps > 0).toBe(true)
    await run(writer.ingest.publishTrusted(events.slice(1_000, 2_000)))
    gate.close()
    let outcome: TakeOutcome | undefined
    const taking = Effect.runPromise(writer.snapshots.take).then((taken) => (outcome = taken))
    await Effect.runPromise(Deferred.await(gate.reached))
    // the snapshot's seq is chosen; folding is not held while it is built
    await run(writer.ingest.publishTrusted(events.slice(2_000)))
    expect(writer.ingest.foldedSeq()).toBe(events.length)
    expect(outcome).toBeUndefined()
    gate.open()
    await taking
    // the second: from the first and the 1,000 events after it
    expect(outcome).toMatchObject({ _tag: "Written", seq: 2_000, steps: 0, pauseMs: 0, built: { base: first._tag === "Written" ? first.name : "", events: 1_000 } })
    expect(gate.state.builds).toBe(1)
    const expected = served(writer.market)
    await writer.close()
    const result = await restartFrom(log, files, 2_000)
    expect(result.outcome).toMatchObject({ _tag: "Restored", seq: 2_000 })
    expect(result.tail).toBe(events.length - 2_000)
    expect(result.answers).toBe(expected)
  })

  it("a build that fails is serialized here instead (folding held), and a base that does not load is one", async () => {
    const log = EventStore.makeMemory()
    const files = MemorySnapshotStore.makeUnsafe()
    let calls = 0
    const failing = SnapshotBuilder.of({
      build: () => Effect.suspend(() => (calls++, Effect.fail(new SnapshotBuildFailed({ message: "the worker exited (code 1)" }))))
    })
    const writer = await start(log, files, "log-1", settings, failing)
    await run(writer.snapshots.restore)
    await run(writer.ingest.publishTrusted(events.slice(0, 1_000)))
    await run(writer.snapshots.take) // nothing to build on: serialized here
    expect(calls).toBe(0)
    await run(writer.ingest.publishTrusted(events.slice(1_000, 1_500)))
    const outcome = await run(writer.snapshots.take)
    expect(calls).toBe(1)
    expect(outcome).toMatchObject({ _tag: "Written", seq: 1_500 })
    expect(outcome._tag === "Written" && outcome.steps > 0 && outcome.built === undefined).toBe(true)
    await writer.close()

    // a damaged base: not given to the builder, serialized here, and the next one builds on that
    const gate = gated()
    const again = await start(log, files, "log-1", settings, gate.builder)
    await run(again.snapshots.restore)
    await run(again.ingest.catchUp)
    await run(again.ingest.publishTrusted(events.slice(1_500, 2_200)))
    for (const name of files.entries.keys()) files.damage(name)
    const here = await run(again.snapshots.take)
    expect(here).toMatchObject({ _tag: "Written", seq: 2_200 })
    expect(here._tag === "Written" && here.built === undefined && here.steps > 0).toBe(true)
    expect(gate.state.builds).toBe(1) // asked, and its base did not load
    await run(again.ingest.publishTrusted(events.slice(2_200, 3_000)))
    const built = await run(again.snapshots.take)
    expect(built).toMatchObject({ _tag: "Written", seq: 3_000, built: { base: here._tag === "Written" ? here.name : "", events: 800 } })
    await again.close()
  })

  it("a stop during a build ends it and writes the stop's own snapshot", async () => {
    const log = EventStore.makeMemory()
    const files = MemorySnapshotStore.makeUnsafe()
    const gate = gated()
    gate.close()
    const writer = await start(log, files, "log-1", { enabled: true, everyEvents: 1_000, minIntervalMs: 0, checkEveryMs: 5 }, gate.builder)
    await run(writer.snapshots.restore)
    await run(writer.ingest.publishTrusted(events.slice(0, 1_000)))
    await run(writer.snapshots.take) // the base (serialized here)
    await run(writer.snapshots.startPeriodic)
    await run(writer.ingest.publishTrusted(events.slice(1_000, 2_500)))
    await Effect.runPromise(Deferred.await(gate.reached))
    const expected = served(writer.market)
    await writer.close()
    expect(gate.state.interrupted).toBe(1)
    expect([...files.entries.values()].map((entry) => entry.header.seq).sort((a, b) => a - b)).toEqual([1_000, 2_500])
    const result = await restart(log, files)
    expect(result.outcome).toMatchObject({ _tag: "Restored", seq: 2_500 })
    expect(result.answers).toBe(expected)
  })

  it("the worker's failures come back as SnapshotBuildFailed: a text that does not decode, a base that does not load or restore", async () => {
    const options = Market.makeMarket().engine.options
    const context = EngineSnapshot.threadContext()
    const empty = EngineSnapshot.snapshot(new MarketEngine(options))
    const header: SnapshotHeader = { logId: "log-1", seq: 1, eventId: "e-1", engine: context.fingerprint, takenAt: 1 }
    const saved: Array<ReadonlyArray<Uint8Array>> = []
    const input = (load: Effect.Effect<Uint8Array, SnapshotStoreError>, texts: ReadonlyArray<string>) => ({
      base: { name: "base-1", load },
      header,
      save: (chunks: ReadonlyArray<Uint8Array>) => Effect.sync(() => (saved.push(chunks), "saved-1")),
      options,
      events: texts.length === 0 ? Stream.empty : Stream.make(texts)
    })
    const failure = (load: Effect.Effect<Uint8Array, SnapshotStoreError>, texts: ReadonlyArray<string>) =>
      Effect.runPromise(Effect.flip(SnapshotWorker.builder.build(input(load, texts))))
    const notJson = await failure(Effect.succeed(empty.slice()), ["{\"type\":\"swap\""])
    expect(notJson).toBeInstanceOf(SnapshotBuildFailed)
    expect(notJson.message).toMatch(/JSON/)
    expect((await failure(Effect.succeed(empty.slice()), [JSON.stringify({ type: "swap", id: "x" })])).message).toMatch(/a stored event does not decode/)
    expect((await failure(Effect.succeed(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), [])).message).toMatch(/snapshot/i)
    const unreadable = await failure(Effect.fail(new SnapshotStoreError({ message: "checksum mismatch: the file is damaged" })), [])
    expect(unreadable).toBeInstanceOf(SnapshotBuildFailed)
    expect(unreadable.message).toMatch(/its base base-1 does not load: checksum mismatch/)
    expect(saved).toEqual([])
    // and a good one: the bytes come back to the store given, and restore
    const built = await Effect.runPromise(SnapshotWorker.builder.build(input(Effect.succeed(empty.slice()), [])))
    expect(built).toMatchObject({ name: "saved-1", events: 0 })
    expect(saved.length).toBe(1)
    expect(built.bytes).toBe(Buffer.concat(saved[0]!).length)
    expect(EngineSnapshot.restore(Buffer.concat(saved[0]!)).stats.tokens).toBe(0)
  })

  it("given the snapshot directory, the worker reads the base file and writes the new one itself", async () => {
    const directory = mkdtempSync(join(tmpdir(), "spot-snapshot-worker-"))
    try {
      const market = Market.makeMarket()
      market.apply(events.slice(0, 1_000))
      const files = await Effect.runPromise(FileSnapshotStore.make({ directory }))
      const context = EngineSnapshot.threadContext()
      const header = (seq: number): SnapshotHeader => ({ logId: "log-1", seq, eventId: events[seq - 1]!.id, engine: context.fingerprint, takenAt: seq })
      const base = await Effect.runPromise(files.save(header(1_000), [EngineSnapshot.snapshot(market.engine)]))
      let loadedHere = 0
      let savedHere = 0
      const texts = events.slice(1_000, 2_000).map((event) => Events.marketEventJson(event))
      const built = await Effect.runPromise(SnapshotWorker.make({ directory }).build({
        base: { name: base, load: Effect.sync(() => (loadedHere++, new Uint8Array())) },
        header: header(2_000),
        save: () => Effect.sync(() => (savedHere++, "not-here")),
        options: market.engine.options,
        events: Stream.make(texts.slice(0, 600), texts.slice(600))
      }))
      expect(loadedHere + savedHere).toBe(0) // no snapshot bytes in this thread
      expect(built).toMatchObject({ events: 1_000 })
      const listed = await Effect.runPromise(files.list)
      expect(listed.map((entry) => entry.name)).toEqual([built.name, base])
      // what it wrote is the market after the 2,000 events
      market.apply(events.slice(1_000, 2_000))
      const restored = Market.makeMarket()
      EngineSnapshot.restoreInto(restored.engine, await Effect.runPromise(files.load(built.name)))
      expect(served(restored)).toBe(served(market))
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  })
})
