/**
 * Declaring a served endpoint: method, path, the schemas of its path parameters, query string
 * and JSON body (the same schema objects the HttpApi contract uses for /openapi.json), and a
 * handler that receives them decoded.
 *
 * Decoding collects every problem (`errors: "all"`) and refuses unknown query parameters and
 * unknown body fields, so a 400 VALIDATION_ERROR lists each bad field once with its reason.
 * A query parameter sent twice arrives as an array and is refused by a string schema. A body that
 * is not JSON, or larger than the route's limit (RequestBody), is a VALIDATION_ERROR on field `body`.
 */
import { Context, Effect, Exit, Schema, SchemaIssue, SchemaParser } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { FieldError } from "@spot/domain"
import { ApiError } from "./ApiError.js"
import * as HttpText from "./HttpText.js"
import * as RequestBody from "./RequestBody.js"

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** A schema decodable without services (what request parts need). */
export type RequestSchema<A> = Schema.Decoder<A, never>

export interface Input<P, Q, B> {
  readonly params: P
  readonly query: Q
  readonly payload: B
  /**
   * The query string as parsed, before any schema (a repeated name gives an array): for use cases
   * that validate their own parameters (they then also refuse unknown names).
   */
  readonly searchParams: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly request: HttpServerRequest.HttpServerRequest
}

export interface RouteOptions<P, Q, B, E, R> {
  readonly params?: RequestSchema<P>
  readonly query?: RequestSchema<Q>
  readonly payload?: RequestSchema<B>
  /** Accept query parameters the schema does not name (default false: refused). */
  readonly allowUnknownQuery?: boolean
  /** Largest body accepted, in bytes (default RequestBody.DEFAULT_MAX_BYTES). */
  readonly maxBodyBytes?: number
  /** How long the body may take to arrive whole, in seconds (default RequestBody.DEFAULT_MAX_SECONDS). */
  readonly maxBodySeconds?: number
  readonly handler: (input: Input<P, Q, B>) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

interface AstLike {
  readonly _tag: string
  readonly literal?: unknown
  readonly types?: ReadonlyArray<AstLike>
}

/** What a member of an expected type reads as in a message: literals as JSON, other kinds by name. */
const describeMember = (ast: AstLike): string | undefined => {
  switch (ast._tag) {
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Null":
      return "null"
    case "Objects":
      return "an object"
    case "Arrays":
      return "an array"
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    default:
      return undefined
  }
}

/** `must be one of "a", "b"` / `must be an object or null` for a union none of whose members matched. */
const describeUnion = (ast: AstLike): string | undefined => {
  const members = ast.types ?? []
  const described = members.map(describeMember)
  if (described.length < 2 || described.some((d) => d === undefined)) return undefined
  if (members.every((m) => m._tag === "Literal")) return `must be one of ${described.join(", ")}`
  return `must be ${described.slice(0, -1).join(", ")} or ${described.at(-1)}`
}

/**
 * Messages for unions that no member matched, by path: Effect names a named union by its schema
 * name ("Expected DiscoverySortBy"), which tells a client nothing; this reads what to send.
 */
const unionMessages = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>, out: Map<string, string>): void => {
  switch (issue._tag) {
    case "Pointer":
      unionMessages(issue.issue, [...path, ...issue.path], out)
      return
    case "Filter":
    case "Encoding":
      unionMessages(issue.issue, path, out)
      return
    case "Composite":
      for (const inner of issue.issues) unionMessages(inner, path, out)
      return
    case "AnyOf": {
      if (issue.issues.length > 0) {
        for (const inner of issue.issues) unionMessages(inner, path, out)
        return
      }
      const message = describeUnion(issue.ast as unknown as AstLike)
      if (message !== undefined) out.set(pathKey(path), message)
      return
    }
    case "InvalidType": {
      // A named type of the wrong JSON type ("Expected DecimalString" for a number): say what the
      // name stands for, from the schema's own `expectedText` annotation.
      // (`.annotate` on a checked schema annotates its last check)
      const ast = issue.ast as unknown as {
        readonly annotations?: { readonly expectedText?: unknown }
        readonly checks?: ReadonlyArray<{ readonly annotations?: { readonly expectedText?: unknown } }>
      }
      const expected = ast.annotations?.expectedText ?? ast.checks?.at(-1)?.annotations?.expectedText
      if (typeof expected === "string") out.set(pathKey(path), `must be ${expected}`)
      return
    }
    default:
      return
  }
}

const pathKey = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.map((segment) => String(typeof segment === "object" ? segment.key : segment)).join("\u0000")

const fieldName = (prefix: string | undefined, path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>) => {
  let name = prefix ?? ""
  for (const segment of path) {
    const key = typeof segment === "object" ? segment.key : segment
    if (typeof key === "number") name += `[${key}]`
    else name += name.length === 0 ? String(key) : `.${String(key)}`
  }
  // no path: the request part itself; a path to a key with an empty name (`?=x`): that name, ""
  return name.length === 0 && path.length === 0 ? (prefix ?? "request") : name
}

const reword = (message: string, where: "query" | "params" | "body"): string => {
  if (message === "Missing key") return "is required"
  // A query parameter is text, or a list when it is repeated (`?limit=1&limit=2`).
  if (where === "query" && message.startsWith("Expected string")) return "must be given once"
  if (message === "Expected no excess property") {
    return where === "query" ? "is not a parameter of this endpoint" : "is not a known field"
  }
  return message
}

/** Turns a schema issue into one `{field, message}` per problem. */
export const fieldErrors = (
  issue: SchemaIssue.Issue,
  where: "query" | "params" | "body"
): Array<FieldError> => {
  const unions = new Map<string, string>()
  unionMessages(issue, [], unions)
  return formatIssue(issue).issues.map((entry) => {
    const union = entry.message.startsWith("Expected ") ? unions.get(pathKey(entry.path ?? [])) : undefined
    return {
      field: fieldName(where === "body" ? "body" : undefined, entry.path ?? []),
      message: union ?? reword(entry.message, where)
    }
  })
}

/**
 * True for `Schema.Struct({})`: Effect decodes any object with it, even under
 * `onExcessProperty: "error"`, so an endpoint declaring "no parameters" would accept every one.
 */
const isEmptyStruct = (schema: Schema.Top): boolean => {
  const ast = schema.ast as { readonly _tag: string; readonly propertySignatures?: ReadonlyArray<unknown>; readonly indexSignatures?: ReadonlyArray<unknown> }
  return ast._tag === "Objects" && ast.propertySignatures?.length === 0 && ast.indexSignatures?.length === 0
}

interface PlainField {
  readonly name: string
  readonly optional: boolean
}

/**
 * The fields of a struct whose every field is a plain string (no check, no transformation,
 * optional or not) or a string passed on as sent (`HttpText.documentedAs`), else undefined. Such a
 * struct decodes a record of strings to the same values under its declared keys, so when every
 * declared value is a string (and, strict, no other key is there) the schema run can be skipped
 * with the same result. Anything else still goes through the schema, which names each problem.
 * Path parameters are always strings: the token read is hot.
 */
const plainStringFields = (schema: Schema.Top): ReadonlyArray<PlainField> | undefined => {
  const ast = schema.ast as {
    readonly _tag: string
    readonly checks?: unknown
    readonly encoding?: unknown
    readonly encodingChecks?: unknown
    readonly propertySignatures?: ReadonlyArray<{ readonly name: PropertyKey; readonly type: any }>
    readonly indexSignatures?: ReadonlyArray<unknown>
  }
  if (ast._tag !== "Objects" || ast.checks !== undefined || ast.encoding !== undefined || ast.encodingChecks !== undefined) return undefined
  if (ast.indexSignatures === undefined || ast.indexSignatures.length > 0 || ast.propertySignatures === undefined) return undefined
  const fields: Array<PlainField> = []
  for (const { name, type } of ast.propertySignatures) {
    if (typeof name !== "string" || type.encoding !== undefined) return undefined
    const plainString = type._tag === "String" && type.checks === undefined
    if (!plainString && !HttpText.isPassedAsSent(type)) return undefined
    fields.push({ name, optional: type.context?.isOptional === true })
  }
  return fields
}

/** The fast path of {@link plainStringFields}: the decoded record, or undefined to run the schema. */
const decodePlainStrings = (fields: ReadonlyArray<PlainField>, names: ReadonlySet<string>, strict: boolean, input: unknown) => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  const record = input as Record<string, unknown>
  const out: Record<string, string> = {}
  for (const field of fields) {
    const value = record[field.name]
    if (typeof value === "string") out[field.name] = value
    else if (!(field.optional && value === undefined && !Object.hasOwn(record, field.name))) return undefined
  }
  if (strict) {
    for (const name in record) if (!names.has(name)) return undefined
  }
  return out
}

/** Decodes one request part with `schema`, collecting every problem as field errors (exported for tests). */
export const makeDecoder = <A>(schema: RequestSchema<A> | undefined, where: "query" | "params" | "body", strict: boolean) => {
  if (schema === undefined) return undefined
  if (strict && isEmptyStruct(schema as Schema.Top)) {
    // Checked by hand (no schema run, no allocation on the usual empty query: the token read is hot).
    const excess = reword("Expected no excess property", where)
    const empty = Object.freeze({}) as A
    return (input: unknown, errors: Array<FieldError>): A | undefined => {
      if (typeof input !== "object" || input === null || Array.isArray(input)) {
        errors.push({ field: where === "body" ? "body" : "request", message: "must be an object" })
        return undefined
      }
      let clean = true
      for (const name in input) {
        clean = false
        errors.push({ field: where === "body" ? `body.${name}` : name, message: excess })
      }
      return clean ? empty : undefined
    }
  }
  const decode = SchemaParser.decodeUnknownExit(schema as any)
  const options = { errors: "all", onExcessProperty: strict ? "error" : "ignore" } as const
  const plain = plainStringFields(schema as Schema.Top)
  const names = new Set(plain?.map((field) => field.name))
  return (input: unknown, errors: Array<FieldError>): A | undefined => {
    if (plain !== undefined) {
      const decoded = decodePlainStrings(plain, names, strict, input)
      if (decoded !== undefined) return decoded as A
    }
    const exit = decode(input, options)
    if (Exit.isSuccess(exit)) return exit.value as A
    for (const reason of exit.cause.reasons) {
      if (reason._tag === "Fail") errors.push(...fieldErrors(reason.error as SchemaIssue.Issue, where))
    }
    return undefined
  }
}

/** A route whose handler receives the decoded params, query and body. */
export const make = <P = {}, Q = {}, B = undefined, E = never, R = never>(
  method: Method,
  path: HttpRouter.PathInput,
  options: RouteOptions<P, Q, B, E, R>
): HttpRouter.Route<E | ApiError, Exclude<R, HttpServerRequest.HttpServerRequest>> => {
  const decodeParams = makeDecoder(options.params, "params", false)
  const decodeQuery = makeDecoder(options.query, "query", options.allowUnknownQuery !== true)
  const decodePayload = makeDecoder(options.payload, "body", true)
  const handler = options.handler
  const bodyLimit: RequestBody.Limit = {
    maxBytes: options.maxBodyBytes ?? RequestBody.DEFAULT_MAX_BYTES,
    maxSeconds: options.maxBodySeconds ?? RequestBody.DEFAULT_MAX_SECONDS
  }

  const decodeAndRun = (
    request: HttpServerRequest.HttpServerRequest,
    context: Context.Context<never>,
    body: unknown
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E | ApiError, R> => {
    const errors: Array<FieldError> = []
    const params = decodeParams === undefined
      ? {}
      : decodeParams(Context.getUnsafe(context, HttpRouter.RouteContext).params, errors)
    const searchParams = Context.getUnsafe(context, HttpServerRequest.ParsedSearchParams)
    const query = decodeQuery === undefined ? {} : decodeQuery(searchParams, errors)
    const payload = decodePayload === undefined ? undefined : decodePayload(body, errors)
    if (errors.length > 0) return Effect.fail(ApiError.validation(errors))
    return handler({ params: params as P, query: query as Q, payload: payload as B, searchParams, request })
  }

  const routeHandler = Effect.withFiber((fiber) => {
    const context = fiber.context as Context.Context<never>
    const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
    if (decodePayload === undefined) return decodeAndRun(request, context, undefined)
    return Effect.flatMap(RequestBody.json(request, bodyLimit), (body) => decodeAndRun(request, context, body))
  })

  return HttpRouter.route(method, path, routeHandler as any) as any
}

export const get = <P = {}, Q = {}, E = never, R = never>(
  path: HttpRouter.PathInput,
  options: Omit<RouteOptions<P, Q, undefined, E, R>, "payload">
) => make<P, Q, undefined, E, R>("GET", path, options)

export const post = <P = {}, Q = {}, B = undefined, E = never, R = never>(
  path: HttpRouter.PathInput,
  options: RouteOptions<P, Q, B, E, R>
) => make<P, Q, B, E, R>("POST", path, options)

/**
 * A JSON response from a value and its wire schema (encoded, then stringified once). Hot
 * endpoints whose body changes rarely should keep the string and use `preEncoded`.
 */
export const json = <A>(schema: Schema.Encoder<A, never>) => {
  const encode = Schema.encodeSync(schema as any)
  return (value: A, status = 200): HttpServerResponse.HttpServerResponse =>
    HttpServerResponse.text(JSON.stringify(encode(value)), { status, contentType: "application/json" })
}

/**
 * A JSON response from an already encoded body. For a small body a string is best: Node writes
 * headers and body as one string (a Uint8Array body is a second chunk of the write, measurably
 * slower at a few hundred bytes).
 */
export const preEncoded = (body: string, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, { status, contentType: "application/json" })

/**
 * A JSON response from body bytes assembled from cached pieces (Encoding's pages): no UTF-8
 * length scan, no encoding when written; better than a string from a few KB on.
 */
export const preEncodedBytes = (body: Uint8Array, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.uint8Array(body, { status, contentType: "application/json" })
