/**
 * Query parameters and response headers are text on the wire, but /openapi.json should say what
 * the text means: an integer, `true`/`false`, one of a few words. `documentedAs` makes a schema for
 * such a value that:
 *
 * - decodes any single string as sent, unchanged: the use case that reads the parameter checks it
 *   and answers with its own message naming the field and what to send ("limit must be a whole
 *   number", "hideDust must be true or false"); a repeated parameter (an array) is still refused;
 * - is documented in /openapi.json as `documented` (`{type: "integer", minimum: 1}`, `{type:
 *   "string", enum: [...]}`, ...), which must state what the use case accepts: the tests in
 *   test/OpenApiDocument.test.ts (adapters-http) and apps/server/test/http/openapi.test.ts send
 *   values the document refuses and expect the server to refuse them too.
 *
 * How: a declaration of "a string" that is its own JSON and string-tree form (`toCodecJson` and
 * `toCodecStringTree` answer undefined), so HttpApi's OpenAPI generator keeps it as is, and a check
 * that refuses nothing and carries `documented` as its JSON Schema. `Schema.String` would instead
 * be documented as `type: string` whatever the check said (the two types would conflict), and a
 * typed schema such as `Schema.NumberFromString` is documented as its encoded side, a string.
 */
import type { JsonSchema, SchemaAST } from "effect"
import { Schema } from "effect"

/** Annotation key marking a value decoded as sent (ApiRoute skips the schema run for such fields). */
const passedAsSentKey = "~spot/http-text-passed-as-sent"

const Text = Schema.declare((u: unknown): u is string => typeof u === "string", {
  expected: "string",
  toCodecJson: () => undefined,
  toCodecStringTree: () => undefined,
  [passedAsSentKey]: true
})

/** Any string, as sent; documented in /openapi.json as `documented` (see the module comment). */
export const documentedAs = (documented: JsonSchema.JsonSchema) =>
  Text.check(Schema.makeFilter(() => true, { toJsonSchema: () => documented }))

/** True for a schema made by {@link documentedAs}: it decodes every string to itself. */
export const isPassedAsSent = (ast: SchemaAST.AST): boolean =>
  ast._tag === "Declaration" && ast.annotations?.[passedAsSentKey] === true
