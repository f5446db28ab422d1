/**
 * Engine snapshots as a cache of the event log (docs/storage.md, "Snapshots"): at start-up the
 * market is restored from the newest snapshot that provably belongs to this log (same log
 * identity, the same event at its seq, written by this engine code, checksum intact) and only the
 * log's tail is replayed; while running, a snapshot is taken every `everyEvents` folded events
 * (at most every `minIntervalMs`) and at shutdown.
 *
 * Taking one while running, with a `SnapshotBuilder` (the service has one: a worker thread): the
 * seq to snapshot is read under the market's write lock (`Market.writeLock`; the market and
 * `Ingest.foldedSeq` change together under it), and the builder makes the engine's state at that
 * seq again from the last snapshot and the log's events since, and serializes it, while this
 * thread goes on folding and serving: nothing waits for it.
 *
 * Without a builder, and at a stop: the market's writers are held off (folds and the clock's tick
 * wait), and the engine is serialized a step of a few milliseconds per event-loop turn, so reads
 * and streams are served between steps; folding resumes when the last step is done.
 *
 * Either way, looking up the event id at the seq, the checksum and the file write then run
 * asynchronously while the service serves and folds. One snapshot is written at a time.
 *
 * Nothing here can lose data: the log stays the truth. A snapshot that cannot be used is skipped
 * with a log line saying why, the next one is tried, and without any the whole log is replayed.
 */
import { Clock, Context, Deferred, Duration, Effect, Layer, Option, Schedule, Semaphore, Stream } from "effect"
import { Ingest } from "./Ingest.js"
import { Market } from "./Market.js"
import { EngineCodec } from "./ports/EngineCodec.js"
import { EventStore } from "./ports/EventStore.js"
import type { StoreUnavailable } from "./ports/EventStore.js"
import { SnapshotBuilder, SnapshotBuildFailed } from "./ports/SnapshotBuilder.js"
import { LogIdentity, SnapshotStore } from "./ports/SnapshotStore.js"
import { TradeHistory } from "./TradeHistory.js"
import type { SnapshotHeader, SnapshotStoreError } from "./ports/SnapshotStore.js"

export interface SnapshotSettings {
  /** Restore from snapshots at start-up, take them while running and at shutdown. */
  readonly enabled: boolean
  /** A snapshot once this many logged events were folded since the last one... */
  readonly everyEvents: number
  /** ...but never sooner than this after the previous one (ms): bounds how often folding waits for a serialization. */
  readonly minIntervalMs: number
  /** How often the trigger is checked (ms). */
  readonly checkEveryMs?: number
  /** How long one step of the serialization may hold the event loop (ms; default 10). */
  readonly stepMs?: number
  /** The longest a shutdown waits for its snapshot to be written (ms). */
  readonly shutdownTimeoutMs?: number
  /**
   * The process's CPU time so far (ms), when the platform can tell: log lines then give the CPU
   * a serialization or a restore took besides its wall time (they differ on a busy machine).
   */
  readonly cpuMillis?: () => number
}

/**
 * Defaults: a snapshot per 250,000 events (about 100,000 trades) and at most one a minute. After
 * a crash the tail to replay is then at most max(250,000 events, one minute of ingest); after a
 * graceful stop it is empty (a snapshot is taken at shutdown).
 */
export const defaultSnapshotSettings: SnapshotSettings = {
  enabled: true,
  everyEvents: 250_000,
  minIntervalMs: 60_000
}

export const disabledSnapshotSettings: SnapshotSettings = { ...defaultSnapshotSettings, enabled: false }

/** What the start-up restore did. */
export type RestoreOutcome =
  | {
    readonly _tag: "Restored"
    readonly name: string
    readonly seq: number
    /** Reading, checking and decoding the snapshot. */
    readonly seconds: number
    /** Snapshots skipped before this one, with the reason. */
    readonly skipped: ReadonlyArray<string>
  }
  | { readonly _tag: "FullReplay"; readonly reasons: ReadonlyArray<string> }

/** What taking a snapshot did. */
export type TakeOutcome =
  | {
    readonly _tag: "Written"
    readonly name: string
    readonly seq: number
    readonly bytes: number
    /** How long serializing took (ms): folding held off meanwhile, unless built in a worker. */
    readonly serializeMs: number
    /** Its steps, each a turn of the event loop (0: built in a worker). */
    readonly steps: number
    /** The longest step (ms): the longest any request waited for it (0: built in a worker). */
    readonly pauseMs: number
    /**
     * Built by the `SnapshotBuilder` (a worker thread) instead of serialized here with folding held:
     * the snapshot it started from, the events it folded onto it, and how long that took (ms).
     */
    readonly built?: { readonly base: string; readonly events: number; readonly foldMs: number }
    /** Looking up the event id, checksum and writing (ms), while serving. */
    readonly writeMs: number
  }
  | { readonly _tag: "Skipped"; readonly reason: string }

export interface SnapshotsShape {
  /**
   * Start-up, before the first catch-up: restores the newest usable snapshot into the (still
   * empty) market and moves ingest past its seq, or leaves both untouched for a full replay.
   * Never fails. From then on, a shutdown takes a snapshot.
   */
  readonly restore: Effect.Effect<RestoreOutcome>
  /**
   * Once start-up is done (the catch-up folded): starts the periodic snapshots, the first no
   * sooner than the minimum interval from now (a long replay is not paused for one, and a fresh
   * start does not pause right away).
   */
  readonly startPeriodic: Effect.Effect<void>
  /**
   * Takes a snapshot now (unless nothing was folded since the last one); waits for a write in
   * progress first. Built by the `SnapshotBuilder` when one is given (folding goes on meanwhile),
   * else serialized here with folding held; the periodic ones are taken this way.
   */
  readonly take: Effect.Effect<TakeOutcome>
  /**
   * Takes a snapshot now serialized in this thread, folding held: where nothing is served yet (at
   * the end of a fresh log's warm-up, before the service listens) or nothing folds any more (a stop).
   */
  readonly takeHere: Effect.Effect<TakeOutcome>
}

export class Snapshots extends Context.Service<Snapshots, SnapshotsShape>()("@spot/application/Snapshots") {}

const seconds = (ms: number): string => (ms / 1000).toFixed(1)
const cpuNote = (settings: SnapshotSettings, fromCpu: number | undefined, suffix: string): string =>
  settings.cpuMillis === undefined || fromCpu === undefined ? "" : `${suffix}${(settings.cpuMillis() - fromCpu).toFixed(0)} ms of CPU`
const megabytes = (bytes: number): string => (bytes / 1e6).toFixed(1)
const nowMs = Effect.map(Clock.currentTimeNanos, (nanos) => Number(nanos) / 1e6)

/** The id of the logged event at `seq`, or null when the log holds none there. */
const eventIdAt = (store: EventStore["Service"], seq: number): Effect.Effect<string | null, StoreUnavailable> =>
  store.replay(seq - 1, 1).pipe(
    Stream.runHead,
    Effect.map((chunk) => {
      const first = Option.isSome(chunk) ? chunk.value[0] : undefined
      return first !== undefined && first.seq === seq ? first.event.id : null
    })
  )

/**
 * Log events read per page for a builder: this thread's share of a build is reading them, and a
 * page is one burst of it (a driver's buffers and strings); 5,000-event pages (the catch-up's)
 * stall the event loop about 0.1 s each under load.
 */
const builderPageSize = 1_000

/** What serializing gave: the engine's bytes and the seq they reflect, or why there are none. */
type Serialized =
  | {
    readonly seq: number
    readonly chunks: ReadonlyArray<Uint8Array>
    readonly serializeMs: number
    readonly steps: number
    readonly pauseMs: number
  }
  /** The trade archive holds trades the snapshot would cover but has not written them yet. */
  | { readonly behind: number }
  /** The engine changed between two steps (a write without the lock): why; the next period tries again. */
  | { readonly changed: string }
  /** Nothing folded since the last snapshot. */
  | undefined
  /** The engine's state cannot be snapshotted (a bug): why. */
  | string

/** The snapshot service; with `enabled: false`, restore reports a full replay and take does nothing. */
export const make = (settings: SnapshotSettings) =>
  Effect.gen(function*() {
    const market = yield* Market
    const ingest = yield* Ingest
    const store = yield* EventStore
    const snapshots = yield* SnapshotStore
    const identity = yield* LogIdentity
    const codec = yield* EngineCodec
    const scope = yield* Effect.scope
    const oneAtATime = yield* Semaphore.make(1)
    const checkEvery = Duration.millis(settings.checkEveryMs ?? 1_000)
    const stepMs = settings.stepMs ?? 10
    const shutdownTimeout = Duration.millis(settings.shutdownTimeoutMs ?? 120_000)

    /** The last snapshot taken or restored: its seq, and when (or when one was last attempted). */
    let lastSeq = 0
    /** The snapshot at `lastSeq` (written or restored), where a worker's build starts. */
    let lastName: string | undefined
    let lastAt = yield* nowMs
    /** Set when the engine holds something the codec refuses (a bug): no more attempts. */
    let broken: string | undefined
    const restored = yield* Deferred.make<void>()

    const history = yield* Effect.serviceOption(TradeHistory)
    const builder = yield* Effect.serviceOption(SnapshotBuilder)

    /**
     * Under the market's write lock: the seq folded and the engine's bytes, a step per turn of the
     * event loop; undefined when nothing was folded since the last snapshot, a string when the
     * engine cannot be snapshotted (a bug: no more attempts).
     */
    const serialize: Effect.Effect<Serialized> = Effect.suspend(() => {
      const seq = ingest.foldedSeq()
      if (seq === 0 || seq === lastSeq) return Effect.succeed(undefined)
      if (Option.isSome(history) && history.value.queued() > 0) return Effect.succeed({ behind: history.value.queued() })
      return Effect.clockWith((clock) =>
        Effect.gen(function*() {
          let deadline = 0
          const encoding = yield* codec.serializeInSteps(market.engine, () => clock.currentTimeMillisUnsafe() >= deadline)
          const started = clock.currentTimeMillisUnsafe()
          let count = 0
          let longest = 0
          const step: Effect.Effect<Serialized | "more"> = Effect.suspend(() => {
            const at = clock.currentTimeMillisUnsafe()
            deadline = at + stepMs
            count++
            return encoding.step.pipe(
              Effect.map((chunks): Serialized | "more" => {
                longest = Math.max(longest, clock.currentTimeMillisUnsafe() - at)
                return chunks !== undefined ? { seq, chunks, serializeMs: clock.currentTimeMillisUnsafe() - started, steps: count, pauseMs: longest } : "more"
              }),
              Effect.catchTags({
                // The engine changed under the steps (something wrote without the lock): try again
                // at the next period. Anything else is state the codec refuses: a bug, no more tries.
                EngineChangedWhileEncoding: (error) => Effect.succeed({ changed: error.message }),
                EngineEncodeFailed: (error) => Effect.sync(() => (broken = `the engine's state cannot be snapshotted: ${error.message}`))
              })
            )
          })
          const loop: Effect.Effect<Serialized> = Effect.flatMap(step, (done) => done === "more" ? Effect.andThen(Effect.yieldNow, loop) : Effect.succeed(done))
          // Interrupted (the periodic one by a stop, the stop's by its timeout): end the encoding,
          // which frees the codec for the next, and say so (a stop's own snapshot follows).
          return yield* loop.pipe(
            Effect.onInterrupt(() => Effect.logInfo(`snapshot at seq ${seq} not finished: interrupted after ${count} step${count === 1 ? "" : "s"}`)),
            Effect.ensuring(encoding.cancel)
          )
        })
      )
    })

    /**
     * Stores `chunks` as the snapshot of the log up to `seq`: the log's event id at `seq` makes its
     * header. Null when the log holds no event there.
     */
    const save = (seq: number, chunks: ReadonlyArray<Uint8Array>): Effect.Effect<string | null, StoreUnavailable | SnapshotStoreError> =>
      Effect.gen(function*() {
        const header = yield* headerAt(seq)
        if (header === null) return null
        const name = yield* snapshots.save(header, chunks)
        lastSeq = seq
        lastName = name
        return name
      })

    /** The header of a snapshot at `seq`: the log's event id there makes it. Null when the log holds no event there. */
    const headerAt = (seq: number): Effect.Effect<SnapshotHeader | null, StoreUnavailable> =>
      Effect.gen(function*() {
        const eventId = yield* eventIdAt(store, seq)
        if (eventId === null) return null
        return {
          logId: yield* identity.logId,
          seq,
          eventId,
          engine: codec.fingerprint,
          takenAt: yield* Clock.currentTimeMillis
        }
      })

    const notWritten = (error: StoreUnavailable | SnapshotStoreError) =>
      Effect.as(Effect.logWarning(`snapshot not written: ${error.message}`), { _tag: "Skipped", reason: error.message } as const)

    /**
     * The trade archive must hold every trade the snapshot covers (TradeHistory.ts): written first,
     * and checked empty again under the write lock by the caller.
     */
    const flushHistory: Effect.Effect<void, StoreUnavailable> = Option.isSome(history) ? history.value.flush : Effect.void

    /** Serialized here, a step per event-loop turn, with folding held meanwhile. */
    const takeSerialized: Effect.Effect<TakeOutcome> = Effect.gen(function*() {
      if (broken !== undefined) return { _tag: "Skipped", reason: broken } as const
      yield* flushHistory
      // The engine and the seq it reflects, with the market's writers held off: a step of the
      // serialization per event-loop turn, reads served between the steps.
      const cpuStarted = settings.cpuMillis?.()
      const captured = yield* market.writeLock.withPermit(serialize)
      if (captured === undefined) return { _tag: "Skipped", reason: "nothing folded since the last snapshot" } as const
      // An attempt counts for the minimum interval even if the write then fails (a full disk must
      // not cost a serialization every second).
      lastAt = yield* nowMs
      if (typeof captured === "string") {
        yield* Effect.logError(`snapshots stopped: ${captured}`)
        return { _tag: "Skipped", reason: captured } as const
      }
      if ("behind" in captured) {
        return { _tag: "Skipped", reason: `${captured.behind} trades folded during the trade archive's flush are not written yet` } as const
      }
      if ("changed" in captured) {
        yield* Effect.logWarning(`snapshot not written: ${captured.changed}`)
        return { _tag: "Skipped", reason: captured.changed } as const
      }
      const cpu = cpuNote(settings, cpuStarted, "; ")
      const bytes = captured.chunks.reduce((sum, chunk) => sum + chunk.length, 0)
      const writeStarted = yield* nowMs
      const name = yield* save(captured.seq, captured.chunks)
      if (name === null) return { _tag: "Skipped", reason: `the log holds no event at seq ${captured.seq}` } as const
      const writeMs = (yield* nowMs) - writeStarted
      yield* Effect.logInfo(
        `snapshot ${name} written: seq ${captured.seq}, ${megabytes(bytes)} MB, serialized in ${captured.serializeMs.toFixed(0)} ms (${captured.steps} steps, the longest ${captured.pauseMs.toFixed(0)} ms; folding held meanwhile${cpu}), written in ${seconds(writeMs)} s`
      )
      const { pauseMs, serializeMs, steps } = captured
      return { _tag: "Written", name, seq: captured.seq, bytes, serializeMs, steps, pauseMs, writeMs } as const
    }).pipe(Effect.catch(notWritten))

    /**
     * Built by `builder` (a worker thread), folding not held: the seq is read under the write lock
     * (with the trade archive caught up), then the builder restores the last snapshot this
     * service wrote or restored and folds the log's events after it up to that seq, as a restart
     * would, while this thread goes on folding and serving; its bytes are then stored as a
     * snapshot here would be (by the builder: a worker writes the file itself). A failed build,
     * a base that does not load among them, falls back to serializing here.
     */
    const takeBuilt = (builder: SnapshotBuilder["Service"], baseName: string): Effect.Effect<TakeOutcome> =>
      Effect.gen(function*() {
        if (broken !== undefined) return { _tag: "Skipped", reason: broken } as const
        yield* flushHistory
        const wanted = yield* market.writeLock.withPermit(Effect.sync(() => {
          const seq = ingest.foldedSeq()
          if (seq === 0 || seq === lastSeq) return undefined
          if (Option.isSome(history) && history.value.queued() > 0) return { behind: history.value.queued() }
          return seq
        }))
        if (wanted === undefined) return { _tag: "Skipped", reason: "nothing folded since the last snapshot" } as const
        lastAt = yield* nowMs
        if (typeof wanted !== "number") {
          return { _tag: "Skipped", reason: `${wanted.behind} trades folded during the trade archive's flush are not written yet` } as const
        }
        const seq = wanted
        const baseSeq = lastSeq
        const started = yield* nowMs
        const header = yield* headerAt(seq)
        if (header === null) return { _tag: "Skipped", reason: `the log holds no event at seq ${seq}` } as const
        const base = {
          name: baseName,
          load: snapshots.load(baseName)
        }
        const events = store.replayText(baseSeq, builderPageSize).pipe(
          Stream.takeWhile((chunk) => chunk.length > 0 && chunk[0]!.seq <= seq),
          Stream.map((chunk) => {
            const texts: Array<string> = []
            for (const stored of chunk) if (stored.seq <= seq) texts.push(stored.text)
            return texts
          })
        )
        const built = yield* builder.build({
          base,
          header,
          save: (chunks) => snapshots.save(header, chunks),
          options: market.engine.options,
          events
        }).pipe(
          // a stop ends the build (its worker goes with it) and serializes its own snapshot here
          Effect.onInterrupt(() => Effect.logInfo(`snapshot at seq ${seq} not finished: its build in a worker thread was ended by the stop`))
        )
        lastSeq = seq
        lastName = built.name
        const builtMs = (yield* nowMs) - started - built.writeMs
        yield* Effect.logInfo(
          `snapshot ${built.name} written: seq ${seq}, ${megabytes(built.bytes)} MB, built in a worker thread in ${seconds(builtMs)} s (${baseName} and the ${built.events} events after it folded in ${seconds(built.foldMs)} s, serialized in ${seconds(built.serializeMs)} s; folding not held), written in ${seconds(built.writeMs)} s`
        )
        return {
          _tag: "Written",
          name: built.name,
          seq,
          bytes: built.bytes,
          serializeMs: built.serializeMs,
          steps: 0,
          pauseMs: 0,
          writeMs: built.writeMs,
          built: { base: baseName, events: built.events, foldMs: built.foldMs }
        } as const
      }).pipe(
        Effect.catchTag("SnapshotBuildFailed", (failure: SnapshotBuildFailed) =>
          Effect.andThen(Effect.logWarning(`snapshot not built in a worker (${failure.message}): serializing it here, folding held`), takeSerialized)),
        Effect.catch(notWritten)
      )

    /**
     * Built off this thread when a builder is given and there is a snapshot to build on. Without
     * one (the first after a full replay) it is serialized here, once: rebuilding the whole log
     * elsewhere would cost minutes of both threads (this one reads the log out to the builder).
     * A stop's own snapshot is always serialized here.
     */
    const takeNow: Effect.Effect<TakeOutcome> = Effect.suspend(() =>
      Option.isSome(builder) && lastName !== undefined ? takeBuilt(builder.value, lastName) : takeSerialized
    )

    const off = Effect.succeed<TakeOutcome>({ _tag: "Skipped", reason: "snapshots are off" })
    const take: Effect.Effect<TakeOutcome> = settings.enabled ? oneAtATime.withPermit(takeNow) : off
    /** Where nothing is served yet or nothing folds any more (a stop): serialized here, at once, rather than rebuilt elsewhere. */
    const takeHere: Effect.Effect<TakeOutcome> = settings.enabled ? oneAtATime.withPermit(takeSerialized) : off

    /** Periodically: a snapshot once enough events were folded, not sooner than the minimum interval. */
    const periodic = Effect.gen(function*() {
      const now = yield* nowMs
      if (ingest.foldedSeq() - lastSeq < settings.everyEvents || now - lastAt < settings.minIntervalMs) return
      // A write still in progress: skip this round rather than queue behind it.
      yield* oneAtATime.withPermitsIfAvailable(1)(takeNow)
    }).pipe(Effect.delay(checkEvery), Effect.repeat(Schedule.forever))

    let restoreCpuStarted: number | undefined
    const tryRestore = Effect.gen(function*() {
      const logId = yield* identity.logId
      const head = yield* store.head
      const listing = yield* snapshots.list
      const skipped: Array<string> = []
      for (const entry of listing) {
        if ("problem" in entry) {
          skipped.push(`${entry.name}: ${entry.problem}`)
          continue
        }
        const h = entry.header
        const why = h.logId !== logId
          ? `belongs to another event log (${h.logId}; this log is ${logId})`
          : h.engine !== codec.fingerprint
          ? `written by other engine code (${h.engine}; this is ${codec.fingerprint})`
          : head === null || h.seq > head.seq
          ? `is ahead of the log (seq ${h.seq}; the log ends at ${head?.seq ?? 0})`
          : undefined
        if (why !== undefined) {
          skipped.push(`${entry.name} ${why}`)
          continue
        }
        const eventId = yield* eventIdAt(store, h.seq)
        if (eventId !== h.eventId) {
          skipped.push(`${entry.name}: the log's event at seq ${h.seq} is ${eventId ?? "missing"}, not ${h.eventId}`)
          continue
        }
        const started = yield* nowMs
        restoreCpuStarted = settings.cpuMillis?.()
        const body = yield* Effect.result(snapshots.load(entry.name))
        if (body._tag === "Failure") {
          skipped.push(`${entry.name}: ${body.failure.message}`)
          continue
        }
        const restoredInto = yield* Effect.result(codec.restoreInto(market.engine, body.success))
        if (restoredInto._tag === "Failure") {
          skipped.push(`${entry.name} does not restore: ${restoredInto.failure.message}`)
          continue
        }
        yield* ingest.resumeAt(h.seq)
        lastSeq = h.seq
        lastName = entry.name
        lastAt = yield* nowMs
        return { _tag: "Restored", name: entry.name, seq: h.seq, seconds: (lastAt - started) / 1000, skipped } as RestoreOutcome
      }
      return { _tag: "FullReplay", reasons: listing.length === 0 ? ["no snapshot"] : skipped } as RestoreOutcome
    }).pipe(
      Effect.catch((error: StoreUnavailable | SnapshotStoreError) =>
        Effect.succeed<RestoreOutcome>({ _tag: "FullReplay", reasons: [`snapshots unavailable: ${error.message}`] })
      )
    )

    const restore: Effect.Effect<RestoreOutcome> = Effect.gen(function*() {
      if (!settings.enabled) return { _tag: "FullReplay", reasons: ["snapshots are off"] } as RestoreOutcome
      const outcome = yield* tryRestore
      for (const reason of outcome._tag === "Restored" ? outcome.skipped : []) yield* Effect.logWarning(`snapshot skipped: ${reason}`)
      if (outcome._tag === "Restored") {
        const stats = market.engine.stats
        yield* Effect.logInfo(
          `restored snapshot ${outcome.name} (seq ${outcome.seq}) in ${outcome.seconds.toFixed(2)} s${cpuNote(settings, restoreCpuStarted, ", ")}: ${stats.tokens} tokens, ${stats.trades} trades; replaying the log after seq ${outcome.seq}`
        )
      } else {
        yield* Effect.logInfo(
          outcome.reasons.length === 1 && outcome.reasons[0] === "no snapshot"
            ? "no snapshot yet: the whole event log is replayed"
            : `no usable snapshot, replaying the whole event log: ${outcome.reasons.join("; ")}`
        )
      }
      yield* Deferred.succeed(restored, undefined)
      return outcome
    })

    let periodicStarted = false
    const startPeriodic: Effect.Effect<void> = Effect.suspend(() => {
      if (!settings.enabled || periodicStarted) return Effect.void
      periodicStarted = true
      return Effect.gen(function*() {
        lastAt = yield* nowMs
        yield* Effect.forkIn(periodic, scope)
      })
    })

    if (settings.enabled) {
      // At shutdown: what was folded since the last snapshot, so a restart replays nothing.
      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          if (!(yield* Deferred.isDone(restored))) return
          const outcome = yield* takeHere.pipe(
            Effect.timeoutOrElse({ duration: shutdownTimeout, orElse: () => Effect.succeed({ _tag: "Skipped", reason: "timed out" } as const) })
          )
          if (outcome._tag === "Skipped" && outcome.reason === "timed out") {
            yield* Effect.logWarning(`no snapshot at shutdown: not written within ${Duration.format(shutdownTimeout)}`)
          }
        })
      )
    }

    return Snapshots.of({ restore, take, takeHere, startPeriodic })
  })

export const layer = (
  settings: SnapshotSettings
): Layer.Layer<Snapshots, never, Market | Ingest | EventStore | SnapshotStore | LogIdentity | EngineCodec> => Layer.effect(Snapshots, make(settings))
