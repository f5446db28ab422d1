// The snapshot worker (snapshot-worker.ts) when the service runs from its TypeScript source (tests,
// benchmarks): a worker thread does not inherit the loader hooks of the thread that started it, so
// tsx is registered here first. The bundled service starts the bundled snapshot-worker.mjs instead.
import { register } from "tsx/esm/api"

register()
await import("./snapshot-worker.ts")
