/**
 * Response bodies. Objects that many readers share — a token, a trade — are encoded with their
 * wire schema once per change and the JSON text is kept here, in a WeakMap keyed by the object
 * (a token's checked against its `wireVersion`); pages are assembled from those texts.
 * Everything else is encoded per response with its schema.
 *
 * Pages (trades, discovery) are assembled as bytes: each shared object's JSON is also kept as a
 * Buffer (converted once per change) and a page is one `Buffer.concat` of those and the small
 * framing between them. Assembled as a string, a page was copied three more times per response
 * (the join, the UTF-8 length scan for Content-Length, the UTF-8 encoding when written) and a
 * discovery page of 200 KB allocated each copy in V8's large-object space; a Buffer body is
 * handed to the socket as it is.
 *
 * The encoders are `Schema.encodeSync` of the wire schema behind a check compiled from that
 * schema (CompiledCheck): the wire schemas transform nothing, so an object the check proves is
 * its own encoding and is stringified as it is, at less than half the cost of encodeSync's walk
 * and copy; anything else is encoded (or refused, with the schema's error) by encodeSync itself.
 */
import type { TokenBook, TradeRecord } from "@spot/domain"
import { Candle, CandlesResponse, Position, PositionsPage, Token, Trade } from "@spot/domain"
import type { DiscoveryQueries, TradeQueries } from "@spot/application"
import * as CompiledCheck from "../CompiledCheck.js"

const encodeToken = CompiledCheck.encoder(Token)
const encodeTrade = CompiledCheck.encoder(Trade)
const encodeCandle = CompiledCheck.encoder(Candle)
const encodePosition = CompiledCheck.encoder(Position)
export const encodeCandles = CompiledCheck.encoder(CandlesResponse)
export const encodePositionsPage = CompiledCheck.encoder(PositionsPage)

/** A token's JSON as of one `wireVersion`, and its UTF-8 bytes once a reader wanted them. */
interface TokenEncoding {
  readonly version: number
  readonly json: string
  bytes: Buffer | undefined
}

/** Each token's latest encoding, kept here beside the token (the domain object carries only its version). */
const tokenEncodings = new WeakMap<TokenBook, TokenEncoding>()

const tokenEncoding = (token: TokenBook): TokenEncoding => {
  const version = token.wireVersion
  const known = tokenEncodings.get(token)
  if (known !== undefined && known.version === version) return known
  const encoding: TokenEncoding = { version, json: JSON.stringify(encodeToken(token.toWire())), bytes: undefined }
  tokenEncodings.set(token, encoding)
  return encoding
}

/** The token object's JSON, encoded once per change of the token. */
export const tokenJson = (token: TokenBook): string => tokenEncoding(token).json

/** The token's JSON as UTF-8 bytes, converted once per change of the token. */
export const tokenBytes = (token: TokenBook): Buffer => {
  const encoding = tokenEncoding(token)
  return (encoding.bytes ??= Buffer.from(encoding.json, "utf8"))
}

/** A trade's REST JSON, and its UTF-8 bytes once a page wanted them (a record never changes). */
interface TradeEncoding {
  readonly json: string
  bytes: Buffer | undefined
}

/** Each trade's encoding, kept here beside the record for as long as the record lives. */
const tradeEncodings = new WeakMap<TradeRecord, TradeEncoding>()

const tradeEncoding = (record: TradeRecord): TradeEncoding => {
  let encoding = tradeEncodings.get(record)
  if (encoding === undefined) {
    encoding = { json: JSON.stringify(encodeTrade(record.trade)), bytes: undefined }
    tradeEncodings.set(record, encoding)
  }
  return encoding
}

/** The trade object's JSON (REST form), encoded once per record. */
export const tradeJson = (record: TradeRecord): string => tradeEncoding(record).json

/** The trade's REST JSON if a reader already encoded it (the stream cuts its other forms from it), else undefined. */
export const encodedTradeJson = (record: TradeRecord): string | undefined => tradeEncodings.get(record)?.json

/**
 * A trade object's JSON, encoded on each call and kept nowhere: the stream's forms of a trade
 * (members left out) that no REST reader encoded.
 */
export const tradeObjectJson = (trade: Trade): string => JSON.stringify(encodeTrade(trade))

/** A candle's JSON, encoded on each call and kept nowhere (the stream encodes each pushed candle once). */
export const candleJson = (candle: Candle): string => JSON.stringify(encodeCandle(candle))

/** A position's JSON, encoded on each call and kept nowhere (the stream encodes each changed position once). */
export const positionJson = (position: Position): string => JSON.stringify(encodePosition(position))

/** Drops the trade's kept encoding, so the next reader encodes it anew (benchmarks and tests of a first encoding). */
export const forgetTradeEncoding = (record: TradeRecord): void => {
  tradeEncodings.delete(record)
}

/**
 * The trade's JSON (REST form) as UTF-8 bytes, converted once per record. Pages hand out the same
 * record for a trade while the engine keeps it among the records it has built (ReadRecords), so a
 * hot page encodes nothing.
 */
export const tradeBytes = (record: TradeRecord): Uint8Array => {
  const encoding = tradeEncoding(record)
  return (encoding.bytes ??= Buffer.from(encoding.json, "utf8"))
}

/**
 * A body assembled from cached byte pieces and the text between them (framing, ranks, cursors):
 * one allocation of the exact size at the end, each piece copied into it once.
 */
class BodyBytes {
  private readonly parts: Array<string | Uint8Array> = []
  private length = 0
  private pending = ""

  text(text: string): this {
    this.pending += text
    return this
  }

  bytes(bytes: Uint8Array): this {
    this.flush()
    this.parts.push(bytes)
    this.length += bytes.length
    return this
  }

  done(): Uint8Array {
    this.flush()
    const out = Buffer.allocUnsafe(this.length)
    let offset = 0
    for (const part of this.parts) {
      if (typeof part === "string") {
        offset += out.write(part, offset, "utf8")
      } else {
        out.set(part, offset)
        offset += part.length
      }
    }
    return out
  }

  private flush(): void {
    if (this.pending.length === 0) return
    this.parts.push(this.pending)
    this.length += Buffer.byteLength(this.pending, "utf8")
    this.pending = ""
  }
}

/** `{"trades":[...],"nextCursor":...,"hasMore":...}` */
export const tradePageBytes = (page: TradeQueries.TradeRecordPage): Uint8Array => {
  const body = new BodyBytes().text(`{"trades":[`)
  for (let i = 0; i < page.records.length; i++) {
    if (i > 0) body.text(",")
    body.bytes(tradeBytes(page.records[i]!))
  }
  return body.text(`],"nextCursor":${JSON.stringify(page.nextCursor)},"hasMore":${page.hasMore}}`).done()
}

/** `{"columns":[{"column":...,"deltas":[{"chain","address","rank","data"}...]}...]}` */
export const discoveryBytes = (columns: ReadonlyArray<DiscoveryQueries.RankedColumn>): Uint8Array => {
  const body = new BodyBytes().text(`{"columns":[`)
  columns.forEach((column, c) => {
    body.text(`${c === 0 ? "" : ","}{"column":"${column.column}","deltas":[`)
    column.tokens.forEach((token, i) => {
      body.text(`${i === 0 ? "" : ","}{"chain":"${token.chain}","address":${JSON.stringify(token.address)},"rank":${i + 1},"data":`)
      body.bytes(tokenBytes(token)).text("}")
    })
    body.text("]}")
  })
  return body.text("]}").done()
}
