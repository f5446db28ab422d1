// The README's test command: type-check every package, run every test, and end with one plain
// line `N passed, N failed` (CI reads that line; vitest's own summary is for people).
import { spawnSync } from "node:child_process"
import { readFileSync, rmSync } from "node:fs"

const run = (cmd, args) => spawnSync(cmd, args, { stdio: "inherit", env: process.env }).status ?? 1
const bin = (name) => `node_modules/.bin/${name}`

console.log("type-checking (tsc -b)…")
const typecheck = run(bin("tsc"), ["-b"])
if (typecheck !== 0) console.error("type-check failed")

const report = ".vitest-report.json"
rmSync(report, { force: true })
const vitest = run(bin("vitest"), ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)])

let passed = 0
let failed = 0
let skipped = 0
try {
  const r = JSON.parse(readFileSync(report, "utf8"))
  passed = r.numPassedTests
  failed = r.numFailedTests + (r.numRuntimeErrorTestSuites ?? 0)
  skipped = r.numPendingTests + (r.numTodoTests ?? 0)
  for (const suite of r.testResults ?? []) if (suite.status === "failed" && suite.assertionResults.length === 0) failed += 1
} catch {
  failed += 1
}
if (typecheck !== 0) failed += 1
if (vitest !== 0 && failed === 0) failed = 1
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`)
process.exit(failed === 0 && typecheck === 0 && vitest === 0 ? 0 : 1)
