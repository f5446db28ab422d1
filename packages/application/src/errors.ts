/**
 * The use cases' typed failures. One place in the HTTP and stream adapters turns each into the
 * wire envelope; nothing here knows about statuses.
 */
import { Data } from "effect"

export interface FieldIssue {
  readonly field: string
  readonly message: string
}

/** Invalid parameter, body, cursor or filter; every problem found, each on its field. */
export class ValidationFailed extends Data.TaggedError("ValidationFailed")<{
  readonly issues: ReadonlyArray<FieldIssue>
}> {}

/** A chain slug that is not served. */
export class UnsupportedChain extends Data.TaggedError("UnsupportedChain")<{
  readonly field: string
  readonly value: string
}> {}

/** The named object does not exist. */
export class NotFound extends Data.TaggedError("NotFound")<{
  readonly message: string
}> {}

/** A dependency cannot answer right now; retry with backoff. */
export class Unavailable extends Data.TaggedError("Unavailable")<{
  readonly message: string
}> {}

/** What a read can fail with (`Unavailable`: a page reaching into the trade archive while it is down). */
export type ReadError = ValidationFailed | UnsupportedChain | NotFound | Unavailable
