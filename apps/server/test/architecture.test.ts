/**
 * Dependencies point inward only: adapters -> application -> domain. The domain imports no
 * adapter, no `node:*`, reads no clock and draws no randomness (time and ids come in as arguments).
 * The simulator is an event source beside the adapters: it imports only the domain, is pure like
 * it, and nothing inward imports it (the server binds it to the application's port).
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..")

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : []
  })

const importsOf = (text: string): Array<string> =>
  [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)].map(
    (m) => (m[1] ?? m[2])!
  )

const violations = (pkg: string, forbidden: (specifier: string) => boolean, bodyRules: Array<[RegExp, string]> = []) =>
  sourceFiles(join(root, pkg, "src")).flatMap((file) => {
    const text = readFileSync(file, "utf8")
    const where = relative(root, file)
    return [
      ...importsOf(text).filter(forbidden).map((s) => `${where} imports ${s}`),
      ...bodyRules.filter(([re]) => re.test(text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, ""))).map(([, what]) => `${where} ${what}`)
    ]
  })

const adapters = /^@spot\/(adapters-|server|simulator)/

const ioLibrary = (s: string) => /^(ws|pg|@effect\/platform|@effect\/sql|@electric-sql)/.test(s) || s === "effect/http" || s === "effect/http-api"

/** What a pure package's code must not contain. */
const pure: Array<[RegExp, string]> = [
  [/\bDate\.now\s*\(/, "reads the clock (Date.now)"],
  [/\bnew Date\s*\(\s*\)/, "reads the clock (new Date())"],
  [/\bperformance\.now\s*\(/, "reads the clock (performance.now)"],
  [/\bMath\.random\s*\(/, "draws randomness (Math.random)"],
  [/\bprocess\./, "touches the process"],
  [/\bcrypto\.(getRandomValues|randomUUID)/, "draws randomness (crypto)"]
]

describe("architecture", () => {
  it("the domain imports no adapter, no node:*, no I/O library, reads no clock and draws no randomness", () => {
    const found = violations("packages/domain", (s) => s.startsWith("node:") || s.startsWith("@spot/") || ioLibrary(s), pure)
    expect(found).toEqual([])
  })

  it("the simulator imports only the domain, no node:*, no I/O library, reads no clock and draws no randomness", () => {
    const found = violations("packages/simulator", (s) => s.startsWith("node:") || (s.startsWith("@spot/") && s !== "@spot/domain") || ioLibrary(s), pure)
    expect(found).toEqual([])
  })

  it("the application imports only the domain and effect, never an adapter, the simulator or node:*", () => {
    const found = violations("packages/application", (s) => adapters.test(s) || s.startsWith("node:") || /^(ws|pg|@effect\/platform|@effect\/sql|@electric-sql)/.test(s))
    expect(found).toEqual([])
  })

  it("adapters never import each other, the simulator or the server app", () => {
    for (const pkg of ["adapters-http", "adapters-ws", "adapters-storage"]) {
      const found = violations(`packages/${pkg}`, (s) => adapters.test(s) && s !== `@spot/${pkg}`)
      expect(found).toEqual([])
    }
  })

  it("the check itself catches a forbidden import", () => {
    expect(importsOf(`import * as fs from "node:fs"\nexport { x } from "@spot/adapters-http"`)).toEqual(["node:fs", "@spot/adapters-http"])
  })
})
