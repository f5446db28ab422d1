/**
 * Runs the architecture prototypes side by side: each server in its own process, rounds of
 * interleaved load runs, reporting req/s and the server's CPU time per request (from
 * /proc/<pid>/stat, so it holds up on a machine shared with other work), with medians and the
 * ratio to raw node:http.
 *
 *   node --import tsx bench/compare.ts [rounds] [secondsPerRun] [modes...]
 *
 * Modes (bench/prototypes.ts): raw, bare, platform (the shipped design), router, httpapi.
 * Default: raw platform router httpapi. CPU per request is the steadier number when the load
 * generator shares the machine: req/s ratios are squeezed towards 1 by the client's own CPU use.
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { runLoad } from "./loadgen.js"

const [roundsArg = "3", secondsArg = "5", ...modeArgs] = process.argv.slice(2)
const modes = modeArgs.length > 0 ? modeArgs : ["raw", "platform", "router", "httpapi"]
const authorization = "Authorization: Bearer sk_live_benchbenchbenchbenchbenchbenchbenchbenchben"
const path = "/v1/tokens/solana/abc"

const cpuTicks = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return Number(fields[11]) + Number(fields[12]) // utime + stime, in clock ticks (1/100 s)
}
const median = (values: Array<number>) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const servers = await Promise.all(
  modes.map(
    (mode, index) =>
      new Promise<{ mode: string; port: number; pid: number; kill: () => void }>((resolve) => {
        const port = 3200 + index
        const child = spawn(process.execPath, ["--import", "tsx", "bench/prototypes.ts", mode, String(port)], {
          stdio: ["ignore", "pipe", "inherit"],
          cwd: new URL("..", import.meta.url).pathname
        })
        child.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("listening")) resolve({ mode, port, pid: child.pid!, kill: () => child.kill() })
        })
      })
  )
)

const results = new Map<string, { rps: Array<number>; cpuUs: Array<number> }>(modes.map((m) => [m, { rps: [], cpuUs: [] }]))
for (let round = 0; round < Number(roundsArg); round++) {
  for (const server of servers) {
    const before = cpuTicks(server.pid)
    const result = await runLoad({
      url: `http://127.0.0.1:${server.port}${path}`,
      connections: 50,
      seconds: Number(secondsArg),
      warmupSeconds: 1,
      headers: [authorization]
    })
    const ticks = cpuTicks(server.pid) - before
    const totalRequests = result.requests * (1 + 1 / Number(secondsArg)) // warm-up second ran too
    const entry = results.get(server.mode)!
    entry.rps.push(result.requestsPerSecond)
    entry.cpuUs.push((ticks * 10_000) / totalRequests)
    console.log(`round ${round + 1} ${server.mode}: ${Math.round(result.requestsPerSecond)} req/s, ${((ticks * 10_000) / totalRequests).toFixed(1)} µs CPU/request, statuses ${JSON.stringify(result.statusCounts)}`)
  }
}
const raw = results.get("raw")
for (const [mode, entry] of results) {
  const rps = median(entry.rps)
  const cpu = median(entry.cpuUs)
  const ratios = raw === undefined ? "" :
    ` | req/s ratio ${(rps / median(raw.rps)).toFixed(2)}, CPU-efficiency ratio ${(median(raw.cpuUs) / cpu).toFixed(2)}`
  console.log(`${mode.padEnd(8)} median ${Math.round(rps)} req/s, ${cpu.toFixed(1)} µs CPU/request${ratios}`)
}
for (const server of servers) server.kill()
