/**
 * ApiRoute's decoders skip the schema run for structs of plain strings when the input is already
 * what the schema would give back; they must answer exactly as the schema does, success or not.
 */
import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema, SchemaIssue, SchemaParser } from "effect"
import fc from "fast-check"
import { DecimalString, DiscoveryRequest, type FieldError } from "@spot/domain"
import * as ApiRoute from "../src/ApiRoute.js"
import { IdentityTradesParams, TokenPathParams, TokenTradesParams } from "../src/api/Params.js"

/** The schema alone, with the options ApiRoute uses. */
const bySchema = (schema: Schema.Decoder<unknown, never>, where: "query" | "params", strict: boolean) => {
  const decode = SchemaParser.decodeUnknownExit(schema as any)
  return (input: unknown): { value?: unknown; errors: Array<FieldError> } => {
    const exit = decode(input, { errors: "all", onExcessProperty: strict ? "error" : "ignore" })
    if (Exit.isSuccess(exit)) return { value: exit.value, errors: [] }
    const errors: Array<FieldError> = []
    for (const reason of exit.cause.reasons) {
      if (reason._tag === "Fail") errors.push(...ApiRoute.fieldErrors(reason.error as SchemaIssue.Issue, where))
    }
    return { errors }
  }
}

const byRoute = (schema: Schema.Decoder<unknown, never>, where: "query" | "params", strict: boolean) => {
  const decode = ApiRoute.makeDecoder(schema, where, strict)!
  return (input: unknown): { value?: unknown; errors: Array<FieldError> } => {
    const errors: Array<FieldError> = []
    const value = decode(input, errors)
    return value === undefined ? { errors } : { value, errors }
  }
}

const value = fc.oneof(fc.string({ maxLength: 6 }), fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }), fc.integer(), fc.constant(undefined))
const input = fc.oneof(
  fc.dictionary(fc.constantFrom("chain", "address", "limit", "cursor", "identity", "chains", "extra", "toString"), value, { maxKeys: 6 }),
  fc.constantFrom(null, "text", 7, ["chain"])
)

describe("ApiRoute decoders", () => {
  for (const [name, schema, where, strict] of [
    ["path params (not strict)", TokenPathParams, "params", false],
    ["optional query fields (strict)", TokenTradesParams, "query", true],
    ["required and optional query fields (strict)", IdentityTradesParams, "query", true]
  ] as const) {
    it(`answer as the schema does: ${name}`, () => {
      const route = byRoute(schema as Schema.Decoder<unknown, never>, where, strict)
      const reference = bySchema(schema as Schema.Decoder<unknown, never>, where, strict)
      fc.assert(
        fc.property(input, (candidate) => {
          expect(route(candidate)).toEqual(reference(candidate))
        }),
        { numRuns: 500 }
      )
      // The usual inputs, on the fast path.
      expect(route({ chain: "solana", address: "So1" })).toEqual(reference({ chain: "solana", address: "So1" }))
    })
  }
})

describe("ApiRoute: every problem in one answer", () => {
  it("a query parameter with an empty name (`?=x`) is named as it is, not as the request", () => {
    const errors: Array<FieldError> = []
    ApiRoute.makeDecoder(IdentityTradesParams as Schema.Decoder<unknown, never>, "query", true)!({ identity: "kol", foo: "1", "": "x" }, errors)
    expect(errors).toEqual([
      { field: "foo", message: "is not a parameter of this endpoint" },
      { field: "", message: "is not a parameter of this endpoint" }
    ])
  })

  it("an unknown body field does not hide the others' problems", () => {
    const errors: Array<FieldError> = []
    ApiRoute.makeDecoder(DiscoveryRequest as Schema.Decoder<unknown, never>, "body", true)!({ chains: ["solana"], newPairs: { limit: "x" }, extra: 1 }, errors)
    expect(errors.map((e) => e.field).sort()).toEqual(["body.extra", "body.newPairs.limit"])
  })
})

describe("ApiRoute messages", () => {
  const errorsOf = (schema: Schema.Decoder<unknown, never>, input: unknown) => {
    const errors: Array<FieldError> = []
    ApiRoute.makeDecoder(schema, "body", true)!(input, errors)
    return errors
  }

  it("name what to send for a union no member matched, not the schema's name", () => {
    const Sort = Schema.Literals(["asc", "desc"]).annotate({ identifier: "SortOrder" })
    const Config = Schema.Struct({ order: Schema.optionalKey(Sort) }).annotate({ identifier: "Config" })
    const Body = Schema.Struct({ column: Schema.optionalKey(Schema.NullOr(Config)), order: Schema.optionalKey(Sort) })
    const byField = (errors: Array<FieldError>) => [...errors].sort((a, b) => a.field.localeCompare(b.field))
    expect(byField(errorsOf(Body, { order: "up", column: 5 }))).toEqual([
      { field: "body.column", message: "must be an object or null" },
      { field: "body.order", message: `must be one of "asc", "desc"` }
    ])
    // inside a matched member, its own fields' problems as usual
    expect(errorsOf(Body, { column: { order: "sideways" } })).toEqual([{ field: "body.column.order", message: `must be one of "asc", "desc"` }])
    // anything else keeps Effect's message
    expect(errorsOf(Schema.Struct({ n: Schema.Number }), { n: "x" })[0]!.message).toMatch(/^Expected number/)
  })

  it("say what a named type stands for when a value of another JSON type came (a number for a decimal string)", () => {
    const Range = Schema.Struct({ min: Schema.optionalKey(DecimalString) })
    expect(errorsOf(Range, { min: 1.5 })).toEqual([{ field: "body.min", message: expect.stringMatching(/^must be a decimal string such as "-12.5"/) }])
    // a string that is not a decimal keeps the pattern's own message
    expect(errorsOf(Range, { min: "1e5" })[0]!.message).toMatch(/decimal string/)
  })

  it("never answer a discovery body with a schema's name: each named part says what to send", () => {
    const cases: Array<[unknown, string]> = [
      [{ chains: ["solana"], newPairs: { filters: { holderCount: { max: "3" } } } }, "body.newPairs.filters.holderCount.max"],
      [{ chains: ["solana"], newPairs: { filters: { lastActivityMinutes: "5" } } }, "body.newPairs.filters.lastActivityMinutes"],
      [{ chains: ["solana"], newPairs: { filters: { buys: 5 } } }, "body.newPairs.filters.buys"],
      [{ chains: ["solana"], newPairs: { filters: { marketCapUsd: 5 } } }, "body.newPairs.filters.marketCapUsd"],
      [{ chains: ["solana"], newPairs: { filters: [] } }, "body.newPairs.filters"],
      [[], "body"],
      [null, "body"]
    ]
    for (const [body, field] of cases) {
      const errors = errorsOf(DiscoveryRequest as unknown as Schema.Decoder<unknown, never>, body)
      expect(errors.map((e) => e.field), JSON.stringify(body)).toContain(field)
      for (const error of errors) expect(error.message, `${JSON.stringify(body)}: ${error.message}`).not.toMatch(/Expected [A-Z]/)
    }
  })

  it("tell a repeated query parameter to be given once", () => {
    const errors: Array<FieldError> = []
    ApiRoute.makeDecoder(TokenTradesParams as Schema.Decoder<unknown, never>, "query", true)!({ limit: ["1", "2"] }, errors)
    expect(errors).toEqual([{ field: "limit", message: "must be given once" }])
  })
})
