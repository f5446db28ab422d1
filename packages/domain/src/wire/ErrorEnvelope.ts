/**
 * The error body (spec "Errors"): every error response body is exactly
 * `{error: {code, message, details?}}`; the stream's `error` frame carries the same inner object,
 * whose `details` can also be the subscription cap (`StreamErrorBody`).
 */
import { Schema } from "effect"
import { Count } from "./Common.js"

/**
 * Codes the service publishes (append-only: a published code is never renamed or removed). The
 * server sends no other code; a client meeting one it does not know falls back on the HTTP status.
 */
export const errorCodes = [
  "UNAUTHORIZED",
  "VALIDATION_ERROR",
  "UNSUPPORTED_CHAIN",
  "RATE_LIMITED",
  "INTERNAL_ERROR",
  "SERVICE_UNAVAILABLE",
  "FORBIDDEN",
  "NOT_FOUND",
  "CREDITS_EXHAUSTED"
] as const

export const ErrorCode = Schema.Literals(errorCodes).annotate({
  identifier: "ErrorCode",
  description:
    "Stable machine-readable error code; append-only: a client meeting an unknown code falls back on the HTTP status"
})
export type ErrorCode = typeof ErrorCode.Type

/** HTTP status per code, where the spec gives one (FORBIDDEN, NOT_FOUND, CREDITS_EXHAUSTED: not shown). */
export const errorCodeStatus = {
  UNAUTHORIZED: 401,
  VALIDATION_ERROR: 400,
  UNSUPPORTED_CHAIN: 400,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503
} as const satisfies { readonly [K in ErrorCode]?: number }

/** Element of `details` for `VALIDATION_ERROR`. */
export const FieldError = Schema.Struct({
  field: Schema.String.annotate({ description: "Path of the offending field or parameter" }),
  message: Schema.String
}).annotate({ identifier: "FieldError", description: "One invalid field and why" })
export type FieldError = typeof FieldError.Type

/** `details` of a `VALIDATION_ERROR`. */
export const ValidationErrorDetails = Schema.Array(FieldError).annotate({
  identifier: "ValidationErrorDetails",
  description: "details of VALIDATION_ERROR and UNSUPPORTED_CHAIN: one entry per invalid field"
})
export type ValidationErrorDetails = typeof ValidationErrorDetails.Type

/** `details` of a stream `RATE_LIMITED` error frame refusing a subscribe over the per-connection cap. */
export const SubscriptionLimitDetails = Schema.Struct({
  limit: Count.annotateKey({ description: "Subscriptions one connection may hold" })
}).annotate({
  identifier: "SubscriptionLimitDetails",
  description: "details of the stream's RATE_LIMITED error frame refusing a subscribe: the per-connection cap"
})
export type SubscriptionLimitDetails = typeof SubscriptionLimitDetails.Type

/**
 * The wire field `code`: one of the published codes (the document lists them, `ErrorCode`) or any
 * later one. Codes are append-only and a client meeting an unknown code falls back on the HTTP
 * status (spec), so a decoder built from this schema (or from the document) must accept a code
 * added after it was made. The server itself sends only `ErrorCode`s (`ApiError.code` is typed so).
 */
const errorCodeField = Schema.Union([ErrorCode, Schema.String]).annotateKey({
  description: "Stable machine-readable code, one of ErrorCode today (append-only: an unknown code falls back on the HTTP status); clients switch on it, never on message"
})

const errorMessageField = Schema.String.annotate({
  description: "Human-readable: what happened, then what to do next if actionable"
})

/** The inner object of a REST error body. */
export const ErrorBody = Schema.Struct({
  code: errorCodeField,
  message: errorMessageField,
  details: Schema.optionalKey(ValidationErrorDetails).annotateKey({
    description:
      "Sent with VALIDATION_ERROR and UNSUPPORTED_CHAIN: one {field, message} per offending field or parameter; absent with every other code"
  })
}).annotate({ identifier: "ErrorBody", description: "What went wrong" })
export type ErrorBody = typeof ErrorBody.Type

/** The inner object of the stream's `error` frame: as {@link ErrorBody}, plus the subscription cap. */
export const StreamErrorBody = Schema.Struct({
  code: errorCodeField,
  message: errorMessageField,
  details: Schema.optionalKey(Schema.Union([ValidationErrorDetails, SubscriptionLimitDetails])).annotateKey({
    description:
      "VALIDATION_ERROR and UNSUPPORTED_CHAIN: one {field, message} per offending field; RATE_LIMITED refusing a subscribe: {limit}; absent otherwise"
  })
}).annotate({ identifier: "StreamErrorBody", description: "What went wrong with a client frame" })
export type StreamErrorBody = typeof StreamErrorBody.Type

export const ErrorEnvelope = Schema.Struct({
  error: ErrorBody
}).annotate({ identifier: "ErrorEnvelope", description: "Body of every error response" })
export type ErrorEnvelope = typeof ErrorEnvelope.Type
