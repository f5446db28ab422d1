/**
 * The served /openapi.json and the server agree: every query parameter documented with a type,
 * allowed values, a pattern or bounds is refused by the server (400 VALIDATION_ERROR on that
 * parameter, with the use case's own message) exactly when the document refuses the value; the
 * discovery body's integers alike. The document itself is checked against the spec in
 * packages/adapters-http/test/OpenApiDocument.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { ReadApi } from "./support/ReadApi.js"
import { simulatedMarket, startReadApi } from "./support/ReadApi.js"

type Json = Record<string, any>

/** A Solana-shaped address (base58, 32-44 characters) the market does not hold: reads of it are empty, not refused. */
const solanaAddress = "So11111111111111111111111111111111111111112"

/** A request each read answers with 200, to which one parameter at a time is added. */
const baseRequests: Record<string, string> = {
  "/v1/tokens/{chain}/{address}/ohlcv": `/v1/tokens/solana/${solanaAddress}/ohlcv?`,
  "/v1/tokens/{chain}/{address}/trades": `/v1/tokens/solana/${solanaAddress}/trades?`,
  "/v1/trades": "/v1/trades?identity=kol&",
  "/v1/positions": `/v1/positions?wallets=${solanaAddress}&`
}

/** Whether a query value satisfies the parameter's documented schema (the keywords the document uses). */
const documentAccepts = (schema: Json, value: string): boolean => {
  if (Array.isArray(schema.enum)) return schema.enum.includes(value)
  switch (schema.type) {
    case "boolean":
      return value === "true" || value === "false"
    case "integer": {
      if (!/^-?\d+$/.test(value)) return false
      const n = Number(value)
      return (schema.minimum === undefined || n >= schema.minimum) && (schema.maximum === undefined || n <= schema.maximum)
    }
    case "string":
      return schema.pattern === undefined || new RegExp(schema.pattern).test(value)
    default:
      throw new Error(`no reading of ${JSON.stringify(schema)}`)
  }
}

/** Values to try on a parameter: its own allowed words and bounds, their neighbours, and values of the wrong kind. */
const candidates = (schema: Json): Array<string> => {
  const values = ["", "bogus", "true", "false", "yes", "1", "0", "-1", "1.5", "1e3", "20", " 20", "20 ", "1000", "99999999999999999999"]
  values.push("value:desc", "pnlPct:asc", "closedAt:desc", "value:up", "hype:asc", "value", "value:asc:x")
  if (Array.isArray(schema.enum)) values.push(...schema.enum, `${schema.enum[0]}x`, String(schema.enum[0]).toUpperCase())
  for (const bound of [schema.minimum, schema.maximum]) {
    if (typeof bound === "number") values.push(String(bound - 1), String(bound), String(bound + 1))
  }
  return [...new Set(values)]
}

describe("/openapi.json and the server agree", () => {
  let api: ReadApi
  let document: Json
  beforeAll(async () => {
    api = await startReadApi({ market: simulatedMarket({ minutes: 1, seed: 5, tradesPerSecond: 10, launchesPerMinute: 10 }).market })
    document = (await api.get("/openapi.json", {})).body
  })
  afterAll(() => api.close())

  it("refuses a typed query parameter's value exactly when the document does, naming the parameter", async () => {
    let typed = 0
    for (const [path, base] of Object.entries(baseRequests)) {
      expect((await api.get(base.slice(0, -1))).status, base).toBe(200)
      const parameters = (document.paths[path].get.parameters as Array<Json>).filter((p) => p.in === "query")
      for (const { name, schema } of parameters) {
        const plainText = schema.type === "string" && schema.enum === undefined && schema.pattern === undefined
        if (plainText) continue
        typed++
        // A parameter the base request carries (identity) is replaced, not sent twice.
        const request = base.replace(new RegExp(`(?<=[?&])${name}=[^&]*&`), "")
        for (const value of candidates(schema)) {
          const reply = await api.get(`${request}${name}=${encodeURIComponent(value)}`)
          const where = `${path} ?${name}=${JSON.stringify(value)}`
          if (documentAccepts(schema, value)) {
            expect(reply.status, `${where}: ${reply.text.slice(0, 300)}`).toBe(200)
          } else {
            expect(reply.status, where).toBe(400)
            expect(reply.body.error.code, where).toBe("VALIDATION_ERROR")
            const messages = (reply.body.error.details as Array<{ field: string; message: string }>).filter((d) => d.field === name)
            expect(messages.length, where).toBeGreaterThan(0)
            // The use case's own message, naming the parameter (not the schema's "Expected ...").
            expect(messages[0]!.message, where).toContain(name)
          }
        }
      }
    }
    // identity, limit (x3), lifecycle, the three switches, sort, timeframe, metric, denomination, countBack, from, to
    expect(typed).toBe(15)
  })

  it("keeps the use case's messages for the documented types", async () => {
    const positions = baseRequests["/v1/positions"]!
    const details = async (path: string) => (await api.get(path)).body.error.details
    expect(await details(`${positions}hideDust=yes`)).toEqual([{ field: "hideDust", message: "hideDust must be true or false" }])
    expect(await details(`${positions}limit=ten`)).toEqual([
      { field: "limit", message: "limit must be a whole number (values outside 1-100 are clamped)" }
    ])
    expect(await details(`${baseRequests["/v1/tokens/{chain}/{address}/ohlcv"]}countBack=1.5`)).toEqual([
      { field: "countBack", message: "countBack must be a whole number" }
    ])
  })

  it("refuses a discovery integer exactly when the document does", async () => {
    const schemas = document.components.schemas
    expect(schemas.ColumnConfig.properties.limit.type).toBe("integer")
    expect(schemas.CountBound).toMatchObject({ type: "integer", minimum: 0 })
    const chains = ["solana", "base", "bsc", "robinhood", "arc"]
    // Raw JSON literals: 1e400 parses as Infinity, an integer as written.
    for (const literal of ["0", "-5", "20", "1000", "1e30", "1e400", "2.0", "2.5", "\"20\"", "true", "null"]) {
      const isInteger = /^-?\d+(\.0+)?$|^-?\d+e\d+$/.test(literal)
      const limit = await api.post("/v1/discovery", `{"chains":${JSON.stringify(chains)},"newPairs":{"limit":${literal}}}`)
      expect(limit.status, `limit ${literal}`).toBe(isInteger ? 200 : 400)
      const bound = await api.post(
        "/v1/discovery",
        `{"chains":${JSON.stringify(chains)},"newPairs":{"filters":{"holderCount":{"min":${literal}},"lastActivityMinutes":${literal}}}}`
      )
      expect(bound.status, `count bound ${literal}`).toBe(isInteger && !literal.startsWith("-") ? 200 : 400)
    }
    const empty = await api.post("/v1/discovery", { chains: [], newPairs: {} })
    expect(schemas.DiscoveryRequest.properties.chains.minItems).toBe(1)
    expect(empty.status).toBe(400)
    expect(empty.body.error.details).toEqual([{ field: "body.chains", message: "chains names no chain: send one or more chain slugs" }])
  })

  it("sends the documented WWW-Authenticate on a 401 (Retry-After on a 429: limits.test.ts)", async () => {
    const unauthorized = await api.get("/v1/trades?identity=kol", {})
    expect(unauthorized.status).toBe(401)
    expect(unauthorized.headers.get("www-authenticate")).toBe("Bearer")
    expect(unauthorized.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
    expect(unauthorized.headers.get("x-request-id")).not.toBeNull()
  })
})
