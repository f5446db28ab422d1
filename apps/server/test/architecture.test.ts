/**
 * The boundaries between the packages, checked by two tools: dependency-cruiser for the import graph
 * (`.dependency-cruiser.cjs`: dependencies point inward, no circle, no reach into another package's
 * folders) and ESLint for what the domain's code does (`eslint.config.mjs`: no clock, no randomness,
 * no timers, no process, no generated code). docs/architecture.md, "Boundaries", says why.
 *
 * Each check also runs on a small tree with one violation per rule, so a rule that stops firing
 * (a pattern that no longer matches, a resolver that loses a package) fails here too.
 */
import { describe, expect, it } from "@effect/vitest"
import { cruise } from "dependency-cruiser"
import type { ICruiseResult } from "dependency-cruiser"
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options"
import { ESLint } from "eslint"
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..")

/** Seconds on a quiet machine; the margin is for a full test run sharing two cores. */
const toolTimeout = 180_000

/** Every violation of `.dependency-cruiser.cjs` in the tree at `baseDir`, one line each. */
const importViolations = async (baseDir: string): Promise<Array<string>> => {
  const options = await extractDepcruiseOptions(join(root, ".dependency-cruiser.cjs"))
  const { output } = await cruise(["packages", "apps"], { ...options, baseDir })
  return (output as ICruiseResult).summary.violations.map((v) =>
    v.cycle === undefined
      ? `${v.rule.name}: ${v.from} → ${v.to}`
      : `${v.rule.name}: ${[v.from, ...v.cycle.map((step) => step.name)].join(" → ")}`
  )
}

/** ESLint's errors under `eslint.config.mjs`, one line each. */
const lintErrors = (results: ReadonlyArray<ESLint.LintResult>): Array<string> =>
  results.flatMap((result) =>
    result.messages
      .filter((m) => m.severity === 2)
      .map((m) => `${relative(root, result.filePath)}:${m.line}:${m.column} ${m.ruleId}: ${m.message}`)
  )

const eslint = new ESLint({ cwd: root })

/** Fails with the violations listed one per line. */
const expectNone = (violations: ReadonlyArray<string>) =>
  expect(violations, `\n${violations.join("\n")}\n`).toEqual([])

describe("architecture", () => {
  it("the import graph keeps every boundary of .dependency-cruiser.cjs", { timeout: toolTimeout }, async () => {
    expectNone(await importViolations(root))
  })

  it("the domain's and the simulator's source read no clock, draw no randomness and generate no code", { timeout: toolTimeout }, async () => {
    expectNone(lintErrors(await eslint.lintFiles(["packages/domain/src", "packages/simulator/src"])))
  })
})

/**
 * A workspace in miniature: the packages by the patterns the rules name (the adapters and the
 * simulator under names the real tree does not have), `effect` and an I/O library as stand-ins in
 * node_modules, and each package linked under its name as pnpm links it.
 */
const fixtureTree: Record<string, string> = {
  "node_modules/effect/package.json": JSON.stringify({
    name: "effect",
    exports: { ".": "./dist/index.js", "./http": "./dist/http/index.js", "./*": "./dist/*.js" }
  }),
  "node_modules/effect/dist/index.js": "export const Schema = {}",
  "node_modules/effect/dist/Schema.js": "export const String = {}",
  "node_modules/effect/dist/http/index.js": "export const HttpServer = {}",
  "node_modules/pg/package.json": JSON.stringify({ name: "pg", main: "index.js" }),
  "node_modules/pg/index.js": "export const Pool = {}",

  "packages/domain/src/index.ts": `import { Schema } from "effect"\nimport * as S from "effect/Schema"\nexport * from "./Fold.js"\nexport { S, Schema }`,
  "packages/domain/src/Fold.ts": `export const fold = (n: number) => n + 1`,
  "packages/domain/src/CircleA.ts": `import { b } from "./CircleB.js"\nexport const a = () => b`,
  "packages/domain/src/CircleB.ts": `import { a } from "./CircleA.js"\nexport const b = () => a`,
  "packages/domain/src/ReadsFiles.ts": `import { readFileSync } from "node:fs"\nexport const read = readFileSync`,
  "packages/domain/src/UsesIoLibrary.ts": `import { Pool } from "pg"\nexport { Pool }`,
  "packages/domain/src/UsesEffectPlatform.ts": `import { HttpServer } from "effect/http"\nexport { HttpServer }`,
  "packages/domain/src/UsesApplication.ts": `import { useCase } from "@spot/application"\nexport { useCase }`,
  "packages/domain/test/support/Kit.ts": `export const kit = 1`,

  "packages/application/src/index.ts": `import { fold } from "@spot/domain"\nexport const useCase = fold`,
  "packages/application/src/UsesAdapter.ts": `import type { Adapter } from "@spot/adapters-one"\nexport type Port = Adapter`,
  "packages/application/test/ReachesIntoDomainTest.test.ts": `import { kit } from "../../domain/test/support/Kit.js"\nexport { kit }`,
  "packages/application/test/UsesAdaptersByName.test.ts": `import { adapter } from "@spot/adapters-one"\nimport { kit } from "../src/index.js"\nexport { adapter, kit }`,

  "packages/adapters-one/src/index.ts": `import { fold } from "@spot/domain"\nimport { useCase } from "@spot/application"\nimport { Pool } from "pg"\nimport { readFileSync } from "node:fs"\nexport type Adapter = number\nexport const adapter = [fold, useCase, Pool, readFileSync]`,
  "packages/adapters-one/src/UsesTestHelper.ts": `import { helper } from "../test/Helper.js"\nexport { helper }`,
  "packages/adapters-one/src/UsesSimulator.ts": `import { simulate } from "@spot/simulator"\nexport { simulate }`,
  "packages/adapters-one/src/UsesApp.ts": `import { main } from "@spot/server"\nexport { main }`,
  "packages/adapters-one/src/UsesMissingFile.ts": `import { nothing } from "./Nowhere.js"\nexport { nothing }`,
  "packages/adapters-one/test/Helper.ts": `import { other } from "@spot/adapters-two"\nexport const helper = other`,
  "packages/adapters-two/src/index.ts": `import { adapter } from "@spot/adapters-one"\nexport const other = adapter`,
  "packages/simulator/src/index.ts": `import { fold } from "@spot/domain"\nimport { useCase } from "@spot/application"\nexport const simulate = [fold, useCase]`,

  "apps/server/src/index.ts": `import { adapter } from "@spot/adapters-one"\nimport { other } from "@spot/adapters-two"\nimport { simulate } from "@spot/simulator"\nexport const main = [adapter, other, simulate]`
}

const fixturePackages = {
  "@spot/domain": "packages/domain",
  "@spot/application": "packages/application",
  "@spot/adapters-one": "packages/adapters-one",
  "@spot/adapters-two": "packages/adapters-two",
  "@spot/simulator": "packages/simulator",
  "@spot/server": "apps/server"
}

const writeFixture = (dir: string) => {
  for (const [path, text] of Object.entries(fixtureTree)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  for (const [name, folder] of Object.entries(fixturePackages)) {
    writeFileSync(join(dir, folder, "package.json"), JSON.stringify({ name, type: "module", exports: { ".": "./src/index.ts" } }))
    mkdirSync(dirname(join(dir, "node_modules", name)), { recursive: true })
    symlinkSync(join(dir, folder), join(dir, "node_modules", name), "dir")
  }
}

describe("architecture checks on a tree with one violation per rule", () => {
  it("dependency-cruiser reports each rule's violation, and nothing that is allowed", { timeout: toolTimeout }, async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "architecture-")))
    try {
      writeFixture(dir)
      expect((await importViolations(dir)).sort()).toEqual([
        "application-imports-only-domain-and-effect: packages/application/src/UsesAdapter.ts → packages/adapters-one/src/index.ts",
        "domain-imports-no-node-builtin: packages/domain/src/ReadsFiles.ts → fs",
        "domain-imports-only-effect: packages/domain/src/UsesApplication.ts → packages/application/src/index.ts",
        "domain-imports-only-effect: packages/domain/src/UsesEffectPlatform.ts → node_modules/effect/dist/http/index.js",
        "domain-imports-only-effect: packages/domain/src/UsesIoLibrary.ts → node_modules/pg/index.js",
        "no-circular: packages/domain/src/CircleA.ts → packages/domain/src/CircleB.ts → packages/domain/src/CircleA.ts",
        "no-relative-path-into-another-package: packages/application/test/ReachesIntoDomainTest.test.ts → packages/domain/test/support/Kit.ts",
        "not-to-unresolvable: packages/adapters-one/src/UsesMissingFile.ts → ./Nowhere.js",
        "outer-packages-meet-only-in-apps: packages/adapters-one/src/UsesSimulator.ts → packages/simulator/src/index.ts",
        "outer-packages-meet-only-in-apps: packages/adapters-two/src/index.ts → packages/adapters-one/src/index.ts",
        "packages-import-no-app: packages/adapters-one/src/UsesApp.ts → apps/server/src/index.ts",
        "simulator-imports-only-the-domain: packages/simulator/src/index.ts → packages/application/src/index.ts",
        "source-imports-no-test: packages/adapters-one/src/UsesTestHelper.ts → packages/adapters-one/test/Helper.ts"
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("ESLint reports each clock, randomness, timer, process and code-generating use in the domain", { timeout: toolTimeout }, async () => {
    const lint = async (code: string, path = "packages/domain/src/Violation.ts") =>
      (await eslint.lintText(code, { filePath: join(root, path) }))
        .flatMap((r) => r.messages)
        .filter((m) => m.severity === 2)
        .map((m) => m.ruleId)
    const cases: Array<[string, string]> = [
      ["export const t = Date.now()", "no-restricted-properties"],
      ["export const t = new Date()", "no-restricted-syntax"],
      ["export const t = Date()", "no-restricted-syntax"],
      ["export const t = performance.now()", "no-restricted-globals"],
      ["export const t = process.hrtime.bigint()", "no-restricted-globals"],
      ["export const r = Math.random()", "no-restricted-properties"],
      ["export const r = crypto.getRandomValues(new Uint8Array(8))", "no-restricted-globals"],
      ["export const r = crypto.randomUUID()", "no-restricted-globals"],
      ["export const r = globalThis.crypto", "no-restricted-properties"],
      ["setTimeout(() => {}, 1)", "no-restricted-globals"],
      ["setInterval(() => {}, 1)", "no-restricted-globals"],
      ["export const f = new Function('a', 'return a')", "no-new-func"],
      ["export const f = Function('return 1')", "no-new-func"],
      ["export const v = eval('1')", "no-eval"],
      ["// eslint-disable-next-line no-eval\nexport const v = eval('1')", "no-eval"]
    ]
    for (const [code, rule] of cases) expect({ code, rules: await lint(code) }).toEqual({ code, rules: [rule] })
    const pure = "export const at = (ms: number) => new Date(ms).toISOString()\nexport const next = (seed: number) => (seed * 48271) % 2147483647"
    expect(await lint(pure)).toEqual([])
    // The rules apply to the domain's source only.
    expect(await lint("export const t = Date.now()", "packages/adapters-http/src/Clock.ts")).toEqual([])
  })
})
