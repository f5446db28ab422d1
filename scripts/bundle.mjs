/**
 * Bundles the server (apps/server/src/main.ts and every workspace package it imports, with its
 * dependencies) into one JavaScript file, apps/server/dist/bundle/server.mjs, which `npm start` runs with
 * plain node. Started through tsx instead, a process spends about 2.5 s (more on a busy machine)
 * resolving and loading the several hundred modules of the source tree through tsx's loader before
 * it serves; the bundle loads in a fraction of that, so a restart serves seconds sooner
 * (docs/storage.md, "Snapshots": the process itself). esbuild only strips types: what runs is the same code.
 *
 *   node scripts/bundle.mjs   → prints the bundle's path
 */
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const outfile = `${root}apps/server/dist/bundle/server.mjs`
// The server, and beside it the thread that builds snapshots (apps/server/src/SnapshotWorker.ts
// starts `snapshot-worker.mjs` from the bundle's own directory).
const bundle = (entry, file) => build({
  entryPoints: [`${root}apps/server/src/${entry}`],
  outfile: `${root}apps/server/dist/bundle/${file}`,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
  // CommonJS dependencies (ws) call require: give the ES module one.
  banner: { js: `import { createRequire as __spotCreateRequire } from "node:module"; const require = __spotCreateRequire(import.meta.url);` }
})
await Promise.all([bundle("main.ts", "server.mjs"), bundle("snapshot-worker.ts", "snapshot-worker.mjs")])
console.log(outfile)
