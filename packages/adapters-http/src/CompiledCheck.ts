/**
 * A fast stand-in for `Schema.encodeSync` on the wire schemas, compiled from the same schema's AST.
 *
 * The wire schemas have no transformations, so encoding a wire object only validates it and
 * copies it (structs keep the keys they name, in their order). `encodeSync` does that through
 * the generic parser — Exits, issue bookkeeping and a fresh copy of every object — at about twice
 * the cost of `JSON.stringify` for a token. `compile` walks the AST once (the encoding side, as
 * `encodeSync` does: `SchemaAST.flip`) and builds one closure per node that answers a stricter
 * question with a plain boolean: "does `encodeSync` accept this value AND does stringifying the
 * value itself give the same JSON as stringifying what `encodeSync` returns?". Filters (patterns,
 * int, ranges, ...) are the schema's own: each check's `run` is called as the parser calls it.
 *
 * `true` is a proof; `false` only means "ask the schema", so `encoder` then runs `encodeSync`,
 * which returns the encoded value or throws the schema's own error. A struct therefore answers
 * false, and the schema decides, for what the schema accepts but the copy changes: a key it does
 * not name (the copy drops it), keys in another order than the schema's (the copy reorders),
 * an object or array whose prototype is not the plain one (a class instance, `toJSON`).
 *
 * Compiled: Objects (property signatures, optional keys), Arrays (elements, optional elements,
 * rest and the elements after it), Union (`anyOf`, of primitives, literals, null and at most one
 * object or array member), String, Number, Boolean, Null, Undefined, Literal (not bigint),
 * Suspend, and checks on those. Anything else — any `encoding` on any node (transformations,
 * key renames), Declarations (classes, `Schema.declare`), index signatures (records), empty
 * structs, `oneOf` unions, checks on objects and arrays (the schema runs them on its copy, not
 * on the value), symbol or `__proto__` keys, every other node kind — makes the whole schema fall
 * back: `check` answers false for every value and `encoder` is `encodeSync`.
 */
import { Schema, SchemaAST } from "effect"

/** The compiled answer: `true` proves `encodeSync` accepts the value and its JSON is the value's own. */
export type Check = (value: unknown) => boolean

export interface CompiledCheck {
  readonly check: Check
  /** Why the schema was not compiled (its `check` answers false for every value); undefined when it was. */
  readonly fallback: string | undefined
}

class Unsupported extends Error {}

const unsupported = (what: string): never => {
  throw new Unsupported(what)
}

/** The options `encodeSync` parses with when it is given none; filters receive them. */
const parseOptions: SchemaAST.ParseOptions = {}

const never: Check = () => false

/** A filter's own `run`: undefined when the value passes, an issue when it does not. */
type Run = SchemaAST.Filter<unknown>["run"]

/** The node's filters in the parser's order (filter groups flattened). */
const runsOf = (checks: SchemaAST.Checks | undefined): Array<Run> => {
  const out: Array<Run> = []
  const visit = (check: SchemaAST.Check<unknown>): void => {
    if (check._tag === "FilterGroup") for (const inner of check.checks) visit(inner)
    else out.push(check.run)
  }
  if (checks !== undefined) for (const check of checks) visit(check)
  return out
}

/**
 * `base` and then every filter, stopping at the first that fails, as `collectIssues` does under
 * the default options (each run as the parser runs it: the value, the node, the options).
 */
const withRuns = (base: Check, runs: ReadonlyArray<Run>, ast: SchemaAST.AST): Check => {
  switch (runs.length) {
    case 0:
      return base
    case 1: {
      const [a] = runs as [Run]
      return (value) => base(value) && a(value, ast, parseOptions) === undefined
    }
    default:
      return (value) => {
        if (!base(value)) return false
        for (let i = 0; i < runs.length; i++) if (runs[i]!(value, ast, parseOptions) !== undefined) return false
        return true
      }
  }
}

/**
 * A keyword's test (`typeof`, as `Predicate.isString` and the others) with its filters, written
 * out for the usual one or two filters (a pattern; int and a bound): most leaves of a wire object.
 */
const typed = (type: "string" | "number" | "boolean", runs: ReadonlyArray<Run>, ast: SchemaAST.AST): Check => {
  switch (runs.length) {
    case 0:
      return (value) => typeof value === type
    case 1: {
      const [a] = runs as [Run]
      return (value) => typeof value === type && a(value, ast, parseOptions) === undefined
    }
    case 2: {
      const [a, b] = runs as [Run, Run]
      return (value) =>
        typeof value === type && a(value, ast, parseOptions) === undefined && b(value, ast, parseOptions) === undefined
    }
    default:
      return withRuns((value) => typeof value === type, runs, ast)
  }
}

/** Values the parser returns as they came (no copy): any union of these is safe in any order. */
const isPlain = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "String":
    case "Number":
    case "Boolean":
    case "Null":
    case "Undefined":
    case "Literal":
      return true
    case "Union":
      return ast.types.every(isPlain)
    default:
      return false
  }
}

const isNull: Check = (value) => value === null
const isUndefined: Check = (value) => value === undefined

class Compiler {
  /** One closure per AST node (shared subtrees compile once; a Suspend's cycle ends here). */
  private readonly memo = new Map<SchemaAST.AST, Check>()

  node(ast: SchemaAST.AST): Check {
    const done = this.memo.get(ast)
    if (done !== undefined) return done
    // A recursive schema reaches its node again through a Suspend before the node is built.
    let built: Check | undefined
    this.memo.set(ast, (value) => built!(value))
    built = this.build(ast)
    this.memo.set(ast, built)
    return built
  }

  private build(ast: SchemaAST.AST): Check {
    if (ast.encoding !== undefined) return unsupported(`a transformation (${ast._tag} with an encoding)`)
    const runs = runsOf(ast.checks)
    switch (ast._tag) {
      case "String":
        return typed("string", runs, ast)
      case "Number":
        // NaN and ±Infinity are numbers to the parser; a finite or int filter refuses them.
        return typed("number", runs, ast)
      case "Boolean":
        return typed("boolean", runs, ast)
      case "Null":
        return withRuns(isNull, runs, ast)
      case "Undefined":
        return withRuns(isUndefined, runs, ast)
      case "Literal": {
        const literal = ast.literal
        if (typeof literal === "bigint") return unsupported("a bigint literal")
        // The parser compares with `===` (-0 matches the literal 0, and is returned as it came).
        return withRuns((value) => value === literal, runs, ast)
      }
      case "Objects":
        if (ast.checks !== undefined || ast.encodingChecks !== undefined) return unsupported("checks on an object")
        return this.objects(ast)
      case "Arrays":
        if (ast.checks !== undefined || ast.encodingChecks !== undefined) return unsupported("checks on an array")
        return this.arrays(ast)
      case "Union":
        return this.union(ast, runs)
      case "Suspend": {
        // No checks on a Suspend (its constructor refuses them); the parser runs the target's parser.
        const target = ast.thunk()
        return this.node(target)
      }
      default:
        return unsupported(`a ${ast._tag} node`)
    }
  }

  /**
   * Every key of the value, in its own order (`for...in`, which is `JSON.stringify`'s order for a
   * plain object), must be the schema's next named key: the parser's copy holds exactly the named
   * keys present, in the schema's order, so then both stringify alike. A key the schema names but
   * the value lacks must be optional and not be there at all (`in`, as the parser asks: neither a
   * non-enumerable own key nor an inherited one, which the parser would read).
   */
  private objects(ast: SchemaAST.Objects): Check {
    if (ast.indexSignatures.length > 0) return unsupported("an index signature")
    const signatures = ast.propertySignatures
    const n = signatures.length
    // An empty struct accepts any value but null and undefined, primitives included.
    if (n === 0) return unsupported("an empty struct")
    const names: Array<string> = []
    const optional: Array<boolean> = []
    const values: Array<Check> = []
    for (const signature of signatures) {
      const name = signature.name
      if (typeof name !== "string") return unsupported(`a ${typeof name} key`)
      if (name === "__proto__") return unsupported("a __proto__ key")
      names.push(name)
      optional.push(SchemaAST.isOptional(signature.type))
      values.push(this.node(signature.type))
    }
    const plainObject = Object.prototype
    return (value) => {
      if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== plainObject) return false
      const record = value as Record<string, unknown>
      let i = 0
      for (const key in record) {
        while (i < n && names[i] !== key) {
          if (!optional[i] || names[i]! in record) return false
          i++
        }
        if (i === n) return false
        if (!values[i]!(record[key])) return false
        i++
      }
      for (; i < n; i++) if (!optional[i] || names[i]! in record) return false
      return true
    }
  }

  /**
   * The parser's reading of a tuple with rest (`SchemaAST.Arrays.getParser`): the elements first
   * (a missing one must be optional), then the first rest type for the middle and the others for
   * the last items; with no rest, more items than elements fail. Its copy holds the same items.
   */
  private arrays(ast: SchemaAST.Arrays): Check {
    const elements = ast.elements.map((element) => this.node(element))
    const optional = ast.elements.map(SchemaAST.isOptional)
    const rest = ast.rest.map((item) => this.node(item))
    const elementCount = elements.length
    const head = rest[0]
    const tail = rest.slice(1)
    const tailCount = tail.length
    const plainArray = Array.prototype
    return (value) => {
      if (!Array.isArray(value) || Object.getPrototypeOf(value) !== plainArray) return false
      const len = value.length
      if (head === undefined && len > elementCount) return false
      for (let i = 0; i < elementCount; i++) {
        if (i < len) {
          if (!elements[i]!(value[i])) return false
        } else if (!optional[i]) {
          return false
        }
      }
      if (head === undefined) return true
      const tailStart = Math.max(elementCount, len - tailCount)
      for (let i = elementCount; i < tailStart; i++) if (!head(value[i])) return false
      const end = Math.max(len, elementCount + tailCount)
      for (let i = tailStart; i < end; i++) {
        // Items after the rest are never optional (the Arrays constructor refuses that).
        if (i >= len || !tail[i - tailStart]!(value[i])) return false
      }
      return true
    }
  }

  /**
   * `anyOf`: some member accepts. The parser returns the first member's output; a plain member
   * returns the value itself, so only two members that copy (objects, arrays) could make the
   * output depend on which one the parser picked: those unions fall back.
   */
  private union(ast: SchemaAST.Union, runs: ReadonlyArray<Run>): Check {
    if (ast.options?.mode === "oneOf") return unsupported("a oneOf union")
    const types = ast.types
    const copying = types.filter((type) => !isPlain(type)).length
    if (copying > 1) return unsupported("a union of two or more object or array members")
    if (copying > 0 && runs.length > 0) return unsupported("checks on a union with an object or array member")
    if (types.length === 0) return withRuns(never, runs, ast)
    if (types.every((type) => type._tag === "Literal" && type.checks === undefined && type.encoding === undefined)) {
      const literals = types.map((type) => (type as SchemaAST.Literal).literal)
      if (literals.some((literal) => typeof literal === "bigint")) return unsupported("a bigint literal")
      // `Schema.Literals`: one lookup. Set.has is `===` for finite literals (-0 finds 0, as `===` does).
      const set = new Set(literals)
      return withRuns((value) => set.has(value as SchemaAST.LiteralValue), runs, ast)
    }
    const members = types.map((type) => this.node(type))
    if (members.length === 1) return withRuns(members[0]!, runs, ast)
    if (members.length === 2) {
      const [a, b] = members as [Check, Check]
      // `Schema.NullOr`: the null test written out.
      const isNullAt = types.findIndex((type) => type._tag === "Null" && type.checks === undefined)
      if (isNullAt === 0) return withRuns((value) => value === null || b(value), runs, ast)
      if (isNullAt === 1) return withRuns((value) => value === null || a(value), runs, ast)
      return withRuns((value) => a(value) || b(value), runs, ast)
    }
    return withRuns((value) => {
      for (let i = 0; i < members.length; i++) if (members[i]!(value)) return true
      return false
    }, runs, ast)
  }
}

/**
 * The schema compiled into one boolean check (see the module comment), or a check that answers
 * false for every value with the reason, when the schema holds a node or feature not compiled.
 */
export const compile = (schema: { readonly ast: SchemaAST.AST }): CompiledCheck => {
  try {
    const check = new Compiler().node(SchemaAST.flip(schema.ast))
    return { check, fallback: undefined }
  } catch (error) {
    if (error instanceof Unsupported) return { check: never, fallback: error.message }
    return { check: never, fallback: `compiling failed: ${String(error)}` }
  }
}

/**
 * `Schema.encodeSync(schema)` for values the compiled check proves: the value itself is returned
 * (it is already its own encoding and stringifies as the schema's output would). Any other value
 * goes to `encodeSync`, which encodes it or throws the schema's error.
 */
export const encoder = <S extends Schema.ConstraintEncoder<unknown>>(schema: S): ((value: S["Type"]) => S["Encoded"]) => {
  const encodeSync = Schema.encodeSync(schema)
  const { check, fallback } = compile(schema)
  if (fallback !== undefined) return (value) => encodeSync(value)
  return (value) => {
    let proven = false
    try {
      proven = check(value)
    } catch {
      // A filter that throws: the schema reports it its own way.
    }
    return proven ? (value as S["Encoded"]) : encodeSync(value)
  }
}
