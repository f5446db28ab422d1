// What an import graph cannot show: the domain reads no clock, draws no randomness, schedules
// nothing, touches no process and generates no code. Time and ids come in as arguments, so the
// same events fold to the same state in any process. The simulator is held to the same rules (its
// randomness is its seeded PRNG). These rules only, on those two packages' source only
// (apps/server/test/architecture.test.ts runs them; docs/architecture.md, "Boundaries").
import tsParser from "@typescript-eslint/parser"

const arguments_ = "time and ids come in as arguments"

/** Globals the domain does not touch, and why. */
const forbiddenGlobals = {
  performance: "reads the clock",
  process: "touches the process (hrtime, env, exit)",
  crypto: "draws randomness (getRandomValues, randomUUID)",
  setTimeout: "schedules work",
  setInterval: "schedules work",
  setImmediate: "schedules work"
}

export default [
  {
    files: ["packages/domain/src/**/*.ts", "packages/simulator/src/**/*.ts"],
    languageOptions: { parser: tsParser },
    // No inline `eslint-disable`: an exception is a change to this file, in review.
    linterOptions: { noInlineConfig: true },
    rules: {
      "no-eval": "error",
      "no-new-func": "error",
      "no-restricted-globals": [
        "error",
        ...Object.entries(forbiddenGlobals).map(([name, why]) => ({ name, message: `${name} ${why}: ${arguments_}` }))
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: `Date.now reads the clock: ${arguments_}` },
        { object: "Math", property: "random", message: `Math.random draws randomness: ${arguments_}` },
        ...[...Object.keys(forbiddenGlobals), "eval", "Function"].map((property) => ({
          object: "globalThis",
          property,
          message: `globalThis.${property} is out of the domain's reach: ${arguments_}`
        }))
      ],
      "no-restricted-syntax": [
        "error",
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: `new Date() reads the clock: ${arguments_}` },
        { selector: "CallExpression[callee.name='Date']", message: `Date() reads the clock: ${arguments_}` }
      ]
    }
  }
]
