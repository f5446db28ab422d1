/**
 * `pnpm bench wire`: microseconds per object to encode the token and trade objects a simulated
 * market serves — the schema's `Schema.encodeSync`, the compiled check that stands in for it
 * (`CompiledCheck.encoder`, what the HTTP and stream encoders use), and `JSON.stringify` alone for
 * reference. As in the service, each object is encoded once, right after it is built: the market
 * is folded a simulated second at a time, every token that changed gives a fresh token object and
 * every trade a fresh trade object, and one method encodes that second's objects. The methods take
 * turns second by second (this machine's speed drifts by 2x between runs), so every method sees
 * the same drift and the same mix; each method's total time is divided by the objects it encoded
 * (mean), and the median of its per-second figures is printed too (a GC pause lands in one second).
 * Last line: one JSON object.
 *
 *   npm run bench -- wire [--seconds 400] [--seed 1]
 */
import { Schema } from "effect"
import { MarketEngine, Token, Trade } from "@spot/domain"
import { CompiledCheck } from "@spot/adapters-http"
import * as Simulator from "@spot/simulator"
import { numberArg } from "./support/args.js"

const seconds = numberArg("seconds", 400)
const seed = numberArg("seed", 1)
const startTime = 1_700_000_000_000

type Kind = "token" | "trade"
interface Method {
  readonly name: string
  readonly token: (value: unknown) => unknown
  readonly trade: (value: unknown) => unknown
  readonly nanos: Record<Kind, number>
  readonly count: Record<Kind, number>
  /** µs per object of each second this method encoded. */
  readonly seconds: Record<Kind, Array<number>>
}
const method = (name: string, of: (schema: Schema.Codec<unknown, unknown>) => (value: unknown) => unknown): Method => ({
  name,
  token: of(Token as unknown as Schema.Codec<unknown, unknown>),
  trade: of(Trade as unknown as Schema.Codec<unknown, unknown>),
  nanos: { token: 0, trade: 0 },
  count: { token: 0, trade: 0 },
  seconds: { token: [], trade: [] }
})
const methods = [
  method("Schema.encodeSync", (schema) => Schema.encodeSync(schema)),
  method("compiled check", (schema) => CompiledCheck.encoder(schema)),
  method("JSON.stringify", () => (value) => JSON.stringify(value)),
  method("encodeSync + stringify", (schema) => {
    const encode = Schema.encodeSync(schema)
    return (value) => JSON.stringify(encode(value))
  }),
  method("compiled + stringify", (schema) => {
    const encode = CompiledCheck.encoder(schema)
    return (value) => JSON.stringify(encode(value))
  })
]

let sink = 0
const time = (m: Method, kind: Kind, objects: ReadonlyArray<unknown>): void => {
  if (objects.length === 0) return
  const run = m[kind]
  const began = process.hrtime.bigint()
  for (let i = 0; i < objects.length; i++) {
    const out = run(objects[i])
    sink += typeof out === "string" ? out.length : 1
  }
  const nanos = Number(process.hrtime.bigint() - began)
  m.nanos[kind] += nanos
  m.count[kind] += objects.length
  m.seconds[kind].push(nanos / 1_000 / objects.length)
}

const simulator = new Simulator.MarketSimulator({ ...Simulator.defaultSimulatorOptions(startTime), seed, tradesPerSecond: 100 })
const engine = new MarketEngine()
const warmUp = 60
for (let s = 0; s < warmUp + seconds; s++) {
  for (const event of simulator.advance(startTime + (s + 1) * 1_000)) engine.apply(event)
  const changes = engine.drainChanges()
  const tokens = changes.tokens.map((token) => token.toWire())
  const trades = changes.trades.map((record) => record.trade)
  if (s < warmUp) {
    for (const m of methods) for (const value of tokens) m.token(value)
    for (const m of methods) for (const value of trades) m.trade(value)
    continue
  }
  time(methods[s % methods.length]!, "token", tokens)
  time(methods[(s + 1) % methods.length]!, "trade", trades)
}

const mean = (m: Method, kind: Kind) => m.nanos[kind] / 1_000 / m.count[kind]
const median = (m: Method, kind: Kind) => [...m.seconds[kind]].sort((a, b) => a - b)[m.seconds[kind].length >> 1]!
const cell = (m: Method, kind: Kind) => `${mean(m, kind).toFixed(2)} / ${median(m, kind).toFixed(2)}`.padStart(16)
console.log(`µs per object, mean / median of seconds (${methods[0]!.count.token} tokens, ${methods[0]!.count.trade} trades per method)`)
console.log(`${"method".padEnd(24)} ${"token".padStart(16)} ${"trade".padStart(16)}`)
for (const m of methods) console.log(`${m.name.padEnd(24)} ${cell(m, "token")} ${cell(m, "trade")}`)
console.log(JSON.stringify(Object.fromEntries(methods.map((m) => [m.name, { tokenUs: +mean(m, "token").toFixed(2), tradeUs: +mean(m, "trade").toFixed(2) }]))))
if (sink === 0) console.log("")
