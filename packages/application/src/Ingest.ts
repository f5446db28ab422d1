/**
 * The ingest use case: the one path events take into the market, for an indexer (over HTTP) and
 * for the embedded simulator alike. A batch is validated as a whole (schema, then the engine's
 * checks in batch order, counting earlier events of the same batch), appended to the durable
 * event log (acknowledged means committed), and only then folded into the market, newly stored
 * events only, in order. Sending a batch twice changes nothing the second time: the log refuses
 * ids it already holds. See docs/ingest.md and docs/storage.md.
 *
 * One batch at a time (a one-permit semaphore): the log's order must be the order the market
 * folded, or a replay would rebuild a different state. The use case remembers the last seq it
 * folded; after a failed append (which may have committed anyway: a connection lost during COMMIT
 * is ambiguous) it first folds whatever the log holds past that seq, so a retried batch is then
 * seen as duplicates and nothing is lost or doubled.
 */
import { Context, Duration, Effect, Exit, Layer, Schedule, SchemaIssue, SchemaParser, Semaphore, Stream } from "effect"
import type { MarketEvent } from "@spot/domain"
import { Chain, Events } from "@spot/domain"
import type { FieldIssue } from "./errors.js"
import { Unavailable, ValidationFailed } from "./errors.js"
import { Market } from "./Market.js"
import { EventStore } from "./ports/EventStore.js"
import type { StoreUnavailable } from "./ports/EventStore.js"

/** Largest batch one request may carry (keeps one transaction and one fold step bounded). */
export const maxBatchSize = 10_000

/** Events read from the log per query when catching up (start-up replay included). */
export const replayBatchSize = 5_000

export interface IngestResult {
  /** Events stored and folded by this call. */
  readonly accepted: number
  /** Events whose id the log already held (or that repeated an id earlier in the batch). */
  readonly duplicates: number
}

export interface IngestShape {
  /** Validates, stores and folds a batch of raw (JSON-decoded) events; all or nothing. */
  readonly ingest: (batch: ReadonlyArray<unknown>) => Effect.Effect<IngestResult, ValidationFailed | Unavailable>
  /**
   * Stores and folds events the service produced itself (the simulator): no validation (they
   * come from the same engine's model), same store, same order, same fold.
   */
  readonly publishTrusted: (events: ReadonlyArray<MarketEvent>) => Effect.Effect<IngestResult, StoreUnavailable>
  /**
   * Folds every logged event past the last one folded, in log order; returns how many. At
   * start-up this is the replay that rebuilds the market from the log.
   */
  readonly catchUp: Effect.Effect<number, StoreUnavailable>
  /** The seq of the last logged event folded into the market (0: none). */
  readonly foldedSeq: () => number
}

export class Ingest extends Context.Service<Ingest, IngestShape>()("@spot/application/Ingest") {}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()
const decodeEvent = SchemaParser.decodeUnknownExit(Events.MarketEvent)
const decodeOptions = { errors: "all" } as const

const fieldOf = (index: number, path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string => {
  let name = `events[${index}]`
  for (const segment of path) {
    const key = typeof segment === "object" ? segment.key : segment
    name += typeof key === "number" ? `[${key}]` : `.${String(key)}`
  }
  return name
}

const idOf = (raw: unknown): string | undefined => {
  const id = typeof raw === "object" && raw !== null ? (raw as { id?: unknown }).id : undefined
  return typeof id === "string" ? id : undefined
}

const withId = (id: string | undefined, message: string): string => (id === undefined ? message : `event "${id}": ${message}`)

/** The key of the token an event needs launched first, if any. */
const tokenKeyOf = (event: MarketEvent): string | undefined => {
  const subject = Events.subjectTokenOf(event)
  return subject === undefined ? undefined : `${subject.chain}:${Chain.canonicalAddress(subject.chain, subject.token)}`
}

/**
 * Decodes and checks a batch against the market as it is plus the batch's own earlier events.
 * Returns the decoded events, or every problem found (each on its `events[i].field`).
 */
export const validateBatch = (
  market: Market["Service"],
  batch: ReadonlyArray<unknown>
): { readonly events: Array<MarketEvent> } | { readonly issues: Array<FieldIssue> } => {
  const issues: Array<FieldIssue> = []
  const events: Array<MarketEvent> = []
  const launchedInBatch = new Set<string>()
  for (let i = 0; i < batch.length; i++) {
    const raw = batch[i]
    const decoded = decodeEvent(raw, decodeOptions)
    if (Exit.isFailure(decoded)) {
      const id = idOf(raw)
      for (const reason of decoded.cause.reasons) {
        if (reason._tag !== "Fail") continue
        for (const entry of formatIssue(reason.error).issues) {
          issues.push({ field: fieldOf(i, entry.path ?? []), message: withId(id, entry.message === "Missing key" ? "is required" : entry.message) })
        }
      }
      continue
    }
    const event = decoded.value
    if (event.type === "tokenLaunched") launchedInBatch.add(`${event.chain}:${Chain.canonicalAddress(event.chain, event.token)}`)
    const rejection = market.engine.check(event)
    if (rejection !== undefined) {
      const key = tokenKeyOf(event)
      if (key === undefined || !launchedInBatch.has(key)) {
        issues.push({ field: `events[${i}]`, message: withId(event.id, rejection) })
        continue
      }
    }
    events.push(event)
  }
  return issues.length > 0 ? { issues } : { events }
}

export const make = Effect.gen(function*() {
  const market = yield* Market
  const store = yield* EventStore
  const oneBatchAtATime = yield* Semaphore.make(1)
  let foldedSeq = 0
  /** Set when an append failed: the log may hold events past `foldedSeq` the market lacks. */
  let mayBeBehind = true

  const catchUpNow: Effect.Effect<number, StoreUnavailable> = Effect.suspend(() => {
    let folded = 0
    return store.replay(foldedSeq, replayBatchSize).pipe(
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          if (chunk.length === 0) return
          const events = new Array<MarketEvent>(chunk.length)
          for (let i = 0; i < chunk.length; i++) events[i] = chunk[i]!.event
          market.apply(events)
          foldedSeq = chunk[chunk.length - 1]!.seq
          folded += chunk.length
        })
      ),
      Effect.map(() => {
        mayBeBehind = false
        return folded
      })
    )
  })

  const storeThenFold = (events: ReadonlyArray<MarketEvent>): Effect.Effect<IngestResult, StoreUnavailable> =>
    Effect.gen(function*() {
      if (mayBeBehind) yield* catchUpNow
      const result = yield* Effect.tapError(store.append(events), () =>
        Effect.sync(() => {
          mayBeBehind = true
        }))
      if (result.accepted.length > 0) {
        market.apply(result.accepted)
        foldedSeq = result.lastSeq
      }
      return { accepted: result.accepted.length, duplicates: result.duplicates }
    })

  const storeUnavailable = () => new Unavailable({ message: "The event store is unavailable; nothing of this batch was applied." })

  const ingest = (batch: ReadonlyArray<unknown>): Effect.Effect<IngestResult, ValidationFailed | Unavailable> =>
    oneBatchAtATime.withPermit(
      Effect.gen(function*() {
        if (batch.length > maxBatchSize) {
          return yield* new ValidationFailed({ issues: [{ field: "events", message: `at most ${maxBatchSize} events per request; split the batch` }] })
        }
        // Validate against the market as the log has it (after an outage, that needs the catch-up).
        if (mayBeBehind) yield* Effect.mapError(catchUpNow, storeUnavailable)
        const validated = validateBatch(market, batch)
        if ("issues" in validated) return yield* new ValidationFailed({ issues: validated.issues })
        return yield* Effect.mapError(storeThenFold(validated.events), storeUnavailable)
      })
    )

  return Ingest.of({
    ingest,
    publishTrusted: (events) => oneBatchAtATime.withPermit(storeThenFold(events)),
    catchUp: oneBatchAtATime.withPermit(catchUpNow),
    foldedSeq: () => foldedSeq
  })
})

export const layer: Layer.Layer<Ingest, never, Market | EventStore> = Layer.effect(Ingest, make)

/**
 * The simulator's publish: stores then folds, retrying while the store is down (backoff up to 5
 * s, a warning per failed attempt) so no simulated event is dropped. Each attempt takes the ingest
 * permit anew: an outage does not hold HTTP ingest waiting, which answers 503 meanwhile.
 */
export const publishWithRetry = (ingest: IngestShape) => (events: ReadonlyArray<MarketEvent>): Effect.Effect<void> =>
  ingest.publishTrusted(events).pipe(
    Effect.tapError((error) => Effect.logWarning(`event store unavailable, retrying ${events.length} simulated events: ${error.message}`)),
    Effect.retry(Schedule.min([Schedule.exponential(Duration.millis(100)), Schedule.spaced(Duration.seconds(5))])),
    Effect.asVoid,
    Effect.orDie
  )
