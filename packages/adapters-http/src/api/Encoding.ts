/**
 * Response bodies. Objects that many readers share — a token, a trade — are encoded with their
 * wire schema once per change and the JSON text is cached on the object; pages are assembled
 * from those texts. Everything else is encoded per response with its schema.
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
import { CandlesResponse, CompiledCheck, PositionsPage, Token, Trade } from "@spot/domain"
import type { DiscoveryQueries, TradeQueries } from "@spot/application"

const encodeToken = CompiledCheck.encoder(Token)
const encodeTrade = CompiledCheck.encoder(Trade)
export const encodeCandles = CompiledCheck.encoder(CandlesResponse)
export const encodePositionsPage = CompiledCheck.encoder(PositionsPage)

/** The token object's JSON, encoded once per change of the token. */
export const tokenJson = (token: TokenBook): string => {
  if (token.encoded === undefined) token.encoded = JSON.stringify(encodeToken(token.toWire()))
  return token.encoded
}

/** The trade object's JSON (REST form), encoded once. */
export const tradeJson = (record: TradeRecord): string => {
  if (record.json === undefined) record.json = JSON.stringify(encodeTrade(record.trade))
  return record.json
}

const tokenBytesCache = new WeakMap<TokenBook, { readonly json: string; readonly bytes: Buffer }>()

/** The token's JSON as UTF-8 bytes, converted once per change of the token. */
export const tokenBytes = (token: TokenBook): Buffer => {
  const json = tokenJson(token)
  const cached = tokenBytesCache.get(token)
  if (cached !== undefined && cached.json === json) return cached.bytes
  const bytes = Buffer.from(json, "utf8")
  tokenBytesCache.set(token, { json, bytes })
  return bytes
}

/**
 * The trade's JSON (REST form) as UTF-8 bytes, converted once per record. Pages hand out the same
 * record for a trade while the engine keeps it among the records it has built (ReadRecords), so a
 * hot page encodes nothing.
 */
export const tradeBytes = (record: TradeRecord): Uint8Array => (record.bytes ??= Buffer.from(tradeJson(record), "utf8"))

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
