/**
 * The boundaries between the packages, checked by apps/server/test/architecture.test.ts (and by
 * hand: `npx depcruise packages apps`). Paths are relative to the repository root; the rules name
 * folders by pattern, so a new package (`packages/<name>`, `packages/adapters-<name>`) is covered
 * without editing them. docs/architecture.md ("Boundaries") says why each rule is there.
 *
 * @type {import("dependency-cruiser").IConfiguration}
 */

/** A package's or app's tests and benchmarks: they may put packages together, as apps/ does. */
const testsAndBenches = "^(packages|apps)/[^/]+/(test|testing|bench)/"

/** effect's own modules (`effect`, `effect/Schema`, …) and its pure codecs; not its platform
 * folders (`effect/http`, `effect/sql`, `effect/socket`, `effect/process`, …). */
const effectCore = ["(^|/)node_modules/effect/dist/[^/]+\\.js$", "(^|/)node_modules/effect/dist/encoding/"]

module.exports = {
  forbidden: [
    {
      name: "domain-imports-only-effect",
      comment:
        "The domain holds market rules only: it imports its own files and effect's core modules, " +
        "no other package, no I/O library, no effect platform module.",
      severity: "error",
      from: { path: "^packages/domain/src/" },
      to: { pathNot: ["^packages/domain/src/", ...effectCore], dependencyTypesNot: ["core"] }
    },
    {
      name: "domain-imports-no-node-builtin",
      comment: "The domain does no I/O: no node:* (or bare builtin) module. Time, ids and bytes come in as arguments.",
      severity: "error",
      from: { path: "^packages/domain/src/" },
      to: { dependencyTypes: ["core"] }
    },
    {
      name: "simulator-imports-only-the-domain",
      comment:
        "The simulator is a pure event source like the domain it feeds: it imports the domain, its own " +
        "files and effect's core modules; no node:*, no I/O library, no port (apps/ binds it to one).",
      severity: "error",
      from: { path: "^packages/simulator/src/" },
      to: { pathNot: ["^packages/(domain|simulator)/src/", ...effectCore] }
    },
    {
      name: "application-imports-only-domain-and-effect",
      comment:
        "Use cases and ports: the domain, effect's core modules and the application's own files; " +
        "no adapter, no node:*, no I/O library (an adapter implements a port instead).",
      severity: "error",
      from: { path: "^packages/application/src/" },
      to: { pathNot: ["^packages/(domain|application)/src/", ...effectCore] }
    },
    {
      name: "outer-packages-meet-only-in-apps",
      comment:
        "Every package but the domain and the application (the adapters, the simulator, any new one) " +
        "is an outer package: it may import the domain, the application and libraries, and only apps/ " +
        "and tests put outer packages together. So no adapter imports another adapter or the simulator.",
      severity: "error",
      from: { path: "^packages/([^/]+)/", pathNot: ["^packages/(domain|application)/", testsAndBenches] },
      to: { path: "^packages/", pathNot: ["^packages/(domain|application)/", "^packages/$1/"] }
    },
    {
      name: "packages-import-no-app",
      comment: "apps/ is the composition root: nothing in packages/ (source, test or benchmark) depends on it.",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^apps/" }
    },
    {
      name: "no-relative-path-into-another-package",
      comment:
        "A file reaches another package only through its name (`@spot/<name>`, what its package.json " +
        "exports), never by a relative path into its src/, test/ or bench/.",
      severity: "error",
      from: { path: "^((packages|apps)/[^/]+)/" },
      to: { dependencyTypes: ["local"], path: "^(packages|apps)/", pathNot: "^$1/" }
    },
    {
      name: "source-imports-no-test",
      comment: "Shipped code depends on no test or benchmark file.",
      severity: "error",
      from: { path: "^(packages|apps)/[^/]+/src/" },
      to: { path: testsAndBenches }
    },
    {
      name: "no-circular",
      comment: "No import circle: a module and what it imports can be read (and loaded) in one order.",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "not-to-unresolvable",
      comment: "Every import resolves to a file, so every rule above sees where it points.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true }
    }
  ],
  options: {
    doNotFollow: { path: "(^|/)node_modules/" },
    exclude: { path: "^(packages|apps)/[^/]+/dist/" },
    // Type-only imports count: `import type` from an adapter is still a dependency on it.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "default"],
      extensions: [".ts", ".mts", ".js", ".mjs"]
    }
  }
}
