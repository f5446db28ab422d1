/**
 * Port: page cursors sealed and read back under the server's cursor secret (spec "Cursor
 * pagination rules"; docs/cursors.md). The layout and its checks are the domain's `Cursor`; an
 * implementation brings the secret and the cryptography.
 *
 * The methods are synchronous: a cursor is sealed or read in microseconds, inside a request's
 * parameter checks, and needs nothing else.
 */
import { Context } from "effect"
import type { Cursor } from "@spot/domain"

export interface CursorCodecShape {
  /** The cursor text for `position` in the read described by `binding`. */
  readonly encode: (binding: string, position: Cursor.CursorPosition) => string
  /** Reads a cursor text: `Ok` with its position, `Unreadable`, or `OtherRead` (made for another binding). */
  readonly decode: (binding: string, text: string) => Cursor.DecodedCursor
}

export class CursorCodec extends Context.Service<CursorCodec, CursorCodecShape>()("@spot/application/CursorCodec") {}
