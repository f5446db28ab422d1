/**
 * `pnpm bench http`: the real service against raw node:http, same machine, same responses.
 *
 * The service is the actual composition (`apps/server/src/main.ts`: simulator, authentication and
 * rate limiting on, budgets raised by configuration so the load is not refused) in a child process,
 * with the heap flags `npm start` gives it (the young-generation size this bench was started with).
 * The baseline is a bare node:http server in another child process answering each measured request
 * with the very bytes the service returned for it (status, headers, body, fetched once): no auth,
 * no limits, no work, i.e. the ceiling of this machine for those responses.
 *
 * Three requests (the token GET, a three-column discovery POST, a 20-trade page), 50 keep-alive
 * connections from `@spot/adapters-http/bench/loadgen` in this process. Rounds alternate
 * baseline and service (ABBA order) so that noise from a shared machine hits both; figures are
 * medians over the rounds. CPU µs per request of each server comes from /proc: on two cores the
 * load generator takes one, so req/s ratios are squeezed towards 1 and CPU efficiency is the
 * steadier comparison. p50/p99 under 50 connections are mostly queueing (a closed loop waits about
 * 50 ÷ req/s per request); the line "1 connection" after each request shows the service's own latency.
 *
 *   node --expose-gc --import tsx apps/server/bench/http.ts [--seconds 8] [--rounds 3] [--connections 50]
 *     [--warmup 1] [--sim-warmup 5] [--service-entry apps/server/src/main.ts]
 *
 * The last line is one JSON object; the token GET gives reqPerSec, ratio, p50Ms, p99Ms and the
 * CPU µs per request of both servers.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import * as net from "node:net"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { runLoad } from "@spot/adapters-http/bench/loadgen"
import type { LoadResult } from "@spot/adapters-http/bench/loadgen"
import { numberArg } from "./support/args.js"

/** One measured request and the service's answer to it, replayed by the baseline. */
interface CannedResponse {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly body: string | undefined
  readonly status: number
  readonly headers: Record<string, string>
  readonly responseBody: string
}

const BASELINE_ROLE = "--serve-baseline"

// ---------------------------------------------------------------------------------------------
// Baseline role: `http.ts --serve-baseline <port>`, canned responses as JSON on stdin.

const serveBaseline = async (port: number): Promise<void> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const canned: Array<CannedResponse> = JSON.parse(Buffer.concat(chunks).toString("utf8"))
  // Content-Length stated up front: `writeHead` without it would make Node send the body chunked.
  const byUrl = new Map(canned.map((c) => [
    c.path,
    { ...c, headers: { ...c.headers, "content-length": String(Buffer.byteLength(c.responseBody)) } }
  ]))
  const server = createServer((req, res) => {
    const answer = byUrl.get(req.url ?? "")
    if (answer === undefined || answer.method !== req.method) {
      res.writeHead(404).end()
      return
    }
    if (req.method === "GET") {
      res.writeHead(answer.status, answer.headers).end(answer.responseBody)
      return
    }
    // A POST body is read to its end, as any server must before answering.
    req.on("end", () => res.writeHead(answer.status, answer.headers).end(answer.responseBody))
    req.resume()
  })
  server.listen(port, "127.0.0.1", () => console.log(`baseline listening on ${port}`))
}

// ---------------------------------------------------------------------------------------------
// Bench role.


const repoRoot = new URL("../../../", import.meta.url).pathname

/**
 * The heap settings this bench was started with (`scripts/run.sh` gives the service and the
 * benchmarks a 128 MB young generation), passed on to both servers: the service is measured as
 * `npm start` runs it, and the baseline gets the same heap.
 */
const heapFlags = process.execArgv.filter((flag) => flag.startsWith("--max-semi-space-size") || flag.startsWith("--min-semi-space-size"))
const thisFile = new URL(import.meta.url).pathname

const children = new Set<ChildProcess>()
const killChildren = (signal: NodeJS.Signals) => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal)
}
process.on("exit", () => killChildren("SIGKILL"))
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    killChildren("SIGKILL")
    process.exit(130)
  })
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

/**
 * Spawns a server and resolves once a stdout line contains `readyText`. Every stdout line goes to
 * `onLine` (the pipe is drained for the child's whole life, so it never blocks on a full pipe).
 */
const startChild = (
  name: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  readyText: string,
  timeoutMs: number,
  onLine: (line: string, ready: boolean) => void,
  stdin?: string
): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["pipe", "pipe", "inherit"] })
    children.add(child)
    let ready = false
    let pending = ""
    const timer = setTimeout(() => reject(new Error(`${name} not ready after ${timeoutMs / 1000} s`)), timeoutMs)
    child.stdout!.setEncoding("utf8")
    child.stdout!.on("data", (text: string) => {
      pending += text
      const lines = pending.split("\n")
      pending = lines.pop()!
      for (const line of lines) {
        onLine(line, ready)
        if (!ready && line.includes(readyText)) {
          ready = true
          clearTimeout(timer)
          resolve(child)
        }
      }
    })
    child.on("exit", (code, signal) => {
      children.delete(child)
      if (!ready) {
        clearTimeout(timer)
        reject(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`))
      }
    })
    child.stdin!.end(stdin ?? "")
  })

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const force = setTimeout(() => child.kill("SIGKILL"), 3_000)
    child.on("exit", () => {
      clearTimeout(force)
      resolve()
    })
    child.kill("SIGTERM")
  })

/** utime + stime of a process, in µs (clock ticks of 10 ms). */
const cpuMicros = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = values.slice().sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const round2 = (x: number) => Math.round(x * 100) / 100
const round3 = (x: number) => Math.round(x * 1000) / 1000

/** Headers Node writes by itself (or that describe the connection, not the answer). */
const perConnectionHeaders = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"])

const capture = async (
  base: string,
  authorization: string,
  method: "GET" | "POST",
  path: string,
  body?: string
): Promise<CannedResponse> => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined
      ? { authorization }
      : { authorization, "content-type": "application/json" },
    ...(body === undefined ? {} : { body })
  })
  const responseBody = await response.text()
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${responseBody.slice(0, 300)}`)
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!perConnectionHeaders.has(name)) headers[name] = value
  })
  return { method, path, body, status: response.status, headers, responseBody }
}

interface Series {
  readonly rps: Array<number>
  readonly p50: Array<number>
  readonly p99: Array<number>
  readonly cpuUsPerRequest: Array<number>
  readonly clientCpuUsPerRequest: Array<number>
  readonly statuses: Record<number, number>
  errors: number
}
const emptySeries = (): Series => ({ rps: [], p50: [], p99: [], cpuUsPerRequest: [], clientCpuUsPerRequest: [], statuses: {}, errors: 0 })

const runBench = async (): Promise<void> => {
  const seconds = numberArg("seconds", 8)
  const rounds = numberArg("rounds", 3)
  const connections = numberArg("connections", 50)
  const warmupSeconds = numberArg("warmup", 1)
  const simWarmupMinutes = numberArg("sim-warmup", 5)
  // Another composition to measure the same way (an experiment); the shipped entry by default.
  const entryIndex = process.argv.indexOf("--service-entry")
  const serviceEntry = entryIndex >= 0 ? process.argv[entryIndex + 1]! : "apps/server/src/main.ts"
  const loadAtStart = loadavg()

  const apiKey = `sk_live_${randomBytes(32).toString("base64url")}`
  const authorization = `Bearer ${apiKey}`
  const dataDir = mkdtempSync(join(tmpdir(), "spot-bench-http-"))
  const [servicePort, baselinePort] = [await freePort(), await freePort()]

  console.log(`starting the service (simulator warm-up ${simWarmupMinutes} min) on port ${servicePort}...`)
  let lastMarketLine = ""
  const started = performance.now()
  const service = await startChild(
    "service",
    [...heapFlags, "--import", "tsx", serviceEntry],
    {
      ...process.env,
      PORT: String(servicePort),
      HOST: "127.0.0.1",
      SPOT_API_KEYS: apiKey,
      SPOT_RATE_LIMIT_KEY_PER_MINUTE: "1000000000",
      SPOT_RATE_LIMIT_IP_PER_MINUTE: "1000000000",
      SPOT_SIMULATOR: "on",
      SPOT_SIM_WARMUP_MINUTES: String(simWarmupMinutes),
      SPOT_DATA_DIR: dataDir
    },
    "listening on",
    300_000,
    (line, ready) => {
      if (line.startsWith("market")) lastMarketLine = line
      if (!ready && line.startsWith("market warmed up")) console.log(`  service: ${line}`)
    }
  )
  console.log(`service ready in ${((performance.now() - started) / 1000).toFixed(1)} s (pid ${service.pid})`)
  const serviceBase = `http://127.0.0.1:${servicePort}`

  // What the service burns with no requests (the simulator shares its event loop), for context.
  const idleCpuStart = cpuMicros(service.pid!)
  await new Promise((resolve) => setTimeout(resolve, 3_000))
  const idleCorePct = (cpuMicros(service.pid!) - idleCpuStart) / 30_000

  // Authentication is really on: no key is refused.
  const keyless = await fetch(`${serviceBase}/v1/tokens/solana/So11111111111111111111111111111111111111112`)
  await keyless.arrayBuffer()
  if (keyless.status !== 401) throw new Error(`expected 401 without a key, got ${keyless.status}`)

  // A live token: the top of a discovery column.
  let token: { chain: string; address: string } | undefined
  for (const column of ["graduated", "newPairs", "graduating"]) {
    const picked = await capture(serviceBase, authorization, "POST", "/v1/discovery", JSON.stringify({ chains: ["solana"], [column]: { limit: 1 } }))
    const entry = (JSON.parse(picked.responseBody) as { columns: Array<{ deltas: Array<{ chain: string; address: string }> }> })
      .columns[0]?.deltas[0]
    if (entry !== undefined) {
      token = { chain: entry.chain, address: entry.address }
      break
    }
  }
  if (token === undefined) throw new Error("the service has no solana launchpad token to measure")
  const tokenPath = `/v1/tokens/${token.chain}/${token.address}`

  const requests = [
    { name: "token GET", canned: await capture(serviceBase, authorization, "GET", tokenPath) },
    {
      name: "discovery POST",
      canned: await capture(
        serviceBase,
        authorization,
        "POST",
        "/v1/discovery",
        JSON.stringify({ chains: ["solana", "base", "bsc"], newPairs: {}, graduating: {}, graduated: {} })
      )
    },
    { name: "trades page GET", canned: await capture(serviceBase, authorization, "GET", `${tokenPath}/trades?limit=20`) }
  ]
  for (const { name, canned } of requests) {
    console.log(`  ${name.padEnd(16)} ${canned.method} ${canned.path} -> ${canned.status}, ${Buffer.byteLength(canned.responseBody)} body bytes`)
  }

  const baseline = await startChild(
    "baseline",
    [...heapFlags, "--import", "tsx", thisFile, BASELINE_ROLE, String(baselinePort)],
    process.env,
    "baseline listening",
    60_000,
    () => {},
    JSON.stringify(requests.map((r) => r.canned))
  )
  const servers = [
    { role: "baseline" as const, pid: baseline.pid!, base: `http://127.0.0.1:${baselinePort}` },
    { role: "service" as const, pid: service.pid!, base: serviceBase }
  ]

  const load = (base: string, canned: CannedResponse, pid: number, loadSeconds: number, warmup: number, conns = connections) => {
    let serverCpuStart = 0
    let serverCpu = 0
    let clientCpuStart = 0
    let clientCpu = 0
    return runLoad({
      url: `${base}${canned.path}`,
      connections: conns,
      seconds: loadSeconds,
      warmupSeconds: warmup,
      headers: [`Authorization: ${authorization}`],
      ...(canned.body === undefined ? {} : { body: canned.body }),
      onMeasureStart: () => {
        serverCpuStart = cpuMicros(pid)
        const usage = process.cpuUsage()
        clientCpuStart = usage.user + usage.system
      },
      onMeasureEnd: () => {
        serverCpu = cpuMicros(pid) - serverCpuStart
        const usage = process.cpuUsage()
        clientCpu = usage.user + usage.system - clientCpuStart
      }
    }).then((result) => ({ result, serverCpuUs: serverCpu / result.requests, clientCpuUs: clientCpu / result.requests }))
  }

  // Both servers see every request once under load before anything is measured (JIT, caches).
  console.log(`warming up both servers (2 s per request and server)...`)
  for (const { canned } of requests) for (const server of servers) await load(server.base, canned, server.pid, 2, 0.5)

  const results = new Map(requests.map((r) => [r.name, { baseline: emptySeries(), service: emptySeries() }]))
  const record = (series: Series, run: { result: LoadResult; serverCpuUs: number; clientCpuUs: number }) => {
    series.rps.push(run.result.requestsPerSecond)
    series.p50.push(run.result.latency.p50Ms)
    series.p99.push(run.result.latency.p99Ms)
    series.cpuUsPerRequest.push(run.serverCpuUs)
    series.clientCpuUsPerRequest.push(run.clientCpuUs)
    for (const [status, count] of Object.entries(run.result.statusCounts)) {
      series.statuses[Number(status)] = (series.statuses[Number(status)] ?? 0) + count
    }
    series.errors += run.result.errors
  }

  console.log(`${rounds} rounds of ${seconds} s per request and server, ${connections} connections, ${warmupSeconds} s warm-up each`)
  for (let round = 0; round < rounds; round++) {
    // ABBA: the server that goes first alternates, so a drift in machine load favours neither.
    const ordered = round % 2 === 0 ? servers : [...servers].reverse()
    for (const { name, canned } of requests) {
      for (const server of ordered) {
        const run = await load(server.base, canned, server.pid, seconds, warmupSeconds)
        record(results.get(name)![server.role], run)
        console.log(
          `  round ${round + 1} ${name.padEnd(16)} ${server.role.padEnd(8)} ${Math.round(run.result.requestsPerSecond).toString().padStart(6)} req/s` +
            `  p50 ${run.result.latency.p50Ms.toFixed(2)} ms  p99 ${run.result.latency.p99Ms.toFixed(2)} ms` +
            `  ${run.serverCpuUs.toFixed(1)} µs CPU/req  load ${loadavg()[0]!.toFixed(2)}`
        )
      }
    }
  }

  // Latency without queueing: one connection against the service.
  const unloaded = new Map<string, LoadResult>()
  for (const { name, canned } of requests) unloaded.set(name, (await load(serviceBase, canned, service.pid!, 2, 0.5, 1)).result)

  // ---- report
  const loadAtEnd = loadavg()
  const pad = (s: string, n: number) => s.padStart(n)
  console.log("")
  console.log(
    `${"request".padEnd(16)} ${"server".padEnd(8)} ${pad("req/s", 7)} ${pad("ratio", 6)} ${pad("p50 ms", 7)} ${pad("p99 ms", 7)} ${pad("CPU µs/req", 11)} ${pad("CPU eff.", 9)} ${pad("client µs/req", 14)}  statuses`
  )
  const summary = new Map<string, { rps: number; baseRps: number; ratio: number; p50: number; p99: number; cpuRatio: number; cpuUs: number; baseCpuUs: number }>()
  for (const { name } of requests) {
    const { baseline: b, service: s } = results.get(name)!
    const ratio = median(s.rps) / median(b.rps)
    const cpuRatio = median(b.cpuUsPerRequest) / median(s.cpuUsPerRequest)
    summary.set(name, {
      rps: median(s.rps),
      baseRps: median(b.rps),
      ratio,
      p50: median(s.p50),
      p99: median(s.p99),
      cpuRatio,
      cpuUs: median(s.cpuUsPerRequest),
      baseCpuUs: median(b.cpuUsPerRequest)
    })
    for (const [role, series] of [["baseline", b], ["service", s]] as const) {
      const statuses = JSON.stringify(series.statuses) + (series.errors > 0 ? ` socket errors ${series.errors}` : "")
      console.log(
        `${(role === "baseline" ? name : "").padEnd(16)} ${role.padEnd(8)} ${pad(String(Math.round(median(series.rps))), 7)} ` +
          `${pad(role === "service" ? ratio.toFixed(2) : "1.00", 6)} ${pad(median(series.p50).toFixed(2), 7)} ${pad(median(series.p99).toFixed(2), 7)} ` +
          `${pad(median(series.cpuUsPerRequest).toFixed(1), 11)} ${pad(role === "service" ? cpuRatio.toFixed(2) : "1.00", 9)} ` +
          `${pad(median(series.clientCpuUsPerRequest).toFixed(1), 14)}  ${statuses}`
      )
    }
    const one = unloaded.get(name)!
    console.log(`${"".padEnd(16)} service, 1 connection: ${Math.round(one.requestsPerSecond)} req/s, p50 ${one.latency.p50Ms.toFixed(2)} ms, p99 ${one.latency.p99Ms.toFixed(2)} ms`)
  }
  console.log("")
  console.log(`medians of ${rounds} rounds; ratio = service req/s ÷ baseline req/s; CPU eff. = baseline CPU/req ÷ service CPU/req`)
  console.log(`load average (1, 5, 15 min): at start ${loadAtStart.map((x) => x.toFixed(2)).join(", ")}; at end ${loadAtEnd.map((x) => x.toFixed(2)).join(", ")}`)
  console.log(`service with no requests (simulator running): ${idleCorePct.toFixed(1)}% of a core`)
  if (lastMarketLine !== "") console.log(`service ${lastMarketLine}`)

  await Promise.all([stopChild(service), stopChild(baseline)])
  rmSync(dataDir, { recursive: true, force: true })

  const tokenGet = summary.get("token GET")!
  console.log(JSON.stringify({
    bench: "http",
    reqPerSec: Math.round(tokenGet.rps),
    baselineReqPerSec: Math.round(tokenGet.baseRps),
    ratio: round3(tokenGet.ratio),
    p50Ms: round2(tokenGet.p50),
    p99Ms: round2(tokenGet.p99),
    discoveryRatio: round3(summary.get("discovery POST")!.ratio),
    tradesRatio: round3(summary.get("trades page GET")!.ratio),
    cpuEfficiencyRatio: round3(tokenGet.cpuRatio),
    cpuUsPerRequest: round2(tokenGet.cpuUs),
    baselineCpuUsPerRequest: round2(tokenGet.baseCpuUs),
    loadAverage: round2(loadAtEnd[0]!),
    targets: { ratio: 0.5, p99Ms: 5 }
  }))
}

const roleIndex = process.argv.indexOf(BASELINE_ROLE)
if (roleIndex >= 0) {
  await serveBaseline(Number(process.argv[roleIndex + 1]))
} else {
  try {
    await runBench()
  } catch (error) {
    console.error(error instanceof Error ? error.message : error)
    process.exitCode = 1
  } finally {
    killChildren("SIGKILL")
  }
}
