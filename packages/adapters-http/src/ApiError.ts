/**
 * An error the HTTP layer answers with as it is: status, code, message and optional details and
 * headers. Handlers usually fail with the application's own errors (ValidationFailed,
 * UnsupportedChain, NotFound, Unavailable) and let ErrorResponses map them; `ApiError` is for
 * what only HTTP knows (a bad query string, a malformed body, a refused credential).
 */
import { Data } from "effect"
import type { ErrorCode, FieldError } from "@spot/domain"

export class ApiError extends Data.TaggedError("ApiError")<{
  readonly status: number
  readonly code: ErrorCode
  readonly message: string
  readonly details?: unknown
  /** Headers of this refusal itself (e.g. `connection: close`). */
  readonly headers?: Readonly<Record<string, string>>
}> {
  /** 400 VALIDATION_ERROR naming every bad field. */
  static validation(fieldErrors: ReadonlyArray<FieldError>): ApiError {
    return new ApiError({
      status: 400,
      code: "VALIDATION_ERROR",
      // a field with an empty name (a query's `?=x`) is shown quoted, not as nothing
      message: `Invalid request: ${fieldErrors.map((e) => (e.field === "" ? '""' : e.field)).join(", ")}. Fix the listed fields and retry.`,
      details: fieldErrors
    })
  }

  /**
   * 400 VALIDATION_ERROR on field `body` for a body over `maxBytes`, closing the connection so the
   * rest of the upload is not read (RequestBody).
   */
  static bodyTooLarge(maxBytes: number, advice = "Send a smaller body."): ApiError {
    return new ApiError({
      status: 400,
      code: "VALIDATION_ERROR",
      message: `Request body larger than ${maxBytes} bytes, the most this endpoint accepts. ${advice}`,
      details: [{ field: "body", message: `is larger than ${maxBytes} bytes` }],
      headers: { connection: "close" }
    })
  }

  /**
   * A compressed body (`Content-Encoding` other than `identity`): refused before it is read, and
   * the connection closed. Read as it is, a gzip body would be refused as "not valid UTF-8".
   */
  static bodyEncoded(encoding: string): ApiError {
    return new ApiError({
      status: 400,
      code: "VALIDATION_ERROR",
      message: `Request body sent with Content-Encoding ${JSON.stringify(encoding)}, which this endpoint does not decode. Send the body uncompressed (no Content-Encoding header).`,
      details: [{ field: "body", message: `is encoded (${encoding}); send it uncompressed` }],
      headers: { connection: "close" }
    })
  }

  /** A body that did not arrive whole within `maxSeconds`: refused, and the connection closed (the rest is not waited for). */
  static bodyTooSlow(maxSeconds: number): ApiError {
    return new ApiError({
      status: 400,
      code: "VALIDATION_ERROR",
      message: `Request body not received within ${maxSeconds} s. Send the whole body at once, or a smaller one.`,
      details: [{ field: "body", message: `did not arrive within ${maxSeconds} s` }],
      headers: { connection: "close" }
    })
  }
}
