/**
 * Response bodies. Objects that many readers share — a token, a trade — are encoded with their
 * wire schema once per change and the JSON text is cached on the object; pages are assembled
 * from those texts. Everything else is encoded per response with its schema.
 */
import { Schema } from "effect"
import type { TokenBook, TradeRecord } from "@spot/domain"
import { CandlesResponse, PositionsPage, Token, Trade } from "@spot/domain"
import type { DiscoveryQueries, TradeQueries } from "@spot/application"

const encodeToken = Schema.encodeSync(Token)
const encodeTrade = Schema.encodeSync(Trade)
export const encodeCandles = Schema.encodeSync(CandlesResponse)
export const encodePositionsPage = Schema.encodeSync(PositionsPage)

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

export const tradePageJson = (page: TradeQueries.TradeRecordPage): string => {
  let trades = ""
  for (let i = 0; i < page.records.length; i++) trades += (i === 0 ? "" : ",") + tradeJson(page.records[i]!)
  return `{"trades":[${trades}],"nextCursor":${JSON.stringify(page.nextCursor)},"hasMore":${page.hasMore}}`
}

export const discoveryJson = (columns: ReadonlyArray<DiscoveryQueries.RankedColumn>): string => {
  const parts: Array<string> = []
  for (const column of columns) {
    const rows: Array<string> = []
    column.tokens.forEach((token, i) =>
      rows.push(`{"chain":"${token.chain}","address":${JSON.stringify(token.address)},"rank":${i + 1},"data":${tokenJson(token)}}`)
    )
    parts.push(`{"column":"${column.column}","deltas":[${rows.join(",")}]}`)
  }
  return `{"columns":[${parts.join(",")}]}`
}
