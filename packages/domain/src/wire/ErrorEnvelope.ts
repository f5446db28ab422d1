/**
 * The error body (spec "Errors"): every error response body is exactly
 * `{error: {code, message, details?}}`; the stream's `error` frame carries the same inner object.
 */
import { Schema } from "effect"

/** Codes the service publishes (append-only). The wire field `code` stays an open string. */
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
  description: "details of VALIDATION_ERROR: one entry per invalid field"
})
export type ValidationErrorDetails = typeof ValidationErrorDetails.Type

export const ErrorBody = Schema.Struct({
  code: Schema.String.annotate({
    description:
      "Stable machine-readable code (see ErrorCode; open set); clients switch on it, never on message"
  }),
  message: Schema.String.annotate({
    description: "Human-readable: what happened, then what to do next if actionable"
  }),
  details: Schema.optionalKey(
    Schema.Unknown.annotate({ description: "Shape fixed per code; for VALIDATION_ERROR an array of {field, message}" })
  )
}).annotate({ identifier: "ErrorBody", description: "What went wrong" })
export type ErrorBody = typeof ErrorBody.Type

export const ErrorEnvelope = Schema.Struct({
  error: ErrorBody
}).annotate({ identifier: "ErrorEnvelope", description: "Body of every error response" })
export type ErrorEnvelope = typeof ErrorEnvelope.Type
