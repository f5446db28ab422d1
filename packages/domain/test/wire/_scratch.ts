import { Schema } from "effect"
const re = /^-?\d+(\.\d+)?$/
const b = Schema.String.check(Schema.isPattern(re, { toJsonSchema: () => ({ pattern: re.source }) })).annotate({ identifier: "B", description: "dec" })
console.log(JSON.stringify(Schema.toJsonSchemaDocument(Schema.Struct({x: b, y: Schema.optionalKey(b)}))))
console.log(Schema.decodeUnknownSync(b)("1.5"))
try { Schema.decodeUnknownSync(b)("1e-7") } catch (e) { console.log(String(e)) }
