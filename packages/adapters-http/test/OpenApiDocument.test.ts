/**
 * /openapi.json against the spec: the document is generated from the contract by the same call the
 * server makes (`ApiServer.openApiRoute`), so every assertion here is on the served document.
 * apps/server/test/http/openapi.test.ts checks that the server refuses exactly what the document
 * refuses.
 */
import { describe, expect, it } from "@effect/vitest"
import { OpenApi } from "effect/http-api"
import { errorCodes } from "@spot/domain"
import { Contract } from "../src/api/Contract.js"

type Json = Record<string, any>

const document = OpenApi.fromApi(Contract) as unknown as Json
const components: Record<string, Json> = document.components.schemas

/** Follows `$ref`s and merges an `allOf` of a `$ref` and a description (how a described key is written). */
const resolve = (schema: Json): Json => {
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "")
    expect(components[name], `component ${name}`).toBeDefined()
    return resolve(components[name]!)
  }
  if (Array.isArray(schema.allOf) && Object.keys(schema).length === 1) {
    return Object.assign({}, ...schema.allOf.map(resolve))
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema
    return Object.assign({}, ...allOf.map(resolve), rest)
  }
  return schema
}

/** Every schema object reachable from `schema` (through `$ref`s), each component once. */
const reachable = (schema: unknown, seen = new Set<string>(), out: Array<Json> = []): Array<Json> => {
  if (Array.isArray(schema)) {
    for (const item of schema) reachable(item, seen, out)
  } else if (typeof schema === "object" && schema !== null) {
    const object = schema as Json
    out.push(object)
    if (typeof object.$ref === "string") {
      const name = object.$ref.replace("#/components/schemas/", "")
      if (!seen.has(name)) {
        seen.add(name)
        reachable(components[name], seen, out)
      }
    }
    for (const value of Object.values(object)) reachable(value, seen, out)
  }
  return out
}

const operations: Array<{ readonly name: string; readonly operation: Json }> = Object.entries(document.paths as Json).flatMap(
  ([path, item]) => Object.entries(item as Json).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation }))
)

const queryParameter = (path: string, name: string): Json => {
  const parameter = (document.paths[path].get.parameters as Array<Json>).find((p) => p.in === "query" && p.name === name)
  expect(parameter, `${path} ?${name}`).toBeDefined()
  return parameter!
}

const filters = components["DiscoveryFilters"]!.properties as Record<string, Json>

const nonNegativeInteger = { type: "integer", minimum: 0 }

describe("OpenAPI document: discovery request", () => {
  it("documents a column's limit as an integer defaulting to 20, with no bounds (it is clamped, never refused)", () => {
    const limit = resolve(components["ColumnConfig"]!.properties.limit)
    expect(limit).toMatchObject({ type: "integer", default: 20 })
    expect(limit).not.toHaveProperty("anyOf")
    expect(limit).not.toHaveProperty("minimum")
    expect(limit).not.toHaveProperty("maximum")
  })

  it("documents every filter as the spec's table types it", () => {
    const countRanges = ["ageMinutes", "buys", "sells", "txns", "holderCount", "twitterReuseCount"]
    const numberRanges = ["bondingCurvePercent", "devHoldingPercent", "snipersSupplyPercent", "top10HoldersPercent"]
    const decimalRanges = ["globalFeesPaidUsd", "liquidityUsd", "marketCapUsd", "volumeUsd"]
    const counts = ["lastActivityMinutes", "maxGraduationStaleMinutes"]
    const stringLists = [
      "anchorSymbols",
      "excludeDevAddresses",
      "excludeFundingAddresses",
      "excludeSymbolOrName",
      "excludeTwitter",
      "excludeWebsites",
      "protocols",
      "symbolOrName"
    ]
    expect(Object.keys(filters).sort()).toEqual(
      [...countRanges, ...numberRanges, ...decimalRanges, ...counts, ...stringLists, "withAtLeastOneSocial"].sort()
    )
    const bounds = (name: string) => {
      const range = resolve(filters[name]!)
      expect(range.required, name).toBeUndefined()
      expect(Object.keys(range.properties), name).toEqual(["min", "max"])
      return [resolve(range.properties.min), resolve(range.properties.max)]
    }
    for (const name of countRanges) {
      for (const bound of bounds(name)) expect(bound, name).toMatchObject(nonNegativeInteger)
    }
    for (const name of numberRanges) {
      for (const bound of bounds(name)) expect(bound, name).toMatchObject({ type: "number" })
    }
    for (const name of decimalRanges) {
      for (const bound of bounds(name)) expect(bound, name).toMatchObject({ type: "string", pattern: "^-?\\d+(\\.\\d+)?$" })
    }
    for (const name of counts) expect(resolve(filters[name]!), name).toMatchObject(nonNegativeInteger)
    for (const name of stringLists) expect(resolve(filters[name]!), name).toMatchObject({ type: "array", items: { type: "string" } })
    expect(resolve(filters["withAtLeastOneSocial"]!)).toMatchObject({ type: "boolean" })
  })

  it("admits no non-finite number spelled as a string anywhere in the request body", () => {
    const body = document.paths["/v1/discovery"].post.requestBody.content["application/json"].schema
    const schemas = reachable(body)
    expect(schemas.length).toBeGreaterThan(20)
    const nonFinite = schemas.filter((s) => Array.isArray(s.enum) && s.enum.some((v: unknown) => ["Infinity", "-Infinity", "NaN"].includes(v as string)))
    expect(nonFinite).toEqual([])
    expect(schemas.filter((s) => Array.isArray(s.anyOf) && s.anyOf.some((m: Json) => m.type === "number"))).toEqual([])
  })

  it("requires one chain or more", () => {
    expect(components["DiscoveryRequest"]!.properties.chains).toMatchObject({ type: "array", minItems: 1, items: { type: "string" } })
    expect(components["DiscoveryRequest"]!.required).toEqual(["chains"])
  })
})

describe("OpenAPI document: response headers", () => {
  it("documents X-Request-ID and X-RateLimit-Remaining on every response of every operation", () => {
    expect(operations.length).toBe(6)
    for (const { name, operation } of operations) {
      const statuses = Object.keys(operation.responses)
      expect(statuses, name).toEqual(expect.arrayContaining(["200", "400", "401", "429", "500", "503"]))
      for (const status of statuses) {
        const headers = operation.responses[status].headers
        expect(headers?.["x-request-id"], `${name} ${status}`).toMatchObject({ required: true, schema: { type: "string" } })
        expect(headers?.["x-ratelimit-remaining"], `${name} ${status}`).toMatchObject({
          required: true,
          schema: { type: "integer", minimum: 0 }
        })
      }
    }
  })

  it("documents Retry-After (whole seconds, never 0) on 429 and WWW-Authenticate on 401, and neither elsewhere", () => {
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const headers = response.headers ?? {}
        if (status === "429") expect(headers["retry-after"], name).toMatchObject({ required: true, schema: { type: "integer", minimum: 1 } })
        else expect(headers["retry-after"], `${name} ${status}`).toBeUndefined()
        if (status === "401") expect(headers["www-authenticate"], name).toMatchObject({ required: true, schema: { enum: ["Bearer"] } })
        else expect(headers["www-authenticate"], `${name} ${status}`).toBeUndefined()
      }
    }
  })
})

describe("OpenAPI document: query parameters", () => {
  const timeframes = ["1s", "5s", "15s", "30s", "1m", "3m", "5m", "15m", "30m", "1h", "4h", "6h", "12h", "1d", "7d"]
  const ohlcv = "/v1/tokens/{chain}/{address}/ohlcv"
  const unixMs = { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER }

  it.each([
    ["/v1/trades", "identity", { type: "string", enum: ["kol", "partnerscan"] }, true],
    ["/v1/trades", "limit", { type: "integer", default: 20 }, false],
    ["/v1/tokens/{chain}/{address}/trades", "limit", { type: "integer", default: 20 }, false],
    ["/v1/positions", "lifecycle", { type: "string", enum: ["open", "closed"], default: "open" }, false],
    ["/v1/positions", "hideLowLiquidity", { type: "boolean", default: true }, false],
    ["/v1/positions", "hideDust", { type: "boolean", default: false }, false],
    ["/v1/positions", "hideTransfers", { type: "boolean", default: false }, false],
    ["/v1/positions", "sort", { type: "string", pattern: "^(value|pnl|pnlPct|openedAt|closedAt):(asc|desc)$" }, false],
    ["/v1/positions", "limit", { type: "integer", default: 50 }, false],
    [ohlcv, "timeframe", { type: "string", enum: timeframes, default: "1m" }, false],
    [ohlcv, "metric", { type: "string", enum: ["price", "marketCap"], default: "marketCap" }, false],
    [ohlcv, "denomination", { type: "string", enum: ["usd", "native"], default: "usd" }, false],
    [ohlcv, "countBack", { type: "integer", minimum: 1, maximum: 5000 }, false],
    [ohlcv, "from", unixMs, false],
    [ohlcv, "to", unixMs, false]
  ] as const)("%s ?%s is documented as the use case reads it", (path, name, schema, required) => {
    const parameter = queryParameter(path, name)
    expect(parameter.required).toBe(required)
    expect(parameter.schema).toMatchObject(schema)
    expect(typeof parameter.schema.description).toBe("string")
  })

  it("documents clamped page sizes with no bounds (outside 1-100 is clamped, not refused)", () => {
    for (const path of ["/v1/trades", "/v1/tokens/{chain}/{address}/trades", "/v1/positions"]) {
      const { schema } = queryParameter(path, "limit")
      expect(schema, path).not.toHaveProperty("minimum")
      expect(schema, path).not.toHaveProperty("maximum")
    }
  })

  it("leaves free text as plain strings", () => {
    for (const [path, name] of [["/v1/positions", "wallets"], ["/v1/positions", "q"], ["/v1/positions", "cursor"], ["/v1/trades", "chains"]] as const) {
      expect(Object.keys(queryParameter(path, name).schema).sort(), `${path} ?${name}`).toEqual(["description", "type"])
    }
  })
})

describe("OpenAPI document: error body", () => {
  const body = components["ErrorBody"]!

  it("lists the published codes (ErrorCode) and keeps the field open to codes added later", () => {
    const code = resolve(body.properties.code)
    const members = (code.anyOf as Array<Json>).map(resolve)
    expect(members).toContainEqual(expect.objectContaining({ type: "string", enum: [...errorCodes] }))
    expect(members).toContainEqual(expect.objectContaining({ type: "string" }))
    expect(members.find((m) => m.enum === undefined)).toBeDefined()
    expect(errorCodes).toEqual(expect.arrayContaining(["UNAUTHORIZED", "VALIDATION_ERROR", "UNSUPPORTED_CHAIN", "RATE_LIMITED", "INTERNAL_ERROR", "SERVICE_UNAVAILABLE"]))
  })

  it("types details as the array of {field, message} the server sends, and describes when it is sent", () => {
    expect(body.required).toEqual(["code", "message"])
    const details = resolve(body.properties.details)
    expect(details.type).toBe("array")
    expect(details.description).toMatch(/VALIDATION_ERROR/)
    const item = resolve(details.items)
    expect(item).toMatchObject({ type: "object", required: ["field", "message"], additionalProperties: false })
    expect(resolve(item.properties.field)).toMatchObject({ type: "string" })
    expect(resolve(item.properties.message)).toMatchObject({ type: "string" })
  })

  it("every error response uses the one envelope, and every $ref in the document names a component", () => {
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        if (status === "200") continue
        expect(response.content["application/json"].schema, `${name} ${status}`).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" })
      }
    }
    const refs = reachable(document).flatMap((s) => (typeof s.$ref === "string" ? [s.$ref as string] : []))
    expect(refs.length).toBeGreaterThan(0)
    for (const ref of refs) expect(components[ref.replace("#/components/schemas/", "")], ref).toBeDefined()
  })
})
