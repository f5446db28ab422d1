/**
 * The ingest use case: the one path events take into the market, for an indexer (over HTTP) and
 * for the embedded simulator alike. A batch is validated as a whole (schema, then the engine's
 * checks in batch order, counting earlier events of the same batch), appended to the durable
 * event log (acknowledged means committed), and only then folded into the market, newly stored
 * events only, in order. Sending a batch twice changes nothing the second time: the log refuses
 * ids it already holds. See docs/ingest.md and docs/storage.md.
 *
 * A pipeline of three ordered steps, so that concurrent batches overlap the database's work with
 * the market's: batch N+1 is appended while batch N is folded.
 *
 * 1. Admission (a one-permit semaphore, first come first served): the batch, decoded when
 *    `ingest` was called (decoding needs no market state), is checked against the market plus the
 *    tokens launched by batches admitted before it and not folded yet, and takes its place in the
 *    order.
 * 2. Append, in admission order: a batch's append starts once the previous one has committed, so
 *    the log's order is the admission order. When an append fails, every batch admitted after it
 *    fails too without being appended (their validation counted on it).
 * 3. Fold, in admission order, once the previous batch is folded: the log's order is the order the
 *    market folded, or a replay would rebuild a different state.
 *
 * An admitted batch always goes through steps 2 and 3 (they are uninterruptible: the next batch
 * waits on them). The use case remembers the last seq it folded; after a failed append (which may
 * have committed anyway: a connection lost during COMMIT is ambiguous) the next admission first
 * waits for the batches in flight, then folds whatever the log holds past that seq, so a retried
 * batch is then seen as duplicates and nothing is lost or doubled. A fiber of the service does the
 * same once a second until it succeeds, so such a batch is served even if no other batch comes.
 */
import { Clock, Context, Deferred, Duration, Effect, Exit, Layer, Schedule, SchemaIssue, SchemaParser, Semaphore, Stream } from "effect"
import type { LaunchAhead, MarketEvent, Rejection } from "@spot/domain"
import { Chain, Events, rejectionField, rejectionMessage } from "@spot/domain"
import type { FieldIssue } from "./errors.js"
import { Unavailable, ValidationFailed } from "./errors.js"
import { Market } from "./Market.js"
import { EventStore } from "./ports/EventStore.js"
import { StoreUnavailable } from "./ports/EventStore.js"
import type { AppendResult } from "./ports/EventStore.js"

/** Largest batch one request may carry (keeps one transaction and one fold step bounded). */
export const maxBatchSize = 10_000

/**
 * How far past the service's clock an event may be dated (clock skew between a chain's block
 * times, the indexer and this server). An event dated later is refused: the market's clock moves
 * with event times, so one trade dated days ahead would end every token's trailing windows then,
 * emptying them until the wall clock caught up, and the log would keep it across restarts.
 */
export const maxFutureMs = 60_000

/** Events read from the log per query when catching up (start-up replay included). */
export const replayBatchSize = 5_000

export interface IngestResult {
  /** Events stored and folded by this call. */
  readonly accepted: number
  /** Events whose id the log already held (or that repeated an id earlier in the batch). */
  readonly duplicates: number
}

export interface IngestShape {
  /**
   * Validates, stores and folds a batch of raw (JSON-decoded) events; all or nothing. `texts[i]`,
   * when given, is the JSON text `batch[i]` was parsed from (an NDJSON line): it is stored as is
   * when it holds nothing but the event's fields, saving the re-encoding.
   */
  readonly ingest: (
    batch: ReadonlyArray<unknown>,
    texts?: ReadonlyArray<string>
  ) => Effect.Effect<IngestResult, ValidationFailed | Unavailable>
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
  /**
   * The seq of the last logged event folded into the market (0: none). The market changes only
   * together with it, in one synchronous step under `Market.writeLock`, so whoever holds that
   * lock sees the market exactly `fold(log[1..foldedSeq()])` (engine snapshots rely on it).
   */
  readonly foldedSeq: () => number
  /**
   * The market already holds `fold(log[1..seq])` (restored from a snapshot): catching up starts
   * after `seq`. Only before anything was folded.
   */
  readonly resumeAt: (seq: number) => Effect.Effect<void>
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

/** A launch accepted in a batch that is not folded yet: its event id and time (what `MarketEngine.check` needs of it). */
export type PendingLaunch = LaunchAhead

/** The key of the token a launch creates. */
const launchKeyOf = (event: MarketEvent): string | undefined =>
  event.type === "tokenLaunched" ? `${event.chain}:${Chain.canonicalAddress(event.chain, event.token)}` : undefined

/**
 * A batch decoded, not yet checked against the market: `events[i]` is the decoded event or
 * undefined when it did not decode (its problems are in `issues[i]`). Decoding needs no market
 * state, so it is done once, before the batch waits for admission, and the raw JSON values can be
 * dropped right after (they are most of what a batch in flight would otherwise keep alive).
 */
export interface DecodedBatch {
  readonly events: ReadonlyArray<MarketEvent | undefined>
  /** The JSON text to store for `events[i]` when it can be stored as it came, else undefined. */
  readonly bodies: ReadonlyArray<string | undefined> | undefined
  /** The decoding problems of each event that did not decode (sparse: only those). */
  readonly issues: ReadonlyMap<number, ReadonlyArray<FieldIssue>>
  /** Of those, the launches that name their token (chain and address readable): the token's key and the launch. */
  readonly refusedLaunches: ReadonlyMap<number, { readonly key: string; readonly launch: PendingLaunch }>
  /** Of those, the ones whose `id` is readable: the id (an event repeating it is another event). */
  readonly refusedIds: ReadonlyMap<number, string>
}

/**
 * Decodes a batch of raw (JSON-parsed) events. Each goes through the hand-written decoder for the
 * plain wire form first, and through the schema when that one declines (the schema then accepts
 * what the fast path left to it, or says what is wrong, with paths): `decodeMarketEventFast`
 * accepts a subset of what the schema accepts and gives the same value (property-tested), so the
 * result is the schema's.
 *
 * With `texts` (the JSON text of each raw event), `bodies[i]` is `texts[i]` when that text can be
 * stored as is (decoded on the fast path, nothing but the event's fields), else undefined.
 */
export const decodeBatch = (batch: ReadonlyArray<unknown>, texts?: ReadonlyArray<string>): DecodedBatch => {
  const events = new Array<MarketEvent | undefined>(batch.length)
  const bodies: Array<string | undefined> | undefined = texts === undefined ? undefined : new Array<string | undefined>(batch.length)
  const issues = new Map<number, Array<FieldIssue>>()
  const refusedLaunches = new Map<number, { readonly key: string; readonly launch: PendingLaunch }>()
  const refusedIds = new Map<number, string>()
  for (let i = 0; i < batch.length; i++) {
    const raw = batch[i]
    const fast = Events.decodeMarketEventFast(raw)
    if (fast !== undefined) {
      events[i] = fast
      if (bodies !== undefined) {
        const text = texts![i]
        bodies[i] = text !== undefined && Events.carriesOnlyEventFields(raw as object, fast) ? text : undefined
      }
      continue
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      // the schema's own answer, "Expected MarketEvent", says neither what came nor what may
      issues.set(i, [{ field: `events[${i}]`, message: `is ${kindOf(raw)}, not an event: an event is a JSON object with a "type", one of ${typeList}` }])
      continue
    }
    const typeIssue = typeIssueOf(raw)
    if (typeIssue !== undefined) {
      const id = idOf(raw)
      if (id !== undefined) refusedIds.set(i, id)
      issues.set(i, [{ field: `events[${i}].type`, message: withId(id, typeIssue) }])
      continue
    }
    const decoded = decodeEvent(raw, decodeOptions)
    if (Exit.isSuccess(decoded)) {
      events[i] = decoded.value
      continue
    }
    const id = idOf(raw)
    if (id !== undefined) refusedIds.set(i, id)
    const found: Array<FieldIssue> = []
    for (const reason of decoded.cause.reasons) {
      if (reason._tag !== "Fail") continue
      for (const entry of formatIssue(reason.error).issues) {
        found.push({ field: fieldOf(i, entry.path ?? []), message: withId(id, entry.message === "Missing key" ? "is required" : entry.message) })
      }
    }
    issues.set(i, found)
    const launch = refusedLaunchOf(raw)
    if (launch !== undefined) refusedLaunches.set(i, launch)
  }
  return { events, bodies, issues, refusedLaunches, refusedIds }
}

const knownTypes: ReadonlySet<unknown> = new Set(Events.marketEventTypes)
const typeList = Events.marketEventTypes.join(", ")

/** What a JSON value that is not an object is, for a message: "null", "an array", "a number", ... */
const kindOf = (raw: unknown): string => (raw === null ? "null" : Array.isArray(raw) ? "an array" : `a ${typeof raw}`)

/**
 * What is wrong with an event object's `type`, if anything: the schema's own answer for a union
 * ("Expected MarketEvent") names neither the field nor what it may be.
 */
const typeIssueOf = (raw: object): string | undefined => {
  const type = (raw as { type?: unknown }).type
  if (knownTypes.has(type)) return undefined
  return type === undefined ? `is required: one of ${typeList}` : `${JSON.stringify(type)} is not an event type: one of ${typeList}`
}

/** A raw `tokenLaunched` that did not decode but names its chain and token: its token's key. */
const refusedLaunchOf = (raw: unknown): { readonly key: string; readonly launch: PendingLaunch } | undefined => {
  if (typeof raw !== "object" || raw === null) return undefined
  const { chain, id, timestamp, token, type } = raw as { type?: unknown; chain?: unknown; token?: unknown; id?: unknown; timestamp?: unknown }
  if (type !== "tokenLaunched" || typeof chain !== "string" || !Chain.isChain(chain) || typeof token !== "string") return undefined
  // its time when readable (the events after it are checked against it), else none is refused for being dated before it
  const at = typeof timestamp === "number" && Number.isSafeInteger(timestamp) ? timestamp : -Infinity
  return { key: `${chain}:${Chain.canonicalAddress(chain, token)}`, launch: { id: typeof id === "string" ? id : "", timestamp: at } }
}

/**
 * Checks a decoded batch against the market as it is plus the batch's own earlier events (and
 * `launchedEarlier`: tokens launched by batches accepted before it, not folded yet). Returns the
 * events (and the bodies to store), or every problem found, decoding's included, in event order
 * (each on its `events[i].field`).
 */
export const checkBatch = (
  market: Market["Service"],
  decoded: DecodedBatch,
  launchedEarlier: ReadonlyMap<string, PendingLaunch> = new Map(),
  /** The service's clock: events dated more than `maxFutureMs` past it are refused. */
  now: number = Infinity
):
  | { readonly events: Array<MarketEvent>; readonly bodies: Array<string | undefined> | undefined }
  | { readonly issues: Array<FieldIssue> } =>
{
  const issues: Array<FieldIssue> = []
  const events: Array<MarketEvent> = []
  const bodies: Array<string | undefined> | undefined = decoded.bodies === undefined ? undefined : []
  const launchedInBatch = new Map<string, PendingLaunch>()
  // The first event of the batch under each id: a repeat must be the same event (a repeat is a
  // duplicate, which changes nothing; another event under a taken id is an indexer's mistake).
  const firstWithId = new Map<string, number>()
  // The launch of a token in a batch accepted before this one (first: it comes first in the log),
  // or earlier in this batch (a launch counts itself: the same id is no second launch).
  const launchAhead = (chain: Chain.Chain, address: string): PendingLaunch | undefined => {
    const key = `${chain}:${address}`
    return launchedEarlier.get(key) ?? launchedInBatch.get(key)
  }
  for (let i = 0; i < decoded.events.length; i++) {
    const event = decoded.events[i]
    if (event === undefined) {
      for (const issue of decoded.issues.get(i) ?? []) issues.push(issue)
      const refusedId = decoded.refusedIds.get(i)
      if (refusedId !== undefined && !firstWithId.has(refusedId)) firstWithId.set(refusedId, i)
      // A launch that did not decode still launches its token for the events after it: they are
      // refused for what is wrong with them, not once more as of an unknown token.
      const refused = decoded.refusedLaunches.get(i)
      if (refused !== undefined && !launchedInBatch.has(refused.key)) launchedInBatch.set(refused.key, refused.launch)
      continue
    }
    const earlier = firstWithId.get(event.id)
    if (earlier === undefined) firstWithId.set(event.id, i)
    else if (decoded.events[earlier] === undefined || !sameEvent(decoded.events[earlier], event)) {
      issues.push({
        field: `events[${i}].id`,
        message: withId(event.id, `is the id of events[${earlier}], a different event; an id names one event (a repeat must be the same event, and is then a duplicate)`)
      })
      continue
    }
    if (event.timestamp > now + maxFutureMs) {
      const ahead = Math.ceil((event.timestamp - now) / 1000)
      issues.push({
        field: `events[${i}].timestamp`,
        message: withId(event.id, `is ${ahead} s ahead of the service's clock; events may be dated at most ${maxFutureMs / 1000} s in the future (check the indexer's clock)`)
      })
      continue
    }
    // A launch counts for the events after it even when it is refused itself: they are then
    // refused for what is wrong with them, not once more for their token's launch.
    const launched = launchKeyOf(event)
    if (launched !== undefined && !launchedInBatch.has(launched)) launchedInBatch.set(launched, { id: event.id, timestamp: event.timestamp })
    const rejection = market.engine.check(event, launchAhead)
    if (rejection !== undefined) {
      issues.push({ field: refusedFieldPath(i, event, rejection), message: withId(event.id, rejectionMessage(rejection)) })
      continue
    }
    events.push(event)
    if (bodies !== undefined) bodies.push(decoded.bodies![i])
  }
  return issues.length > 0 ? { issues } : { events, bodies }
}

/**
 * The field a refusal of the engine's checks is about (`rejectionField`: "tokenAmount",
 * "poolAfter.bondingCurvePct", "token") when the event has that field, so a client can tell
 * refusals apart by field as it does the schema's; else the event itself (`events[i]`: "a swap's
 * USD value beyond …", or an "annotation" of the `annotations` list).
 */
const refusedFieldPath = (index: number, event: MarketEvent, rejection: Rejection): string => {
  const path = rejectionField(rejection)
  if (path === undefined) return `events[${index}]`
  let value: unknown = event
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return `events[${index}]`
    value = (value as Record<string, unknown>)[key]
  }
  return `events[${index}].${path}`
}

/**
 * The problems of a batch some of whose events could not even be read as JSON (an NDJSON line that
 * does not parse; `unreadable`: their positions, `values[i]` anything there): each of those ("is
 * not valid JSON") and what decoding finds in the others, in event order, so one answer lists
 * every problem it can. The market's checks are not run: the batch is refused whatever they say,
 * and what they would look for (a token's launch) may be on an unreadable line.
 */
export const unreadableBatchIssues = (values: ReadonlyArray<unknown>, unreadable: ReadonlySet<number>): Array<FieldIssue> => {
  const decoded = decodeBatch(values)
  const issues: Array<FieldIssue> = []
  for (let i = 0; i < values.length; i++) {
    if (unreadable.has(i)) issues.push({ field: `events[${i}]`, message: "is not valid JSON" })
    else for (const issue of decoded.issues.get(i) ?? []) issues.push(issue)
  }
  return issues
}

/** Whether two decoded events are the same event (their stored form, field for field). */
const sameEvent = (a: MarketEvent, b: MarketEvent): boolean => a === b || Events.marketEventJson(a) === Events.marketEventJson(b)

/**
 * Decodes and checks a batch against the market as it is plus the batch's own earlier events
 * (`decodeBatch`, then `checkBatch`). Returns the decoded events, or every problem found (each on
 * its `events[i].field`).
 */
export const validateBatch = (
  market: Market["Service"],
  batch: ReadonlyArray<unknown>,
  launchedEarlier: ReadonlyMap<string, PendingLaunch> = new Map(),
  texts?: ReadonlyArray<string>
):
  | { readonly events: Array<MarketEvent>; readonly bodies: Array<string | undefined> | undefined }
  | { readonly issues: Array<FieldIssue> } => checkBatch(market, decodeBatch(batch, texts), launchedEarlier)

/** A batch that passed admission: its events, and the texts to store for some of them. */
interface Admitted {
  readonly events: ReadonlyArray<MarketEvent>
  readonly bodies: ReadonlyArray<string | undefined> | undefined
  /**
   * Move the market to the service's clock with the fold (an indexer's batch may be hours old:
   * its tokens must not be told with windows ending at its last event). The simulator's batches
   * are the present already, and the market's clock follows the wall clock anyway (MarketClock).
   */
  readonly toClock?: boolean
}

/** A batch's place in the pipeline: the previous batch's steps it waits on, and its own. */
interface Ticket {
  readonly previousStored: Deferred.Deferred<boolean>
  readonly previousFolded: Deferred.Deferred<void>
  /** Completed with true once the batch's append committed, false when it failed or was skipped. */
  readonly stored: Deferred.Deferred<boolean>
  /** Completed once the batch is folded (or has nothing to fold), always after `previousFolded`. */
  readonly folded: Deferred.Deferred<void>
  readonly launches: ReadonlyArray<string>
}

const settled = <A>(value: A): Deferred.Deferred<A> => {
  const deferred = Deferred.makeUnsafe<A>()
  Deferred.doneUnsafe(deferred, Exit.succeed(value))
  return deferred
}

export const make = Effect.gen(function*() {
  const market = yield* Market
  const store = yield* EventStore
  const admission = yield* Semaphore.make(1)
  let foldedSeq = 0
  /** Set when an append failed: the log may hold events past `foldedSeq` the market lacks. */
  let mayBeBehind = true
  /** The last admitted batch's steps: the next admitted batch waits on them. */
  let lastStored = settled(true)
  let lastFolded = settled<void>(undefined)
  /** Tokens launched by admitted batches not folded yet (key: the launch's id, how many batches carry it). */
  const pendingLaunches = new Map<string, PendingLaunch & { count: number }>()

  /**
   * Folds the logged events past `foldedSeq` and below `below`, in log order; returns how many.
   * A chunk at a time, each in one step under the market's write lock (see `foldedSeq`).
   */
  const foldLog = (below: number): Effect.Effect<number, StoreUnavailable> =>
    Effect.suspend(() => {
      let folded = 0
      return store.replay(foldedSeq, replayBatchSize).pipe(
        Stream.takeWhile((chunk) => chunk.length > 0 && chunk[0]!.seq < below),
        Stream.runForEach((chunk) =>
          market.writeLock.withPermit(Effect.sync(() => {
            const events: Array<MarketEvent> = []
            let last = foldedSeq
            for (const stored of chunk) {
              if (stored.seq >= below) break
              events.push(stored.event)
              last = stored.seq
            }
            if (events.length === 0) return
            market.apply(events)
            foldedSeq = last
            folded += events.length
          }))
        ),
        Effect.map(() => folded)
      )
    })

  const catchUpNow: Effect.Effect<number, StoreUnavailable> = Effect.map(foldLog(Infinity), (folded) => {
    mayBeBehind = false
    return folded
  })

  /**
   * Under the admission permit, with no batch in flight: folds whatever the log holds that the
   * market lacks; the next batch then starts a fresh chain (the failed one it follows is settled).
   */
  const catchUpQuiet: Effect.Effect<number, StoreUnavailable> = Effect.andThen(
    Effect.suspend(() => Deferred.await(lastFolded)),
    Effect.tap(catchUpNow, () =>
      Effect.sync(() => {
        lastStored = settled(true)
      }))
  )

  /**
   * Under the admission permit, before validating: when an append may have failed, wait until the
   * batches in flight are done, then catch up with the log.
   */
  const syncWithLog: Effect.Effect<void, StoreUnavailable> = Effect.suspend(() => (mayBeBehind ? Effect.asVoid(catchUpQuiet) : Effect.void))

  /** Under the admission permit: gives a validated batch its place in the order. */
  const admit = (events: ReadonlyArray<MarketEvent>): Ticket => {
    const launches: Array<string> = []
    for (const event of events) {
      const key = launchKeyOf(event)
      if (key === undefined) continue
      launches.push(key)
      const pending = pendingLaunches.get(key)
      // the checks let a token's launch be pending under one id only (the same batch sent again)
      if (pending === undefined) pendingLaunches.set(key, { id: event.id, timestamp: event.timestamp, count: 1 })
      else pending.count++
    }
    const ticket: Ticket = {
      previousStored: lastStored,
      previousFolded: lastFolded,
      stored: Deferred.makeUnsafe<boolean>(),
      folded: Deferred.makeUnsafe<void>(),
      launches
    }
    lastStored = ticket.stored
    lastFolded = ticket.folded
    return ticket
  }

  const release = (ticket: Ticket): void => {
    for (const key of ticket.launches) {
      const pending = pendingLaunches.get(key)!
      if (--pending.count === 0) pendingLaunches.delete(key)
    }
  }

  const skipped = () => new StoreUnavailable({ message: "an earlier batch could not be stored; nothing of this one was" })

  /** Steps 2 and 3 for an admitted batch; runs uninterruptibly to the end whatever happens. */
  const storeThenFold = (ticket: Ticket, batch: Admitted): Effect.Effect<IngestResult, StoreUnavailable> =>
    Effect.gen(function*() {
      const previousStored = yield* Deferred.await(ticket.previousStored)
      const appended: Exit.Exit<AppendResult, StoreUnavailable> = previousStored
        ? yield* Effect.exit(store.append(batch.events, batch.bodies))
        : Exit.fail(skipped())
      if (Exit.isFailure(appended)) yield* fellBehind
      Deferred.doneUnsafe(ticket.stored, Exit.succeed(Exit.isSuccess(appended)))
      // Let the next batch send its append before this one folds: the database then works on it
      // while the market folds this one.
      yield* Effect.yieldNow
      yield* Deferred.await(ticket.previousFolded)
      const result = yield* appended
      if (result.accepted.length > 0 && result.firstSeq > foldedSeq + 1) {
        // The log holds seqs between the last one folded and this batch: usually none (a gap a
        // rolled-back insert left), or a batch whose append failed here but committed after all
        // (the store orders its writers, so it committed before this one). Folded first, in log order.
        const before = yield* Effect.exit(foldLog(result.firstSeq))
        if (Exit.isFailure(before)) {
          // this batch is stored but cannot be folded before what precedes it: not acknowledged;
          // the catch-up folds both, in order, and a resend finds duplicates
          yield* fellBehind
          return yield* Effect.failCause(before.cause)
        }
      }
      if (result.accepted.length > 0) {
        // Folded up to the service's clock before anyone hears of it: a batch of old events must
        // not show windows ending at its own last event ("trailing windows ending now").
        const toClock = batch.toClock === true ? yield* Clock.currentTimeMillis : undefined
        yield* market.writeLock.withPermit(Effect.sync(() => {
          market.apply(result.accepted, toClock)
          foldedSeq = result.lastSeq
        }))
      }
      return { accepted: result.accepted.length, duplicates: result.duplicates }
    }).pipe(
      // Whatever happened (a defect included), the next batch must not wait forever. `folded`
      // completes after `previousFolded` (awaited above on every path but a defect before it).
      Effect.onExit(() =>
        Effect.andThen(
          Deferred.await(ticket.previousFolded),
          Effect.sync(() => {
            release(ticket)
            Deferred.doneUnsafe(ticket.stored, Exit.succeed(false))
            Deferred.doneUnsafe(ticket.folded, Exit.void)
          })
        )
      ),
      Effect.uninterruptible
    )

  /**
   * Admits a batch (`check` validates it under the permit, or refuses it), then appends and folds
   * it. Uninterruptible from end to end, waiting for admission included: an admitted batch must
   * reach its fold, and waits here are bounded by the store's timeouts.
   */
  const submit = <E>(check: Effect.Effect<Admitted, E>): Effect.Effect<IngestResult, E | StoreUnavailable> =>
    Effect.uninterruptible(
      Effect.flatMap(
        admission.withPermit(Effect.flatMap(Effect.andThen(syncWithLog, check), (batch) => Effect.sync(() => ({ batch, ticket: admit(batch.events) })))),
        ({ batch, ticket }) => storeThenFold(ticket, batch)
      )
    )

  // Not "nothing was applied": a statement that timed out or a connection lost during COMMIT may
  // have stored the batch all the same (then folded by `catchUpAfterFailure`, and reported as
  // duplicates when sent again).
  const storeUnavailable = () =>
    new Unavailable({
      message: "The event store is unavailable; the batch is not acknowledged. Send it again with backoff: events of it that were stored after all are then reported as duplicates."
    })

  /**
   * After a failed append, a fiber of the service's own (one at a time) catches up with the log
   * once a second until it succeeds, even if no batch comes: a batch stored by an append that
   * failed on its way back is then folded and served, not held in the log unseen until the next
   * batch arrives (after such a 503 a token could otherwise stay unknown indefinitely).
   */
  let catchingUp = false
  const catchUpAfterFailure: Effect.Effect<void> = Effect.andThen(
    Effect.sleep(Duration.seconds(1)),
    Effect.suspend(() => {
      if (!mayBeBehind) {
        catchingUp = false
        return Effect.void
      }
      return admission.withPermit(Effect.suspend(() => (mayBeBehind ? catchUpQuiet : Effect.succeed(0)))).pipe(
        Effect.tap((folded) => (folded > 0 ? Effect.logInfo(`caught up with ${folded} logged events after a failed append`) : Effect.void)),
        Effect.ignore,
        Effect.andThen(Effect.suspend(() => catchUpAfterFailure))
      )
    })
  )
  const serviceScope = yield* Effect.scope
  /**
   * An append failed (or what precedes a stored batch could not be folded): the log may hold
   * events the market lacks, even a batch nobody was told of (a connection lost during COMMIT, a
   * statement that timed out but went on). The next admission catches up first, and so does
   * `catchUpAfterFailure` meanwhile.
   */
  const fellBehind = Effect.suspend(() => {
    mayBeBehind = true
    if (catchingUp) return Effect.void
    catchingUp = true
    return Effect.asVoid(Effect.forkIn(catchUpAfterFailure, serviceScope))
  })

  const ingest = (batch: ReadonlyArray<unknown>, texts?: ReadonlyArray<string>): Effect.Effect<IngestResult, ValidationFailed | Unavailable> => {
    if (batch.length > maxBatchSize) {
      return Effect.fail(new ValidationFailed({ issues: [{ field: "events", message: `at most ${maxBatchSize} events per request; split the batch` }] }))
    }
    // Decoded now, once (no market state needed; the effect may run more than once): from here on
    // the raw JSON values are not referenced, so they need not survive collections while the batch
    // waits, is appended and is folded. Checked against the market as the log has it plus the
    // batches ahead of it in the pipeline, under the admission permit.
    const decoded = decodeBatch(batch, texts)
    const check = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const validated = checkBatch(market, decoded, pendingLaunches, now)
      return "issues" in validated ? Effect.fail(new ValidationFailed({ issues: validated.issues })) : Effect.succeed<Admitted>({ ...validated, toClock: true })
    })
    return Effect.mapError(submit(check), (error) => (error instanceof StoreUnavailable ? storeUnavailable() : error))
  }

  return Ingest.of({
    ingest,
    publishTrusted: (events) => submit(Effect.succeed<Admitted>({ events, bodies: undefined })),
    catchUp: Effect.uninterruptible(admission.withPermit(catchUpQuiet)),
    foldedSeq: () => foldedSeq,
    resumeAt: (seq) =>
      Effect.sync(() => {
        if (foldedSeq !== 0) throw new Error(`resumeAt(${seq}) after folding up to seq ${foldedSeq}`)
        foldedSeq = seq
        mayBeBehind = true
      })
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
