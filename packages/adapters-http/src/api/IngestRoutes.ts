/**
 * The administrative ingest endpoint: `POST /admin/v1/events` with a JSON array of market events
 * (docs/ingest.md). Authenticated by the platform middleware with an operator key
 * (`PlatformOptions.admin`), not a customer key. Answers `{accepted, duplicates}`; an invalid
 * event refuses the whole batch (400 VALIDATION_ERROR, one detail per problem,
 * `events[i].field`); a store that cannot commit answers 503 so the indexer retries.
 */
import { Effect, type Layer } from "effect"
import { HttpRouter } from "effect/http"
import { Ingest } from "@spot/application"
import type { Unavailable, ValidationFailed } from "@spot/application"
import { ApiError } from "../ApiError.js"
import * as ApiRoute from "../ApiRoute.js"

export const ingestPath = "/admin/v1/events"

const notAnArray = ApiError.validation([{ field: "body", message: "must be a JSON array of market events" }])
const invalidJson = ApiError.validation([{ field: "body", message: "is not valid JSON" }])

export const routes: Layer.Layer<
  never,
  never,
  | HttpRouter.HttpRouter
  | HttpRouter.Request<"Requires", Ingest.Ingest>
  | HttpRouter.Request<"Error", ValidationFailed | Unavailable | ApiError>
> = HttpRouter.addAll([
  ApiRoute.post(ingestPath, {
    handler: ({ request }) =>
      Effect.gen(function*() {
        const body = yield* Effect.catch(request.json, () => Effect.fail(invalidJson))
        if (!Array.isArray(body)) return yield* Effect.fail(notAnArray)
        const ingest = yield* Ingest.Ingest
        const result = yield* ingest.ingest(body)
        return ApiRoute.preEncoded(JSON.stringify({ accepted: result.accepted, duplicates: result.duplicates }))
      })
  })
])
