/**
 * The administrative ingest endpoint: `POST /admin/v1/events` with a JSON array of market events,
 * or NDJSON (one event per line, `Content-Type: application/x-ndjson`) (docs/ingest.md).
 * Authenticated by the platform middleware with an operator key (`PlatformOptions.admin`), not a
 * customer key. Answers `{accepted, duplicates}`; an invalid event refuses the whole batch (400
 * VALIDATION_ERROR, one detail per problem, `events[i].field`); a store that cannot commit answers
 * 503 so the indexer retries.
 *
 * NDJSON also saves the service work: a line that holds nothing but its event's fields is stored
 * as sent, without re-encoding it.
 */
import { Effect, type Layer } from "effect"
import { HttpRouter } from "effect/http"
import { Ingest } from "@spot/application"
import type { Unavailable, ValidationFailed } from "@spot/application"
import { ApiError } from "../ApiError.js"
import * as ApiRoute from "../ApiRoute.js"
import * as RequestBody from "../RequestBody.js"

export const ingestPath = "/admin/v1/events"

const notAnArray = ApiError.validation([{ field: "body", message: "must be a JSON array of market events" }])

/**
 * The largest ingest body: 64 MiB, several times the largest batch (10,000 events of a few hundred
 * bytes to a few KB each); past it the batch is refused whole, as 400 on field `body` (RequestBody).
 */
export const INGEST_MAX_BODY_BYTES = 64 * 1_048_576
/** How long an ingest body may take to arrive whole (RequestBody: refused past it, 400 on field `body`). */
export const INGEST_MAX_BODY_SECONDS = 120

/** True for `application/x-ndjson` (and its aliases `application/jsonl`, `application/ndjson`). */
export const isNdjson = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false
  const type = contentType.split(";", 1)[0]!.trim().toLowerCase()
  return type === "application/x-ndjson" || type === "application/ndjson" || type === "application/jsonl" || type === "application/x-jsonlines"
}

/**
 * NDJSON: one JSON value per line; blank lines (a trailing newline included) are skipped, a `\r`
 * before the newline is dropped. Returns each value with its line's text, and the positions of
 * the lines that do not parse (counting events, not blank lines; their value and text are
 * undefined).
 */
export const parseNdjson = (
  body: string
): { readonly events: Array<unknown>; readonly texts: Array<string>; readonly unreadable: ReadonlySet<number> } => {
  const events: Array<unknown> = []
  const texts: Array<string> = []
  const unreadable = new Set<number>()
  let start = 0
  while (start < body.length) {
    let end = body.indexOf("\n", start)
    if (end === -1) end = body.length
    const lineEnd = end > start && body.charCodeAt(end - 1) === 13 ? end - 1 : end
    const line = body.slice(start, lineEnd)
    start = end + 1
    if (line.trim().length === 0) continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      unreadable.add(events.length)
      value = undefined
    }
    events.push(value)
    texts.push(line)
  }
  return { events, texts, unreadable }
}

/**
 * An NDJSON body parsed and handed to `ingest`; with a line that does not parse, refused with that
 * line and what is wrong with the others (`Ingest.unreadableBatchIssues`).
 */
const ingestNdjson = (ingest: Ingest.IngestShape, text: string): Effect.Effect<Ingest.IngestResult, ValidationFailed | Unavailable | ApiError> => {
  const parsed = parseNdjson(text)
  return parsed.unreadable.size > 0
    ? Effect.fail(ApiError.validation(Ingest.unreadableBatchIssues(parsed.events, parsed.unreadable)))
    : ingest.ingest(parsed.events, parsed.texts)
}

/** The ingest route with a body limit of `maxBodyBytes` (tests use small ones). */
export const routesWith = (options: { readonly maxBodyBytes?: number } = {}): Layer.Layer<
  never,
  never,
  | HttpRouter.HttpRouter
  | HttpRouter.Request<"Requires", Ingest.Ingest>
  | HttpRouter.Request<"Error", ValidationFailed | Unavailable | ApiError>
> => {
  const limit: RequestBody.Limit = {
    maxBytes: options.maxBodyBytes ?? INGEST_MAX_BODY_BYTES,
    // 64 MiB at 1 MB/s, with room: an indexer far from the service on a slow link
    maxSeconds: INGEST_MAX_BODY_SECONDS,
    advice: "Split the batch into smaller requests."
  }
  return HttpRouter.addAll([
    ApiRoute.post(ingestPath, {
      handler: ({ request }) =>
        Effect.gen(function*() {
          const ingest = yield* Ingest.Ingest
          // The parsed values are handed to `ingest` without this generator keeping them: ingest
          // decodes them at once and drops them, so they need not survive while the batch waits, is
          // appended and is folded.
          const result: Ingest.IngestResult = isNdjson(request.headers["content-type"])
            ? yield* Effect.flatMap(RequestBody.text(request, limit), (text) => ingestNdjson(ingest, text))
            : yield* Effect.flatMap(
              RequestBody.json(request, limit),
              (body): Effect.Effect<Ingest.IngestResult, ValidationFailed | Unavailable | ApiError> =>
                Array.isArray(body) ? ingest.ingest(body) : Effect.fail(notAnArray)
            )
          return ApiRoute.preEncoded(JSON.stringify({ accepted: result.accepted, duplicates: result.duplicates }))
        })
    })
  ])
}

/** The ingest route with its default body limit (INGEST_MAX_BODY_BYTES). */
export const routes = routesWith()
