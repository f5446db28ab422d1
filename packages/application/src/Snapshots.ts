/**
 * Engine snapshots as a cache of the event log (docs/storage.md, "Snapshots"): at start-up the
 * market is restored from the newest snapshot that provably belongs to this log (same log
 * identity, the same event at its seq, written by this engine code, checksum intact) and only the
 * log's tail is replayed; while running, a snapshot is taken every `everyEvents` folded events
 * (at most every `minIntervalMs`) and at shutdown.
 *
 * Taking one: the engine is serialized synchronously, together with the seq it reflects (the
 * market and `Ingest.foldedSeq` change together in one synchronous step, so the pair is
 * consistent without stopping ingest); that is the only pause. Looking up the event id at the
 * seq, the checksum and the file write run asynchronously while the service serves. One snapshot
 * is written at a time.
 *
 * Nothing here can lose data: the log stays the truth. A snapshot that cannot be used is skipped
 * with a log line saying why, the next one is tried, and without any the whole log is replayed.
 */
import { Clock, Context, Deferred, Duration, Effect, Layer, Option, Schedule, Semaphore, Stream } from "effect"
import { EngineSnapshot } from "@spot/domain"
import { Ingest } from "./Ingest.js"
import { Market } from "./Market.js"
import { EventStore } from "./ports/EventStore.js"
import type { StoreUnavailable } from "./ports/EventStore.js"
import { LogIdentity, SnapshotStore } from "./ports/SnapshotStore.js"
import { TradeHistory } from "./TradeHistory.js"
import type { SnapshotHeader, SnapshotStoreError } from "./ports/SnapshotStore.js"

export interface SnapshotSettings {
  /** Restore from snapshots at start-up, take them while running and at shutdown. */
  readonly enabled: boolean
  /** A snapshot once this many logged events were folded since the last one... */
  readonly everyEvents: number
  /** ...but never sooner than this after the previous one (ms): bounds the serialization pauses. */
  readonly minIntervalMs: number
  /** How often the trigger is checked (ms). */
  readonly checkEveryMs?: number
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
    /** How long serializing held the event loop (ms): the pause every request waited through. */
    readonly pauseMs: number
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
  /** Takes a snapshot now (unless nothing was folded since the last one); waits for a write in progress first. */
  readonly take: Effect.Effect<TakeOutcome>
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

const describeError = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error ? String((error as { message: unknown }).message) : String(error)

/** The snapshot service; with `enabled: false`, restore reports a full replay and take does nothing. */
export const make = (settings: SnapshotSettings) =>
  Effect.gen(function*() {
    const market = yield* Market
    const ingest = yield* Ingest
    const store = yield* EventStore
    const snapshots = yield* SnapshotStore
    const identity = yield* LogIdentity
    const scope = yield* Effect.scope
    const oneAtATime = yield* Semaphore.make(1)
    const checkEvery = Duration.millis(settings.checkEveryMs ?? 1_000)
    const shutdownTimeout = Duration.millis(settings.shutdownTimeoutMs ?? 120_000)

    /** The last snapshot taken or restored: its seq, when (or when one was last attempted), and its size (the next buffer's hint). */
    let lastSeq = 0
    let lastAt = yield* nowMs
    let lastBytes = 0
    /** Set when the engine holds something the codec refuses (a bug): no more attempts. */
    let broken: string | undefined
    const restored = yield* Deferred.make<void>()

    const history = yield* Effect.serviceOption(TradeHistory)

    const takeNow: Effect.Effect<TakeOutcome> = Effect.gen(function*() {
      if (broken !== undefined) return { _tag: "Skipped", reason: broken } as const
      // The trade archive must hold every trade the snapshot covers (TradeHistory.ts): written
      // first, and checked empty again in the pause below.
      if (Option.isSome(history)) yield* history.value.flush
      // The pause: the engine and the seq it reflects, read in one synchronous step.
      const pauseStarted = yield* nowMs
      const cpuStarted = settings.cpuMillis?.()
      let cpu = ""
      const serialized = yield* Effect.sync(() => {
        const seq = ingest.foldedSeq()
        if (seq === 0 || seq === lastSeq) return undefined
        if (Option.isSome(history) && history.value.queued() > 0) return { behind: history.value.queued() }
        try {
          // The previous snapshot's size, or the engine's own estimate of its memory with room to
          // spare (an unused tail of the buffer costs nothing until written), spares the buffer
          // a doubling: a copy of hundreds of megabytes inside the pause.
          const sizeHint = lastBytes > 0 ? lastBytes : Math.ceil(market.engine.heapBytes() * 1.5)
          const bytes = EngineSnapshot.snapshot(market.engine, { sizeHint })
          cpu = cpuNote(settings, cpuStarted, "; ")
          return { seq, bytes }
        } catch (error) {
          broken = `the engine's state cannot be snapshotted: ${describeError(error)}`
          return broken
        }
      })
      const pauseEnded = yield* nowMs
      const pauseMs = pauseEnded - pauseStarted
      // An attempt counts for the minimum interval even if the write then fails (a full disk must
      // not cost a serialization pause every second).
      if (serialized !== undefined) lastAt = pauseEnded
      const captured = typeof serialized === "object" ? { ...serialized, pauseMs } : serialized
      if (captured === undefined) return { _tag: "Skipped", reason: "nothing folded since the last snapshot" } as const
      if (typeof captured === "string") {
        yield* Effect.logError(`snapshots stopped: ${captured}`)
        return { _tag: "Skipped", reason: captured } as const
      }
      if ("behind" in captured) {
        return { _tag: "Skipped", reason: `${captured.behind} trades folded during the trade archive's flush are not written yet` } as const
      }
      const writeStarted = yield* nowMs
      const header: SnapshotHeader | null = yield* Effect.gen(function*() {
        const eventId = yield* eventIdAt(store, captured.seq)
        if (eventId === null) return null
        return {
          logId: yield* identity.logId,
          seq: captured.seq,
          eventId,
          engine: EngineSnapshot.fingerprint(),
          takenAt: yield* Clock.currentTimeMillis
        }
      })
      if (header === null) return { _tag: "Skipped", reason: `the log holds no event at seq ${captured.seq}` } as const
      const name = yield* snapshots.save(header, captured.bytes)
      const writeMs = (yield* nowMs) - writeStarted
      lastSeq = captured.seq
      lastBytes = captured.bytes.length
      yield* Effect.logInfo(
        `snapshot ${name} written: seq ${captured.seq}, ${megabytes(captured.bytes.length)} MB, serialized in ${captured.pauseMs.toFixed(0)} ms (event loop paused${cpu}), written in ${seconds(writeMs)} s`
      )
      return { _tag: "Written", name, seq: captured.seq, bytes: captured.bytes.length, pauseMs: captured.pauseMs, writeMs } as const
    }).pipe(
      Effect.catch((error: StoreUnavailable | SnapshotStoreError) =>
        Effect.as(Effect.logWarning(`snapshot not written: ${error.message}`), { _tag: "Skipped", reason: error.message } as const)
      )
    )

    const take: Effect.Effect<TakeOutcome> = settings.enabled
      ? oneAtATime.withPermit(takeNow)
      : Effect.succeed({ _tag: "Skipped", reason: "snapshots are off" })

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
          : h.engine !== EngineSnapshot.fingerprint()
          ? `written by other engine code (${h.engine}; this is ${EngineSnapshot.fingerprint()})`
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
        const problem = yield* Effect.sync(() => {
          try {
            EngineSnapshot.restoreInto(market.engine, body.success)
            return undefined
          } catch (error) {
            return `does not restore: ${describeError(error)}`
          }
        })
        if (problem !== undefined) {
          skipped.push(`${entry.name} ${problem}`)
          continue
        }
        yield* ingest.resumeAt(h.seq)
        lastSeq = h.seq
        lastAt = yield* nowMs
        lastBytes = body.success.length
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
        yield* Effect.logInfo(`no usable snapshot, replaying the whole event log: ${outcome.reasons.join("; ")}`)
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
          const outcome = yield* take.pipe(
            Effect.timeoutOrElse({ duration: shutdownTimeout, orElse: () => Effect.succeed({ _tag: "Skipped", reason: "timed out" } as const) })
          )
          if (outcome._tag === "Skipped" && outcome.reason === "timed out") {
            yield* Effect.logWarning(`no snapshot at shutdown: not written within ${Duration.format(shutdownTimeout)}`)
          }
        })
      )
    }

    return Snapshots.of({ restore, take, startPeriodic })
  })

export const layer = (
  settings: SnapshotSettings
): Layer.Layer<Snapshots, never, Market | Ingest | EventStore | SnapshotStore | LogIdentity> => Layer.effect(Snapshots, make(settings))
