/**
 * A generic object-graph codec: serializes everything reachable from a root object to bytes and
 * rebuilds an equivalent graph, so the market engine can be snapshotted without a hand-written
 * serializer per class (the engine's internals change often; a graph walk follows them).
 *
 * What it keeps:
 * - identity: an object reachable along several paths is written once and restored once, shared
 *   the same way (cycles included);
 * - primitives exactly: undefined, null, booleans, every number (NaN, ±Infinity and -0 included),
 *   bigints of any size, strings (UTF-8, well-formed or not; each distinct string under 64
 *   characters written once, longer ones — mostly unique — inline);
 * - plain objects (Object.prototype or null prototype), arrays (holes included), Map, Set (in
 *   insertion order), every typed array kind and the ArrayBuffers behind them (views sharing a
 *   buffer share it again);
 * - instances of registered classes, rebuilt as `Object.create(prototype)` plus their own data
 *   properties in the original order (their constructors are not called; where code generation
 *   is allowed, a small constructor is generated per shape that does exactly that, with named
 *   stores, which V8 runs several times faster than generic ones); a registered class may name
 *   transient fields (caches) that are not written and come back as a given primitive;
 * - well-known objects (module-level sentinels compared by identity, shared frozen lists): written
 *   by name, restored as the very same objects of the running code;
 * - frozen, sealed and non-extensible objects, arrays, maps and sets come back so.
 *
 * What it refuses, by throwing {@link SnapshotEncodeError} with the path to the value (never a
 * silently wrong snapshot): functions, symbols, symbol-keyed properties, accessor or
 * non-enumerable own properties, instances of unregistered classes (Date, RegExp, Error, WeakMap,
 * DataView, promises, subclasses of Array/Map/Set, ...), SharedArrayBuffers, resizable buffers,
 * and registered classes whose source declares `#private` fields (their state is invisible to a
 * graph walk; detected when the registry is built). Own properties are checked thoroughly once per
 * shape (class + key list), not per object, and properties other than the contents of arrays,
 * maps, sets and typed arrays are not looked for: the `strict` option checks both on every object
 * (the engine's tests encode strictly, which vouches for the fast mode on the engine's graphs).
 *
 * Format (little-endian): magic "SPSN", u16 format version, u8 flags, u8 0, the context string
 * (the caller's fingerprint of the code that wrote it: restoring under other code is refused),
 * the root value, the bodies of deferred containers, an end tag. A container deeper than
 * {@link maxDepth} is written as a header whose body follows the root, so the walk's recursion
 * stays bounded whatever the graph's depth. Corrupt or truncated bytes fail with
 * {@link SnapshotDecodeError}, never with a partial graph.
 */

/** Bumped whenever the byte layout below changes; other versions are refused. */
export const FORMAT_VERSION = 1

/** In slices, a deferred map, set or array longer than this is written this many entries at a time. */
const ENTRIES_PER_GROUP = 256

/** Containers nested deeper than this are deferred (written after the root). */
export const maxDepth = 64

const MAGIC = 0x4e535053 // "SPSN" read as a little-endian u32

export interface ClassEntry {
  /** The stable name written into snapshots (not `constructor.name`: minifiers change it). */
  readonly name: string
  // eslint-disable-next-line @typescript-eslint/ban-types
  readonly constructor: Function
  /**
   * Own fields that are derived caches: not written; restored with the given value (a
   * primitive), in their place among the other fields.
   */
  readonly transient?: Readonly<Record<string, undefined | null | boolean | number | string | bigint>>
}

export interface CodecRegistry {
  readonly classes: ReadonlyArray<ClassEntry>
  /** Objects restored by name as the running code's own objects, not copies. */
  readonly wellKnown: ReadonlyArray<readonly [name: string, value: object]>
}

export class SnapshotEncodeError extends Error {
  constructor(message: string, readonly path: string) {
    super(`${message} at ${path}`)
    this.name = "SnapshotEncodeError"
  }
}

/**
 * Thrown by {@link encodeInSlices} when the graph changed between two of its steps in a way that
 * would make its bytes wrong: nothing is wrong with the graph itself, and a later attempt (with
 * the graph left alone meanwhile) can succeed.
 */
export class SnapshotChangedError extends SnapshotEncodeError {
  constructor(message: string, path: string) {
    super(message, path)
    this.name = "SnapshotChangedError"
  }
}

export class SnapshotDecodeError extends Error {
  constructor(message: string) {
    super(message)
    this.name = "SnapshotDecodeError"
  }
}

export class SnapshotRegistryError extends Error {
  constructor(message: string) {
    super(message)
    this.name = "SnapshotRegistryError"
  }
}

// --- tags -----------------------------------------------------------------------------------

const T_UNDEFINED = 0
const T_NULL = 1
const T_FALSE = 2
const T_TRUE = 3
const T_HOLE = 4
const T_INT = 5
const T_FLOAT = 6
const T_BIGINT_ZERO = 7
const T_BIGINT_64 = 8
const T_BIGINT_BIG = 9
const T_BIGINT_128 = 15
const T_STRING_UTF16 = 23
const T_STRING_LONG = 24
const T_STRING_LONG_UTF16 = 25

/**
 * Strings this long or longer are not looked up in the string table: in an engine they are
 * mostly unique (transaction hashes, 66 to 88 characters), so the table lookup would cost more
 * than writing the rare repeat twice. Shorter ones (addresses, ids, names) go through the table.
 */
const LONG_STRING = 64
const T_STRING_NEW = 10
const T_STRING_REF = 11
const T_STRING_EMPTY = 12
const T_REF = 13
const T_WELL_KNOWN = 14
const T_OBJECT = 16
const T_ARRAY = 17
const T_MAP = 18
const T_SET = 19
const T_TYPED = 20
const T_BUFFER = 21
const T_DEFERRED = 22
const T_END = 0xff

// Integrity levels, written after a container's body.
const EXTENSIBLE = 0
const NON_EXTENSIBLE = 1
const SEALED = 2
const FROZEN = 3

// Container kinds (for deferred bodies).
const K_OBJECT = 0
const K_ARRAY = 1
const K_MAP = 2
const K_SET = 3

// Shape prototypes: a class index, or one of these.
const PROTO_PLAIN = -1
const PROTO_NULL = -2

type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array

interface TypedArrayConstructor {
  new(buffer: ArrayBuffer, byteOffset: number, length: number): TypedArray
  readonly prototype: TypedArray
  readonly BYTES_PER_ELEMENT: number
}

const typedArrayKinds: ReadonlyArray<TypedArrayConstructor> = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array
] as unknown as ReadonlyArray<TypedArrayConstructor>

const typedArrayKindOf = new Map<object, number>(typedArrayKinds.map((ctor, kind) => [ctor.prototype, kind]))

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

const MIN_INT64 = -(2n ** 63n)
const MAX_INT64 = 2n ** 63n - 1n
const MIN_INT128 = -(2n ** 127n)
const MAX_INT128 = 2n ** 127n - 1n

// --- UTF-8

const textEncoder = new TextEncoder()
// fatal: malformed bytes are a corrupt snapshot, never replaced; ignoreBOM: a string starting
// with U+FEFF keeps it (by default the decoder drops a leading byte-order mark)
const textDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** UTF-8 byte length of `text`, or -1 when it holds a lone surrogate (UTF-8 cannot carry it). */
const utf8Length = (text: string): number => {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0
      if (!(next >= 0xdc00 && next <= 0xdfff)) return -1
      bytes += 2 // 4 bytes for 2 code units
      i++
    } else if (code >= 0xdc00 && code <= 0xdfff) return -1
    else bytes += 2
  }
  return bytes
}

/** Strict UTF-8 decoding (overlong forms, surrogates, truncation refused). */
const readUtf8 = (bytes: Uint8Array, from: number, to: number): string => {
  try {
    return textDecoder.decode(bytes.subarray(from, to))
  } catch {
    throw new SnapshotDecodeError(`invalid UTF-8 in bytes ${from} to ${to}`)
  }
}

// --- registry --------------------------------------------------------------------------------

interface PreparedClass {
  readonly index: number
  readonly name: string
  readonly prototype: object
  readonly transient: ReadonlyMap<string, unknown>
  /** Shapes seen for this class while encoding (usually one). */
  shapes: Array<Shape>
}

interface Shape {
  /**
   * Decoding only: a constructor generated for the shape (prototype = the shape's prototype),
   * which registers the new object and reads its fields in order (named stores, fast); undefined
   * when code generation is unavailable or a key needs the generic path.
   */
  readonly build?: ShapeBuilder | undefined
  readonly id: number
  readonly proto: number
  readonly keys: ReadonlyArray<string>
  /** Per key: true when the field is transient (not written). */
  readonly transient: ReadonlyArray<boolean>
  /** Values restored for transient keys (decoding only). */
  readonly resets: ReadonlyArray<unknown>
  readonly prototype: object | null
}

/** A registry made ready for encoding and decoding; build once and reuse. */
export interface PreparedRegistry {
  readonly classes: ReadonlyArray<PreparedClass>
  readonly byPrototype: ReadonlyMap<object, PreparedClass>
  readonly byName: ReadonlyMap<string, PreparedClass>
  readonly wellKnownByName: ReadonlyMap<string, object>
  readonly wellKnownByValue: ReadonlyMap<object, string>
}

const privateFieldPattern = /(^|[\s;{}])(static\s+)?(async\s+)?\*?#[A-Za-z_$][\w$]*\s*[=;(\n]|this\s*\.\s*#[A-Za-z_$]/m

type ShapeBuilder = new(decoder: Decoder, depth: number) => object

/** Whether `new Function` works here (it does not under --disallow-code-generation-from-strings or a CSP). */
const codeGeneration = ((): boolean => {
  try {
    return new Function("return 1")() === 1
  } catch {
    return false
  }
})()

/**
 * A constructor for objects of one shape: `new F(decoder, depth)` is `Object.create(prototype)`
 * plus the own properties in order, each read from the decoder (transient ones set to their
 * reset value). Keys are embedded as JSON string literals, so no key can inject code.
 */
const shapeBuilder = (prototype: object, keys: ReadonlyArray<string>, transient: ReadonlyArray<boolean>, resets: ReadonlyArray<unknown>): ShapeBuilder | undefined => {
  if (!codeGeneration || keys.includes("__proto__")) return undefined
  const lines = keys.map((key, k) =>
    transient[k] ? `this[${JSON.stringify(key)}] = resets[${k}];` : `this[${JSON.stringify(key)}] = d.value(depth);`
  )
  const source = `"use strict";\nfunction F(d, depth) {\nd.objects.push(this);\n${lines.join("\n")}\n}\nF.prototype = proto;\nreturn F;`
  return new Function("proto", "resets", source)(prototype, resets) as ShapeBuilder
}

const isPrimitive = (value: unknown): boolean =>
  value === undefined || value === null || typeof value === "boolean" || typeof value === "number" || typeof value === "string" || typeof value === "bigint"

export const prepareRegistry = (registry: CodecRegistry): PreparedRegistry => {
  const classes: Array<PreparedClass> = []
  const byPrototype = new Map<object, PreparedClass>()
  const byName = new Map<string, PreparedClass>()
  for (const entry of registry.classes) {
    const ctor = entry.constructor
    if (typeof ctor !== "function" || typeof ctor.prototype !== "object" || ctor.prototype === null) {
      throw new SnapshotRegistryError(`class ${entry.name}: not a constructor`)
    }
    if (byName.has(entry.name)) throw new SnapshotRegistryError(`class name ${entry.name} registered twice`)
    if (byPrototype.has(ctor.prototype)) throw new SnapshotRegistryError(`class ${entry.name} registered twice`)
    if (privateFieldPattern.test(Function.prototype.toString.call(ctor))) {
      throw new SnapshotRegistryError(
        `class ${entry.name} declares #private fields, which a snapshot cannot read or restore: use private-by-convention fields`
      )
    }
    const transient = new Map<string, unknown>()
    for (const [key, value] of Object.entries(entry.transient ?? {})) {
      if (!isPrimitive(value)) throw new SnapshotRegistryError(`class ${entry.name}: transient ${key} must reset to a primitive`)
      transient.set(key, value)
    }
    const prepared: PreparedClass = { index: classes.length, name: entry.name, prototype: ctor.prototype as object, transient, shapes: [] }
    classes.push(prepared)
    byPrototype.set(prepared.prototype, prepared)
    byName.set(entry.name, prepared)
  }
  const wellKnownByName = new Map<string, object>()
  const wellKnownByValue = new Map<object, string>()
  for (const [name, value] of registry.wellKnown) {
    if (typeof value !== "object" || value === null) throw new SnapshotRegistryError(`well-known ${name}: not an object`)
    if (wellKnownByName.has(name)) throw new SnapshotRegistryError(`well-known name ${name} registered twice`)
    const other = wellKnownByValue.get(value)
    if (other !== undefined) throw new SnapshotRegistryError(`well-known ${name} is the same object as ${other}`)
    wellKnownByName.set(name, value)
    wellKnownByValue.set(value, name)
  }
  return { classes, byPrototype, byName, wellKnownByName, wellKnownByValue }
}

// --- encoding --------------------------------------------------------------------------------

// Path bookkeeping (built into text only when an error is thrown).
const P_PROP = 0
const P_INDEX = 1
const P_MAP_KEY = 2
const P_MAP_VALUE = 3
const P_SET = 4
const P_BUFFER = 5

/**
 * Entries per map of an {@link IdTable}. A `Map` rehashes every entry in one go each time it
 * doubles (236 ms at a million object keys here): at most this many, the longest such pause is
 * the doubling to this size, a few milliseconds (docs/engineering.md).
 */
const ID_MAP_ENTRIES = 1 << 15

/**
 * The ids of the objects of one kind met so far, in maps of at most {@link ID_MAP_ENTRIES}
 * entries: when the newest is full, another is begun (the full ones are never touched again but
 * for look-ups). A look-up asks the newest map first; an object set again (a well-known object's
 * id replacing its placeholder) is set in the newest map, which then answers for it first.
 */
class IdTable {
  private readonly full: Array<Map<object, number>> = []
  private newest = new Map<object, number>()

  get(value: object): number | undefined {
    const id = this.newest.get(value)
    if (id !== undefined) return id
    for (let i = this.full.length - 1; i >= 0; i--) {
      const older = this.full[i]!.get(value)
      if (older !== undefined) return older
    }
    return undefined
  }

  set(value: object, id: number): void {
    if (this.newest.size >= ID_MAP_ENTRIES) {
      this.full.push(this.newest)
      this.newest = new Map()
    }
    this.newest.set(value, id)
  }
}

/** What the encoder knows of a prototype (see `Encoder.protos`). */
interface ProtoEntry {
  readonly ids: IdTable
  readonly typedKind: number | undefined
  readonly cls: PreparedClass | undefined
}

interface Deferred {
  readonly value: object
  readonly kind: number
  readonly shape: Shape | undefined
  /** Where it was met: the deferred body it was met in (-1: the root's) and the path from there. */
  readonly parent: number
  readonly pathKinds: ReadonlyArray<number>
  readonly pathKeys: ReadonlyArray<unknown>
  /** Its depth from the root (0: the root). */
  readonly at: number
  /** Its length or size when its header was written (-1: an object), checked when its body is (in slices). */
  readonly size: number
}

export interface EncodeOptions {
  /** Written into the header; `decode` refuses bytes whose context differs from the expected one. */
  readonly context: string
  /** Name of the root in error paths. */
  readonly rootName?: string
  /** Initial buffer size (the buffer grows by doubling). */
  readonly sizeHint?: number
  /**
   * Check every object's own properties (not only the first of each shape) and refuse extra
   * properties on arrays, maps, sets and typed arrays: slower; for tests, which thereby vouch
   * for the fast mode on the same kinds of graphs.
   */
  readonly strict?: boolean
}

/** How {@link encodeInSlices} divides its work. */
export interface SliceOptions {
  /**
   * Asked after each deferred body (and each group of a long collection's entries) with the
   * bytes written in the step so far: true ends the step (a step writes at least one of them).
   */
  readonly endStep: (bytesInStep: number) => boolean
  /**
   * Containers at depths 1 to `depth` from the root (1: the root's own fields and elements; 2:
   * theirs) are deferred, each its own body, so no body holds more than one of them does (the
   * engine's snapshot uses 4: EngineSnapshot.snapshotInSlices says what that makes bodies of).
   */
  readonly depth: number
  /** The output is chunks of about this many bytes (never a copy of what is already written). */
  readonly chunkBytes: number
}

class Encoder {
  private bytes: Uint8Array
  private view: DataView
  private pos = 0
  /**
   * What the encoder knows of each prototype it handles: the map of ids of its objects met so far
   * (-1: a well-known object not met yet), and its typed-array kind or registered class. One id
   * table per kind of object (arrays, plain objects, maps and sets, typed arrays, buffers) and per
   * registered class, each in maps of bounded size ({@link IdTable}): a single map of a million
   * objects held the event loop a quarter of a second each time it doubled.
   */
  private readonly protos = new Map<object, ProtoEntry>()
  /** Plain objects of a null prototype share the plain objects' ids. */
  private readonly nullProto: ProtoEntry
  /** Well-known objects of other prototypes. */
  private readonly otherIds = new IdTable()
  private nextId = 0
  /**
   * The table of short strings written so far (their index in order of first use), one map per
   * length and last character: smaller maps, shorter rehashes (see `plainIds`). Addresses of one
   * chain all have one length; their last characters spread them over 16 (hex) to 58 (base58) maps.
   */
  private readonly stringTables: Array<Map<string, number> | undefined> = new Array(LONG_STRING * 64)
  private stringCount = 0
  private nextShape = 0
  private readonly plainShapes: Array<Shape> = []
  private readonly nullShapes: Array<Shape> = []
  private readonly deferred: Array<Deferred> = []
  private readonly pathKind: Array<number> = []
  private readonly pathKey: Array<unknown> = []
  private depth = 0
  /** The deferred body being written (-1: the root's). */
  private current = -1
  /** The depth from the root of the body being written (0: the root's). */
  private base = 0
  /** Containers at depths 1..sliceDepth from the root are deferred (0: only those past maxDepth). */
  private readonly sliceDepth: number
  /** Above 0: the output is a list of chunks of this size (full ones in `chunks`), not one buffer that doubles. */
  private readonly chunkBytes: number
  private readonly chunks: Array<Uint8Array> = []
  /** Bytes in `chunks`. */
  private flushed = 0

  constructor(
    private readonly registry: PreparedRegistry,
    sizeHint: number,
    private readonly rootName: string,
    private readonly strict: boolean,
    slicing?: Pick<SliceOptions, "depth" | "chunkBytes">
  ) {
    this.sliceDepth = slicing?.depth ?? 0
    this.chunkBytes = slicing?.chunkBytes ?? 0
    this.bytes = new Uint8Array(Math.max(1024, sizeHint))
    this.view = new DataView(this.bytes.buffer)
    for (const cls of registry.classes) {
      cls.shapes = []
      this.protos.set(cls.prototype, { ids: new IdTable(), typedKind: undefined, cls })
    }
    const plain: ProtoEntry = { ids: new IdTable(), typedKind: undefined, cls: undefined }
    this.nullProto = plain
    this.protos.set(Object.prototype, plain)
    this.protos.set(Array.prototype, { ids: new IdTable(), typedKind: undefined, cls: undefined })
    const collections = new IdTable()
    this.protos.set(Map.prototype, { ids: collections, typedKind: undefined, cls: undefined })
    this.protos.set(Set.prototype, { ids: collections, typedKind: undefined, cls: undefined })
    const typed = new IdTable()
    for (const [proto, typedKind] of typedArrayKindOf) this.protos.set(proto, { ids: typed, typedKind, cls: undefined })
    this.protos.set(ArrayBuffer.prototype, { ids: new IdTable(), typedKind: undefined, cls: undefined })
    for (const value of registry.wellKnownByValue.keys()) {
      const ids = this.entryOf(Object.getPrototypeOf(value) as object | null)?.ids ?? this.otherIds
      ids.set(value, -1)
    }
  }

  private entryOf(proto: object | null): ProtoEntry | undefined {
    return proto === null ? this.nullProto : this.protos.get(proto)
  }

  // --- bytes

  private grow(need: number): void {
    if (this.chunkBytes > 0) {
      // The next chunk: what is written stays where it is (no copy, no pause for it).
      this.chunks.push(this.bytes.subarray(0, this.pos))
      this.flushed += this.pos
      this.bytes = new Uint8Array(Math.max(this.chunkBytes, need))
      this.view = new DataView(this.bytes.buffer)
      this.pos = 0
      return
    }
    let size = this.bytes.length * 2
    while (size < this.pos + need) size *= 2
    const next = new Uint8Array(size)
    next.set(this.bytes.subarray(0, this.pos))
    this.bytes = next
    this.view = new DataView(next.buffer)
  }

  private ensure(need: number): void {
    if (this.pos + need > this.bytes.length) this.grow(need)
  }

  private u8(value: number): void {
    if (this.pos >= this.bytes.length) this.grow(1)
    this.bytes[this.pos++] = value
  }

  /** Unsigned varint (values below 2^53). */
  private varint(value: number): void {
    if (this.pos + 8 > this.bytes.length) this.grow(8)
    const bytes = this.bytes
    let pos = this.pos
    if (value < 0x80) {
      bytes[pos] = value
      this.pos = pos + 1
      return
    }
    if (value < 0x80000000) {
      while (value >= 0x80) {
        bytes[pos++] = (value & 0x7f) | 0x80
        value >>>= 7
      }
      bytes[pos++] = value
      this.pos = pos
      return
    }
    while (value >= 0x80) {
      bytes[pos++] = (value % 0x80) | 0x80
      value = Math.floor(value / 0x80)
    }
    bytes[pos++] = value
    this.pos = pos
  }

  private float(value: number): void {
    this.ensure(9)
    this.bytes[this.pos++] = T_FLOAT
    this.view.setFloat64(this.pos, value, true)
    this.pos += 8
  }

  private rawString(text: string): void {
    // ASCII (the common case) in one pass: one byte per code unit, the length known up front.
    const length = text.length
    // Room for the longest form first: a lone surrogate rewrites the tag before `start`, which
    // must then be in the same buffer (the caller made room for the tag with the string).
    this.ensure(9 + 3 * length)
    const start = this.pos
    this.varint(length)
    this.ensure(length)
    const end = copyAscii(text, this.bytes, this.pos)
    if (end >= 0) {
      this.pos = end
      return
    }
    this.pos = start
    if (utf8Length(text) >= 0) return this.utf8String(text)
    // Not well-formed UTF-16 (a lone surrogate): the code units as they are.
    const tag = start === 0 ? -1 : this.bytes[start - 1]
    if (tag !== T_STRING_NEW && tag !== T_STRING_LONG) throw new Error("lone surrogate outside a string value")
    this.bytes[start - 1] = tag === T_STRING_NEW ? T_STRING_UTF16 : T_STRING_LONG_UTF16
    this.varint(length)
    this.ensure(2 * length)
    this.pos = copyUtf16(text, this.view, this.pos)
  }

  private utf8String(text: string): void {
    const byteLength = utf8Length(text)
    if (byteLength < 0) throw new Error("lone surrogate") // callers check first
    this.varint(byteLength)
    this.ensure(byteLength)
    const { written } = textEncoder.encodeInto(text, this.bytes.subarray(this.pos, this.pos + byteLength))
    if (written !== byteLength) throw new Error("UTF-8 length mismatch")
    this.pos += written
  }

  private string(text: string): void {
    if (text.length === 0) return this.u8(T_STRING_EMPTY)
    if (text.length >= LONG_STRING) {
      // Long strings are mostly unique (transaction hashes): written inline, outside the table.
      this.ensure(10 + 3 * text.length)
      this.u8(T_STRING_LONG)
      this.rawString(text)
      return
    }
    const table = text.length * 64 + (text.charCodeAt(text.length - 1) & 63)
    const strings = this.stringTables[table] ?? (this.stringTables[table] = new Map())
    const known = strings.get(text)
    if (known !== undefined) {
      this.u8(T_STRING_REF)
      this.varint(known)
      return
    }
    strings.set(text, this.stringCount++)
    this.ensure(10 + 3 * text.length)
    this.u8(T_STRING_NEW)
    this.rawString(text)
  }

  // --- errors

  private pathText(): string {
    // The chain of deferred bodies leading here, outermost first, then the segments inside.
    const chain: Array<{ readonly kinds: ReadonlyArray<number>; readonly keys: ReadonlyArray<unknown>; readonly depth: number }> = [
      { kinds: this.pathKind, keys: this.pathKey, depth: this.depth }
    ]
    for (let at = this.current; at >= 0; ) {
      const item = this.deferred[at]!
      chain.push({ kinds: item.pathKinds, keys: item.pathKeys, depth: item.pathKinds.length })
      at = item.parent
    }
    let text = this.rootName
    for (let c = chain.length - 1; c >= 0; c--) {
      const { depth, keys, kinds } = chain[c]!
      for (let i = 0; i < depth; i++) text += segmentText(kinds[i]!, keys[i])
    }
    return text
  }

  private fail(message: string): never {
    throw new SnapshotEncodeError(message, this.pathText())
  }

  private enter(kind: number, key: unknown): void {
    this.pathKind[this.depth] = kind
    this.pathKey[this.depth] = key
    this.depth++
  }

  // --- values

  encodeRoot(root: unknown, context: string): Uint8Array {
    this.begin(root, context)
    // Deferred bodies, first deferred first (their own deep children are deferred again).
    for (let i = 0; i < this.deferred.length; i++) this.deferredBody(i)
    this.u8(T_END)
    return this.bytes.subarray(0, this.pos)
  }

  /**
   * {@link encodeRoot} a step at a time: a step writes deferred bodies until `endStep` says so;
   * a long map, set or array is written a group of entries at a time, so one can end a step too.
   */
  *encodeRootInSlices(root: unknown, context: string, endStep: (bytesInStep: number) => boolean): Generator<void, Array<Uint8Array>, void> {
    this.begin(root, context)
    let mark = this.written()
    const stepEnds = (): boolean => {
      if (!endStep(this.written() - mark)) return false
      mark = this.written()
      return true
    }
    for (let i = 0; i < this.deferred.length; i++) {
      const item = this.deferred[i]!
      if (item.size > ENTRIES_PER_GROUP) yield* this.longBodyInSteps(i, stepEnds)
      else this.deferredBody(i)
      if (stepEnds()) yield
    }
    this.u8(T_END)
    this.chunks.push(this.bytes.subarray(0, this.pos))
    return this.chunks
  }

  /** A deferred map, set or array, a group of entries per step when `stepEnds` says so; the same bytes as `body`. */
  private *longBodyInSteps(i: number, stepEnds: () => boolean): Generator<void, void, void> {
    const item = this.enterDeferred(i)
    let n = 0
    if (item.kind === K_MAP) {
      for (const [key, element] of item.value as Map<unknown, unknown>) {
        this.mapEntry(key, element, n)
        if (++n % ENTRIES_PER_GROUP === 0 && stepEnds()) yield
      }
    } else if (item.kind === K_SET) {
      for (const member of item.value as Set<unknown>) {
        this.setMember(member, n)
        if (++n % ENTRIES_PER_GROUP === 0 && stepEnds()) yield
      }
    } else {
      const array = item.value as Array<unknown>
      while (n < array.length) {
        this.arrayElement(array, n)
        if (++n % ENTRIES_PER_GROUP === 0 && stepEnds()) yield
      }
    }
    // the size again: an entry added (or removed) between two steps
    if (n !== item.size || !this.unchangedSince(item)) this.changed()
    this.u8(integrityOf(item.value))
  }

  private changed(): never {
    throw new SnapshotChangedError("the state changed while it was written in slices (a change between two steps of encodeInSlices)", this.pathText())
  }

  private written(): number {
    return this.flushed + this.pos
  }

  /** The header and the root (containers past the slice depth or maxDepth as headers only). */
  private begin(root: unknown, context: string): void {
    if (!littleEndian) throw new SnapshotEncodeError("snapshots need a little-endian platform", this.rootName)
    this.ensure(8)
    this.view.setUint32(0, MAGIC, true)
    this.view.setUint16(4, FORMAT_VERSION, true)
    this.bytes[6] = 1 // flags: little-endian typed-array contents
    this.bytes[7] = 0
    this.pos = 8
    this.rawString(context)
    this.value(root)
  }

  private deferredBody(i: number): void {
    const item = this.enterDeferred(i)
    this.body(item.value, item.kind, item.shape)
  }

  /** Makes deferred body `i` the one being written; in slices, first checks it still matches its header. */
  private enterDeferred(i: number): Deferred {
    const item = this.deferred[i]!
    this.current = i
    this.depth = 0
    this.base = item.at
    // Written in slices, the graph could have changed since the header: refuse rather than
    // write a body that does not match its header (the caller holds every writer off meanwhile).
    if (this.sliceDepth > 0 && !this.unchangedSince(item)) this.changed()
    return item
  }

  private unchangedSince(item: Deferred): boolean {
    switch (item.kind) {
      case K_ARRAY:
        return (item.value as Array<unknown>).length === item.size
      case K_MAP:
        return (item.value as Map<unknown, unknown>).size === item.size
      case K_SET:
        return (item.value as Set<unknown>).size === item.size
      default: {
        const keys = item.shape!.keys
        let k = 0
        for (const key in item.value) if (keys[k++] !== key) return false
        return k === keys.length
      }
    }
  }

  private value(value: unknown): void {
    switch (typeof value) {
      case "number": {
        if ((value | 0) === value && (value !== 0 || 1 / value > 0)) {
          this.u8(T_INT)
          this.varint(value >= 0 ? value * 2 : -value * 2 - 1)
        } else this.float(value)
        return
      }
      case "string":
        return this.string(value)
      case "object":
        if (value === null) return this.u8(T_NULL)
        return this.object(value)
      case "bigint":
        return this.bigint(value)
      case "boolean":
        return this.u8(value ? T_TRUE : T_FALSE)
      case "undefined":
        return this.u8(T_UNDEFINED)
      case "function":
        return this.fail(`a function (${(value as { name?: string }).name || "anonymous"}) cannot be snapshotted`)
      case "symbol":
        return this.fail(`a symbol (${String(value)}) cannot be snapshotted`)
    }
  }

  private bigint(value: bigint): void {
    if (value === 0n) return this.u8(T_BIGINT_ZERO)
    if (value >= MIN_INT64 && value <= MAX_INT64) {
      this.ensure(9)
      this.bytes[this.pos++] = T_BIGINT_64
      this.view.setBigInt64(this.pos, value, true)
      this.pos += 8
      return
    }
    if (value >= MIN_INT128 && value <= MAX_INT128) {
      // two 64-bit limbs: the low one unsigned, the high one signed
      this.ensure(17)
      this.bytes[this.pos++] = T_BIGINT_128
      this.view.setBigUint64(this.pos, BigInt.asUintN(64, value), true)
      this.view.setBigInt64(this.pos + 8, value >> 64n, true)
      this.pos += 16
      return
    }
    const negative = value < 0n
    const hex = (negative ? -value : value).toString(16)
    this.u8(T_BIGINT_BIG)
    this.u8(negative ? 1 : 0)
    this.varint(hex.length)
    this.ensure(hex.length)
    for (let i = 0; i < hex.length; i++) this.bytes[this.pos++] = hex.charCodeAt(i)
  }

  private object(value: object): void {
    const proto = Object.getPrototypeOf(value) as object | null
    const entry = this.entryOf(proto)
    const ids = entry?.ids ?? this.otherIds
    const typedKind = entry?.typedKind
    const cls = entry?.cls
    const id = ids.get(value)
    if (id !== undefined) {
      if (id >= 0) {
        this.u8(T_REF)
        this.varint(id)
        return
      }
      // a well-known object, met for the first time
      ids.set(value, this.nextId++)
      this.u8(T_WELL_KNOWN)
      this.string(this.registry.wellKnownByValue.get(value)!)
      return
    }
    if (this.strict) {
      if (proto === Array.prototype) this.verifyNoExtras(value, "array")
      else if (proto === Map.prototype) this.verifyNoExtras(value, "map")
      else if (proto === Set.prototype) this.verifyNoExtras(value, "set")
      else if (typedKind !== undefined) this.verifyNoExtras(value, "typed array")
    }
    if (proto === Array.prototype) {
      ids.set(value, this.nextId++)
      return this.container(value, K_ARRAY, undefined)
    }
    if (proto === Object.prototype || proto === null) {
      const shape = this.shapeOf(value, proto === null ? PROTO_NULL : PROTO_PLAIN, proto, undefined)
      ids.set(value, this.nextId++)
      return this.container(value, K_OBJECT, shape)
    }
    if (proto === Map.prototype || proto === Set.prototype) {
      ids.set(value, this.nextId++)
      return this.container(value, proto === Map.prototype ? K_MAP : K_SET, undefined)
    }
    if (typedKind !== undefined) return this.typedArray(value as TypedArray, typedKind, ids)
    if (proto === ArrayBuffer.prototype) return this.buffer(value as ArrayBuffer, ids)
    if (cls !== undefined) {
      const shape = this.shapeOf(value, cls.index, proto, cls)
      ids.set(value, this.nextId++)
      return this.container(value, K_OBJECT, shape)
    }
    const ctor = (proto as { constructor?: { name?: string } }).constructor
    return this.fail(`an instance of an unregistered class (${typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : "unknown"}) cannot be snapshotted`)
  }

  private typedArray(value: TypedArray, kind: number, ids: IdTable): void {
    const buffer = value.buffer
    if (!(buffer instanceof ArrayBuffer)) return this.fail("a typed array over a SharedArrayBuffer cannot be snapshotted")
    ids.set(value, this.nextId++)
    this.u8(T_TYPED)
    this.u8(kind)
    this.varint(value.byteOffset)
    this.varint(value.length)
    this.enter(P_BUFFER, undefined)
    this.object(buffer)
    this.depth--
  }

  private buffer(value: ArrayBuffer, ids: IdTable): void {
    if ((value as { resizable?: boolean }).resizable === true) return this.fail("a resizable ArrayBuffer cannot be snapshotted")
    ids.set(value, this.nextId++)
    const length = value.byteLength
    this.u8(T_BUFFER)
    this.varint(length)
    this.ensure(length)
    this.bytes.set(new Uint8Array(value), this.pos)
    this.pos += length
  }

  /** The shape of an object: its prototype and own keys; checked thoroughly when first seen. */
  private shapeOf(value: object, protoIndex: number, proto: object | null, cls: PreparedClass | undefined): Shape {
    const shapes = cls !== undefined ? cls.shapes : protoIndex === PROTO_NULL ? this.nullShapes : this.plainShapes
    // Known shapes, most recently matched first: compare the enumerable keys in order without
    // allocating (for-in walks V8's enum cache; prototypes of registered classes have no
    // enumerable members, which the first object of each shape verifies below).
    for (let s = shapes.length - 1; s >= 0; s--) {
      const shape = shapes[s]!
      const known = shape.keys
      let k = 0
      let same = true
      for (const key in value) {
        if (known[k] !== key) {
          same = false
          break
        }
        k++
      }
      if (same && k === known.length) {
        if (s !== shapes.length - 1) {
          shapes[s] = shapes[shapes.length - 1]!
          shapes[shapes.length - 1] = shape
        }
        if (this.strict) this.verifyProperties(value, shape.keys)
        return shape
      }
    }
    const keys = Object.keys(value)
    this.verifyProperties(value, keys)
    const transient = keys.map((key) => cls !== undefined && cls.transient.has(key))
    const shape: Shape = { id: -1, proto: protoIndex, keys, transient, resets: [], prototype: proto }
    shapes.push(shape)
    return shape
  }

  /** Every own property must be a plain, enumerable, string-keyed data property, none inherited. */
  private verifyProperties(value: object, keys: ReadonlyArray<string>): void {
    const count = keys.length
    const symbols = Object.getOwnPropertySymbols(value)
    if (symbols.length > 0) this.fail(`a symbol-keyed property (${String(symbols[0])}) cannot be snapshotted`)
    let inherited: string | undefined
    let n = 0
    for (const key in value) {
      if (keys[n] !== key) {
        inherited = key
        break
      }
      n++
    }
    if (inherited !== undefined || n !== count) {
      this.fail(`an enumerable inherited property (${String(inherited)}) on the prototype cannot be snapshotted`)
    }
    // A new shape: every own property must be a plain, enumerable data property.
    const names = Object.getOwnPropertyNames(value)
    if (names.length !== count) {
      const hidden = names.find((name) => !keys.includes(name))
      this.fail(`a non-enumerable own property (${String(hidden)}) cannot be snapshotted`)
    }
    const frozen = Object.isFrozen(value)
    const sealed = Object.isSealed(value)
    for (const key of keys) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key)!
      if (!("value" in descriptor)) this.fail(`an accessor own property (${key}) cannot be snapshotted`)
      if (!frozen && descriptor.writable === false) {
        this.fail(`a read-only own property (${key}) of an unfrozen object cannot be snapshotted`)
      }
      if (!sealed && descriptor.configurable === false) {
        this.fail(`a non-configurable own property (${key}) of an unsealed object cannot be snapshotted`)
      }
    }
  }

  /** Strict mode: arrays, maps, sets and typed arrays must carry nothing but their contents. */
  private verifyNoExtras(value: object, kind: "array" | "map" | "set" | "typed array"): void {
    const symbols = Object.getOwnPropertySymbols(value)
    const article = kind === "array" ? "an" : "a"
    if (symbols.length > 0) this.fail(`a symbol-keyed property (${String(symbols[0])}) of ${article} ${kind} cannot be snapshotted`)
    const names = Object.getOwnPropertyNames(value)
    const length = kind === "array" || kind === "typed array" ? (value as { length: number }).length : 0
    for (const name of names) {
      if (kind === "array" && name === "length") continue
      const index = Number(name)
      if ((kind === "array" || kind === "typed array") && Number.isInteger(index) && index >= 0 && index < length && String(index) === name) continue
      this.fail(`a property (${name}) of ${article} ${kind} besides its contents cannot be snapshotted`)
    }
  }

  private container(value: object, kind: number, shape: Shape | undefined): void {
    const depth = this.depth
    const deferred = depth >= maxDepth || (depth > 0 && this.base + depth <= this.sliceDepth)
    if (deferred) {
      this.u8(T_DEFERRED)
      this.deferred.push({
        value,
        kind,
        shape,
        parent: this.current,
        pathKinds: this.pathKind.slice(0, depth),
        pathKeys: this.pathKey.slice(0, depth),
        at: this.base + depth,
        size: kind === K_ARRAY ? (value as Array<unknown>).length : kind === K_MAP || kind === K_SET ? (value as Map<unknown, unknown>).size : -1
      })
    }
    // One small function per kind and step: a rarely taken branch inside a shared function can
    // leave V8 deoptimizing the same code over and over.
    switch (kind) {
      case K_OBJECT:
        this.objectHeader(shape!)
        break
      case K_ARRAY:
        this.arrayHeader(value as Array<unknown>)
        break
      case K_MAP:
        this.u8(T_MAP)
        this.varint((value as Map<unknown, unknown>).size)
        break
      case K_SET:
        this.u8(T_SET)
        this.varint((value as Set<unknown>).size)
        break
    }
    if (!deferred) this.body(value, kind, shape)
  }

  private body(value: object, kind: number, shape: Shape | undefined): void {
    switch (kind) {
      case K_OBJECT:
        this.objectBody(value as Record<string, unknown>, shape!)
        break
      case K_ARRAY:
        this.arrayBody(value as Array<unknown>)
        break
      case K_MAP:
        this.mapBody(value as Map<unknown, unknown>)
        break
      case K_SET:
        this.setBody(value as Set<unknown>)
        break
    }
    this.u8(integrityOf(value))
  }

  private objectHeader(s: Shape): void {
    this.u8(T_OBJECT)
    if (s.id >= 0) {
      this.varint(s.id)
      return
    }
    this.shapeDefinition(s)
  }

  private shapeDefinition(s: Shape): void {
    ;(s as { id: number }).id = this.nextShape++
    this.varint(s.id)
    // prototype, keys, transient keys
    this.varint(s.proto + 2) // PROTO_NULL → 0, PROTO_PLAIN → 1, class i → i + 2
    if (s.proto >= 0) this.string(this.registry.classes[s.proto]!.name)
    this.varint(s.keys.length)
    for (const key of s.keys) this.string(key)
    let transientCount = 0
    for (const t of s.transient) if (t) transientCount++
    this.varint(transientCount)
    for (let k = 0; k < s.keys.length; k++) if (s.transient[k]) this.varint(k)
  }

  private arrayHeader(array: Array<unknown>): void {
    const holes = hasHoles(array)
    this.u8(T_ARRAY)
    this.varint(array.length)
    this.u8(holes ? 1 : 0)
  }

  private objectBody(record: Record<string, unknown>, s: Shape): void {
    const transient = s.transient
    // for-in reads each value through V8's enum cache (the keys are the shape's, checked).
    let k = 0
    for (const key in record) {
      if (!transient[k]) {
        this.enter(P_PROP, key)
        this.value(record[key])
        this.depth--
      }
      k++
    }
  }

  private arrayBody(array: Array<unknown>): void {
    const length = array.length
    for (let i = 0; i < length; i++) this.arrayElement(array, i)
  }

  private arrayElement(array: Array<unknown>, i: number): void {
    const element = array[i]
    if (element === undefined && !(i in array)) return this.u8(T_HOLE)
    this.enter(P_INDEX, i)
    this.value(element)
    this.depth--
  }

  private mapBody(map: Map<unknown, unknown>): void {
    let i = 0
    map.forEach((element, key) => this.mapEntry(key, element, i++))
  }

  private setBody(set: Set<unknown>): void {
    let i = 0
    set.forEach((member) => this.setMember(member, i++))
  }

  private mapEntry(key: unknown, element: unknown, i: number): void {
    this.enter(P_MAP_KEY, i)
    this.value(key)
    this.depth--
    this.enter(P_MAP_VALUE, key)
    this.value(element)
    this.depth--
  }

  private setMember(member: unknown, i: number): void {
    this.enter(P_SET, i)
    this.value(member)
    this.depth--
  }
}

/*
 * V8 note: a function whose first call runs a long loop gets on-stack-replaced code that later
 * calls enter again; a property access after the loop that had no feedback yet then deoptimizes
 * on every call without the code ever being replaced. So loops here sit in small functions that
 * end with the loop (or return a local), and the work after a loop is done by the caller.
 */

/** Copies an ASCII string's code units as bytes at `at`; the end, or -1 at the first non-ASCII unit. */
const copyAscii = (text: string, bytes: Uint8Array, at: number): number => {
  const length = text.length
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 0x80) return -1
    bytes[at + i] = code
  }
  return at + length
}

const copyUtf16 = (text: string, view: DataView, at: number): number => {
  for (let u = 0; u < text.length; u++) view.setUint16(at + 2 * u, text.charCodeAt(u), true)
  return at + 2 * text.length
}

const readUtf16 = (view: DataView, at: number, length: number): string => {
  let text = ""
  for (let u = 0; u < length; u++) text += String.fromCharCode(view.getUint16(at + 2 * u, true))
  return text
}

const hasHoles = (array: Array<unknown>): boolean => {
  const length = array.length
  for (let i = 0; i < length; i++) if (array[i] === undefined && !(i in array)) return true
  return false
}

const integrityOf = (value: object): number => {
  if (Object.isExtensible(value)) return EXTENSIBLE
  if (Object.isFrozen(value)) return FROZEN
  if (Object.isSealed(value)) return SEALED
  return NON_EXTENSIBLE
}

const segmentText = (kind: number, key: unknown): string => {
  switch (kind) {
    case P_PROP:
      return /^[A-Za-z_$][\w$]*$/.test(String(key)) ? `.${String(key)}` : `[${JSON.stringify(key)}]`
    case P_INDEX:
      return `[${String(key)}]`
    case P_MAP_KEY:
      return `.<key of entry ${String(key)}>`
    case P_MAP_VALUE:
      return `.get(${describeKey(key)})`
    case P_SET:
      return `.<member ${String(key)}>`
    default:
      return ".buffer"
  }
}

const describeKey = (key: unknown): string => {
  if (typeof key === "string") return JSON.stringify(key.length > 80 ? `${key.slice(0, 77)}...` : key)
  if (typeof key === "number" || typeof key === "boolean" || key === null || key === undefined) return String(key)
  if (typeof key === "bigint") return `${key}n`
  return `<${Array.isArray(key) ? "array" : typeof key}>`
}

/** Serializes everything reachable from `root`. Throws {@link SnapshotEncodeError} on anything it cannot restore exactly. */
export const encode = (registry: PreparedRegistry, root: unknown, options: EncodeOptions): Uint8Array =>
  exclusively(registry, () => new Encoder(registry, options.sizeHint ?? 1 << 20, options.rootName ?? "root", options.strict === true).encodeRoot(root, options.context))

/**
 * {@link encode} a step at a time, so a caller can let other work run between steps (a service
 * answering reads while its state is written): each `next()` writes bodies until `endStep`; the
 * result is the bytes in chunks, which concatenated are bytes `decode` reads (the same graph as
 * `encode` writes, deferred differently). Nothing reachable from `root` may change until the
 * last step (a change of a container's size or keys that is still to be written is refused with
 * {@link SnapshotEncodeError}; other changes would be written as they are then). One encoding
 * per registry at a time: another `encode` of the same registry before this one finished (or was
 * ended with `return()`) throws.
 */
export function* encodeInSlices(
  registry: PreparedRegistry,
  root: unknown,
  options: EncodeOptions & SliceOptions
): Generator<void, ReadonlyArray<Uint8Array>, void> {
  claim(registry)
  try {
    const encoder = new Encoder(registry, options.chunkBytes, options.rootName ?? "root", options.strict === true, options)
    return yield* encoder.encodeRootInSlices(root, options.context, options.endStep)
  } finally {
    busy.delete(registry)
  }
}

/** Registries being encoded: an encoder keeps its shapes on the registry's classes, so one at a time. */
const busy = new WeakSet<PreparedRegistry>()

const claim = (registry: PreparedRegistry): void => {
  if (busy.has(registry)) throw new SnapshotEncodeError("another encoding of this registry is in progress", "root")
  busy.add(registry)
}

const exclusively = <A>(registry: PreparedRegistry, encodeNow: () => A): A => {
  claim(registry)
  try {
    return encodeNow()
  } finally {
    busy.delete(registry)
  }
}

// --- decoding --------------------------------------------------------------------------------

interface PendingBody {
  readonly value: object
  readonly kind: number
  readonly shape: Shape | undefined
  readonly length: number
  readonly holes: boolean
}

/** What a snapshot says about itself before its graph is decoded. */
export interface SnapshotHeader {
  readonly formatVersion: number
  readonly context: string
}

class Decoder {
  private readonly view: DataView
  private pos = 0
  /** Read by the generated shape constructors. */
  readonly objects: Array<unknown> = []
  private readonly strings: Array<string> = []
  private readonly shapes: Array<Shape> = []
  private readonly pending: Array<PendingBody> = []
  private readonly end: number
  /** Whether the root object is referenced from inside the graph. */
  rootReferenced = false

  constructor(private readonly registry: PreparedRegistry, private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.end = bytes.length
  }

  private corrupt(message: string): never {
    throw new SnapshotDecodeError(`corrupt snapshot: ${message} (byte ${this.pos} of ${this.end})`)
  }

  private need(count: number): void {
    if (this.pos + count > this.end) this.corrupt("truncated")
  }

  private u8(): number {
    if (this.pos >= this.end) this.corrupt("truncated")
    return this.bytes[this.pos++]!
  }

  private varint(): number {
    const bytes = this.bytes
    let pos = this.pos
    let result = 0
    let scale = 1
    for (;;) {
      if (pos >= this.end) this.corrupt("truncated")
      const b = bytes[pos++]!
      result += (b & 0x7f) * scale
      if (b < 0x80) break
      scale *= 0x80
      if (scale > 2 ** 56) this.corrupt("varint too long")
    }
    this.pos = pos
    return result
  }

  /** A count of items each taking at least one byte: never more than the bytes left. */
  private count(): number {
    const n = this.varint()
    if (n > this.end - this.pos) this.corrupt(`count ${n} exceeds the bytes left`)
    return n
  }

  private rawString(): string {
    const length = this.varint()
    this.need(length)
    const from = this.pos
    const to = from + length
    this.pos = to
    const bytes = this.bytes
    if (length <= 24) {
      let text = ""
      for (let i = from; i < to; i++) {
        const b = bytes[i]!
        if (b >= 0x80) return this.utf8(from, to)
        text += String.fromCharCode(b)
      }
      return text
    }
    return this.utf8(from, to)
  }

  private utf8(from: number, to: number): string {
    try {
      return textDecoder.decode(this.bytes.subarray(from, to))
    } catch {
      this.pos = from
      this.corrupt("invalid UTF-8")
    }
  }

  private utf16String(): string {
    const text = this.utf16Units()
    this.strings.push(text)
    return text
  }

  private utf16Units(): string {
    const length = this.varint()
    this.need(2 * length)
    const text = readUtf16(this.view, this.pos, length)
    this.pos += 2 * length
    return text
  }

  private stringValue(): string {
    const tag = this.u8()
    if (tag === T_STRING_NEW) {
      const text = this.rawString()
      this.strings.push(text)
      return text
    }
    if (tag === T_STRING_UTF16) return this.utf16String()
    if (tag === T_STRING_LONG) return this.rawString()
    if (tag === T_STRING_LONG_UTF16) return this.utf16Units()
    if (tag === T_STRING_REF) {
      const index = this.varint()
      if (index >= this.strings.length) this.corrupt(`string reference ${index} out of range`)
      return this.strings[index]!
    }
    if (tag === T_STRING_EMPTY) return ""
    return this.corrupt(`expected a string, found tag ${tag}`)
  }

  decodeRoot(expectedContext: string | undefined): unknown {
    const header = readHeader(this.bytes)
    if (expectedContext !== undefined && header.context !== expectedContext) {
      throw new SnapshotDecodeError(`snapshot written by other code (context "${header.context}", expected "${expectedContext}")`)
    }
    this.pos = header.bodyOffset
    const root = this.value(0)
    for (let i = 0; i < this.pending.length; i++) {
      const item = this.pending[i]!
      this.body(item.value, item.kind, item.shape, item.length, item.holes, 1)
    }
    if (this.u8() !== T_END) this.corrupt("missing end tag")
    if (this.pos !== this.end) this.corrupt("trailing bytes")
    return root
  }

  /** Read by the generated shape constructors. */
  value(depth: number): unknown {
    const tag = this.u8()
    switch (tag) {
      case T_UNDEFINED:
        return undefined
      case T_NULL:
        return null
      case T_FALSE:
        return false
      case T_TRUE:
        return true
      case T_INT: {
        const z = this.varint()
        return z % 2 === 0 ? z / 2 : -(z + 1) / 2
      }
      case T_FLOAT: {
        this.need(8)
        const value = this.view.getFloat64(this.pos, true)
        this.pos += 8
        return value
      }
      case T_BIGINT_ZERO:
        return 0n
      case T_BIGINT_64: {
        this.need(8)
        const value = this.view.getBigInt64(this.pos, true)
        this.pos += 8
        return value
      }
      case T_BIGINT_128: {
        this.need(16)
        const low = this.view.getBigUint64(this.pos, true)
        const high = this.view.getBigInt64(this.pos + 8, true)
        this.pos += 16
        return (high << 64n) | low
      }
      case T_BIGINT_BIG: {
        const negative = this.u8() === 1
        const length = this.count()
        let hex = "0x"
        for (let i = 0; i < length; i++) {
          const c = this.bytes[this.pos + i]!
          if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) this.corrupt("bad bigint digits")
          hex += String.fromCharCode(c)
        }
        this.pos += length
        const magnitude = BigInt(hex)
        return negative ? -magnitude : magnitude
      }
      case T_STRING_NEW: {
        const text = this.rawString()
        this.strings.push(text)
        return text
      }
      case T_STRING_REF: {
        const index = this.varint()
        if (index >= this.strings.length) this.corrupt(`string reference ${index} out of range`)
        return this.strings[index]
      }
      case T_STRING_EMPTY:
        return ""
      case T_STRING_UTF16:
        return this.utf16String()
      case T_STRING_LONG:
        return this.rawString()
      case T_STRING_LONG_UTF16:
        return this.utf16Units()
      case T_REF: {
        const id = this.varint()
        if (id >= this.objects.length) this.corrupt(`object reference ${id} out of range`)
        if (id === 0) this.rootReferenced = true
        return this.objects[id]
      }
      case T_WELL_KNOWN: {
        const name = this.stringValue()
        const value = this.registry.wellKnownByName.get(name)
        if (value === undefined) throw new SnapshotDecodeError(`snapshot refers to an unknown well-known object ${name}`)
        this.objects.push(value)
        return value
      }
      case T_TYPED:
        return this.typedArray()
      case T_BUFFER:
        return this.buffer()
      case T_DEFERRED: {
        const containerTag = this.u8()
        return this.container(containerTag, depth, true)
      }
      case T_OBJECT:
      case T_ARRAY:
      case T_MAP:
      case T_SET:
        return this.container(tag, depth, false)
      default:
        return this.corrupt(tag === T_HOLE ? "a hole outside an array" : `unknown tag ${tag}`)
    }
  }

  private typedArray(): TypedArray {
    const kind = this.u8()
    const ctor = typedArrayKinds[kind]
    if (ctor === undefined) this.corrupt(`unknown typed array kind ${kind}`)
    const byteOffset = this.varint()
    const length = this.varint()
    const id = this.objects.length
    this.objects.push(undefined) // reserved: the buffer comes next
    const tag = this.u8()
    let buffer: unknown
    if (tag === T_BUFFER) buffer = this.buffer()
    else if (tag === T_REF) {
      const ref = this.varint()
      if (ref >= this.objects.length) this.corrupt(`object reference ${ref} out of range`)
      buffer = this.objects[ref]
    } else this.corrupt(`expected a typed array's buffer, found tag ${tag}`)
    if (!(buffer instanceof ArrayBuffer)) return this.corrupt("a typed array's buffer is not an ArrayBuffer")
    if (byteOffset % ctor.BYTES_PER_ELEMENT !== 0 || byteOffset + length * ctor.BYTES_PER_ELEMENT > buffer.byteLength) {
      this.corrupt("typed array out of its buffer's bounds")
    }
    const array = new ctor(buffer, byteOffset, length)
    this.objects[id] = array
    return array
  }

  private buffer(): ArrayBuffer {
    const length = this.varint()
    this.need(length)
    const start = this.bytes.byteOffset + this.pos
    const buffer = this.bytes.buffer.slice(start, start + length) as ArrayBuffer
    this.pos += length
    this.objects.push(buffer)
    return buffer
  }

  private shape(): Shape {
    const id = this.varint()
    if (id < this.shapes.length) return this.shapes[id]!
    if (id !== this.shapes.length) this.corrupt(`shape ${id} out of order`)
    const protoCode = this.varint()
    let proto: number
    let prototype: object | null
    let cls: PreparedClass | undefined
    if (protoCode === 0) {
      proto = PROTO_NULL
      prototype = null
    } else if (protoCode === 1) {
      proto = PROTO_PLAIN
      prototype = Object.prototype
    } else {
      const name = this.stringValue()
      cls = this.registry.byName.get(name)
      if (cls === undefined) throw new SnapshotDecodeError(`snapshot holds an instance of class ${name}, which is not registered`)
      proto = cls.index
      prototype = cls.prototype
    }
    const keyCount = this.count()
    const keys: Array<string> = []
    for (let k = 0; k < keyCount; k++) keys.push(this.stringValue())
    const transient = keys.map(() => false)
    const resets: Array<unknown> = keys.map(() => undefined)
    const transientCount = this.count()
    for (let t = 0; t < transientCount; t++) {
      const k = this.varint()
      if (k >= keyCount) this.corrupt("transient key out of range")
      const key = keys[k]!
      if (cls === undefined || !cls.transient.has(key)) {
        throw new SnapshotDecodeError(`snapshot leaves out field ${key}, which the running code does not declare transient`)
      }
      transient[k] = true
      resets[k] = cls.transient.get(key)
    }
    const build = prototype === null ? undefined : shapeBuilder(prototype, keys, transient, resets)
    const shape: Shape = { id, proto, keys, transient, resets, prototype, build }
    this.shapes.push(shape)
    return shape
  }

  private container(tag: number, depth: number, deferred: boolean): object {
    let value: object
    let kind: number
    let shape: Shape | undefined
    let length = 0
    let holes = false
    switch (tag) {
      case T_OBJECT: {
        shape = this.shape()
        const build = shape.build
        if (!deferred && build !== undefined) {
          if (depth > maxDepth) this.corrupt("nesting deeper than the format allows")
          const built = new build(this, depth + 1)
          this.integrity(built)
          return built
        }
        value = shape.prototype === Object.prototype ? {} : Object.create(shape.prototype) as object
        kind = K_OBJECT
        break
      }
      case T_ARRAY:
        length = this.count()
        holes = this.u8() === 1
        value = holes ? new Array(length) : []
        kind = K_ARRAY
        break
      case T_MAP:
        length = this.count()
        value = new Map()
        kind = K_MAP
        break
      case T_SET:
        length = this.count()
        value = new Set()
        kind = K_SET
        break
      default:
        return this.corrupt(`expected a container, found tag ${tag}`)
    }
    this.objects.push(value)
    if (deferred) this.pending.push({ value, kind, shape, length, holes })
    else this.body(value, kind, shape, length, holes, depth + 1)
    return value
  }

  private body(value: object, kind: number, shape: Shape | undefined, length: number, holes: boolean, depth: number): void {
    if (depth > maxDepth + 1) this.corrupt("nesting deeper than the format allows")
    switch (kind) {
      case K_OBJECT:
        this.objectBody(value as Record<string, unknown>, shape!, depth)
        break
      case K_ARRAY:
        if (holes) this.holeyArrayBody(value as Array<unknown>, length, depth)
        else this.arrayBody(value as Array<unknown>, length, depth)
        break
      case K_MAP:
        this.mapBody(value as Map<unknown, unknown>, length, depth)
        if ((value as Map<unknown, unknown>).size !== length) this.corrupt("duplicate map keys")
        break
      case K_SET:
        this.setBody(value as Set<unknown>, length, depth)
        if ((value as Set<unknown>).size !== length) this.corrupt("duplicate set members")
        break
    }
    this.integrity(value)
  }

  // Each loop ends its function (see the V8 note at `hasHoles`).

  private objectBody(record: Record<string, unknown>, s: Shape, depth: number): void {
    const keys = s.keys
    const transient = s.transient
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!
      const field = transient[k] ? s.resets[k] : this.value(depth)
      if (key === "__proto__") Object.defineProperty(record, key, { value: field, writable: true, enumerable: true, configurable: true })
      else record[key] = field
    }
  }

  private holeyArrayBody(array: Array<unknown>, length: number, depth: number): void {
    for (let i = 0; i < length; i++) {
      if (this.bytes[this.pos] === T_HOLE) this.pos++
      else array[i] = this.value(depth)
    }
  }

  private arrayBody(array: Array<unknown>, length: number, depth: number): void {
    for (let i = 0; i < length; i++) {
      if (this.bytes[this.pos] === T_HOLE) this.corrupt("a hole in an array declared without holes")
      array.push(this.value(depth))
    }
  }

  private mapBody(map: Map<unknown, unknown>, length: number, depth: number): void {
    for (let i = 0; i < length; i++) {
      const key = this.value(depth)
      map.set(key, this.value(depth))
    }
  }

  private setBody(set: Set<unknown>, length: number, depth: number): void {
    for (let i = 0; i < length; i++) set.add(this.value(depth))
  }

  private integrity(value: object): void {
    switch (this.u8()) {
      case EXTENSIBLE:
        break
      case NON_EXTENSIBLE:
        Object.preventExtensions(value)
        break
      case SEALED:
        Object.seal(value)
        break
      case FROZEN:
        Object.freeze(value)
        break
      default:
        this.corrupt("unknown integrity level")
    }
  }
}

interface ParsedHeader extends SnapshotHeader {
  readonly bodyOffset: number
}

const readHeader = (bytes: Uint8Array): ParsedHeader => {
  if (bytes.length < 9) throw new SnapshotDecodeError("not a snapshot: too short")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint32(0, true) !== MAGIC) throw new SnapshotDecodeError("not a snapshot: bad magic number")
  const formatVersion = view.getUint16(4, true)
  if (formatVersion !== FORMAT_VERSION) {
    throw new SnapshotDecodeError(`unsupported snapshot format version ${formatVersion} (this code reads version ${FORMAT_VERSION})`)
  }
  if (bytes[6] !== 1) throw new SnapshotDecodeError("snapshot written on a big-endian platform")
  if (!littleEndian) throw new SnapshotDecodeError("snapshots need a little-endian platform")
  // context: varint length + UTF-8
  let pos = 8
  let length = 0
  let scale = 1
  for (;;) {
    if (pos >= bytes.length) throw new SnapshotDecodeError("corrupt snapshot: truncated header")
    const b = bytes[pos++]!
    length += (b & 0x7f) * scale
    if (b < 0x80) break
    scale *= 0x80
    if (scale > 2 ** 28) throw new SnapshotDecodeError("corrupt snapshot: bad header")
  }
  if (pos + length > bytes.length) throw new SnapshotDecodeError("corrupt snapshot: truncated header")
  const context = readUtf8(bytes, pos, pos + length)
  return { formatVersion, context, bodyOffset: pos + length }
}

/** The format version and context of a snapshot, without decoding its graph. */
export const peekHeader = (bytes: Uint8Array): SnapshotHeader => {
  const { context, formatVersion } = readHeader(bytes)
  return { context, formatVersion }
}

/**
 * Rebuilds the graph. With `expectedContext`, bytes written under another context are refused.
 * Throws {@link SnapshotDecodeError} on corrupt bytes, other versions and unknown classes.
 */
export const decode = (registry: PreparedRegistry, bytes: Uint8Array, expectedContext?: string): unknown =>
  decodeGraph(registry, bytes, expectedContext).root

/** {@link decode}, also telling whether the root is referenced from inside the graph (a cycle through it). */
export const decodeGraph = (
  registry: PreparedRegistry,
  bytes: Uint8Array,
  expectedContext?: string
): { readonly root: unknown; readonly rootReferenced: boolean } => {
  try {
    const decoder = new Decoder(registry, bytes)
    const root = decoder.decodeRoot(expectedContext)
    return { root, rootReferenced: decoder.rootReferenced }
  } catch (error) {
    if (error instanceof SnapshotDecodeError) throw error
    // RangeError from a corrupt length, etc.: still a corrupt snapshot
    throw new SnapshotDecodeError(`corrupt snapshot: ${error instanceof Error ? error.message : String(error)}`)
  }
}
