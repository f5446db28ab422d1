/**
 * What `npm start` runs (scripts/run.sh start): the server bundled into one file by
 * scripts/bundle.mjs, started with plain node. The bundle must serve like the source: the REST
 * API on a live simulated market with the event log on PostgreSQL, and the embedded database,
 * whose worker file the bundle finds through the storage package's exports (it is not beside the
 * bundle). Each process is stopped with SIGTERM and must exit.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startDatabase, type TestDatabase } from "./storage/support.js"

const repoRoot = join(import.meta.dirname, "../../..")
/** This process's environment without a DATABASE_URL (each start says which database it uses). */
const { DATABASE_URL: _ignored, ...inherited } = process.env
const apiKey = "sk_test_start_command_0123456789abcdef"

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

const get = async (port: number, path: string) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })
  return { status: response.status, body: await response.json() as any }
}

/** Polls until the server answers /openapi.json (or the child exits first). */
const waitServing = async (child: ChildProcess, port: number, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before it served`)
    const ok = await fetch(`http://127.0.0.1:${port}/openapi.json`).then((r) => r.status === 200, () => false)
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`not serving after ${timeoutMs} ms`)
}

/**
 * Sends SIGTERM; the exit code. A graceful stop exits 0: main.ts runs under NodeRuntime.runMain,
 * whose signal handler interrupts the main fiber, and its teardown maps an exit that is
 * interruption only to 0 (Effect's default would give 130); an error during the stop (a failing
 * finalizer) gives 1, and a process killed by the signal unhandled, null.
 */
const stop = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    child.once("exit", (code) => resolve(code))
    child.kill("SIGTERM")
  })

describe("the start command (bundled server)", () => {
  let bundle: string
  let database: TestDatabase
  const dataDirs: Array<string> = []
  const children: Array<ChildProcess> = []

  const start = (env: Record<string, string>, dataDir = mkdtempSync(join(tmpdir(), "spot-start-"))) => {
    dataDirs.push(dataDir)
    const child = spawn(process.execPath, ["--enable-source-maps", bundle], {
      cwd: repoRoot,
      env: { ...inherited, HOST: "127.0.0.1", SPOT_API_KEYS: apiKey, SPOT_DATA_DIR: dataDir, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    return child
  }

  beforeAll(async () => {
    bundle = execFileSync(process.execPath, [join(repoRoot, "scripts/bundle.mjs")], { encoding: "utf8" }).trim()
    database = await startDatabase()
  }, 120_000)
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
    await database?.drop()
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  })

  it("serves a live simulated market from its event log on PostgreSQL, then stops on SIGTERM", async () => {
    const port = await freePort()
    const child = start({
      PORT: String(port),
      DATABASE_URL: `postgres://postgres@127.0.0.1:${database.port}/${database.database}`,
      SPOT_SIM_WARMUP_MINUTES: "1"
    })
    let output = ""
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    await waitServing(child, port, 90_000)
    // How to call it, without the configured key: keys are never logged.
    for (const deadline = Date.now() + 10_000; !output.includes("stream: ws://") && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(output).toContain(`curl -H 'Authorization: Bearer <a key of SPOT_API_KEYS>' http://127.0.0.1:${port}/v1/tokens/`)
    expect(output).not.toContain(apiKey)
    const discovery = await fetch(`http://127.0.0.1:${port}/v1/discovery`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ chains: ["solana", "base", "bsc", "robinhood", "arc"], newPairs: {} })
    }).then((r) => r.json() as Promise<any>)
    const entry = discovery.columns[0].deltas[0]
    expect(entry.rank).toBe(1)
    const token = await get(port, `/v1/tokens/${entry.chain}/${entry.address}`)
    expect(token.status).toBe(200)
    expect(token.body.address).toBe(entry.address)
    expect(await stop(child)).toBe(0)
  }, 120_000)

  it("refuses a taken port before anything else: no warm-up, nothing written to the data directory", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    try {
      const port = (taken.address() as AddressInfo).port
      const child = start({ PORT: String(port) })
      let stderr = ""
      child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
      const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)))
      expect(code).toBe(1)
      expect(stderr).toContain(`cannot listen on HOST=127.0.0.1 PORT=${port}: listen EADDRINUSE`)
      // before: the whole warm-up into the embedded database, and a snapshot, then the refusal
      expect(readdirSync(dataDirs[dataDirs.length - 1]!)).toEqual([])
    } finally {
      taken.close()
    }
  }, 60_000)

  it("runs the embedded database when no DATABASE_URL is set", async () => {
    const port = await freePort()
    const child = start({ PORT: String(port), SPOT_SIMULATOR: "off" })
    await waitServing(child, port, 90_000)
    const missing = await get(port, "/v1/tokens/solana/So11111111111111111111111111111111111111112")
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe("NOT_FOUND")

    // A second server on the same data directory refuses to start, naming the first: two would
    // open the embedded database each, and batches one of them acknowledged would be lost.
    const dataDir = dataDirs[dataDirs.length - 1]!
    const second = start({ PORT: String(await freePort()), SPOT_SIMULATOR: "off" }, dataDir)
    let stderr = ""
    second.stderr!.on("data", (chunk) => (stderr += String(chunk)))
    const code = await new Promise<number | null>((resolve) => second.once("exit", (c) => resolve(c)))
    expect(code).toBe(1)
    expect(stderr).toContain(`SPOT_DATA_DIR ${dataDir} is in use by another server (pid ${child.pid}`)
    // the first one is untouched and still serves
    expect((await get(port, "/v1/tokens/solana/So11111111111111111111111111111111111111112")).status).toBe(404)
    expect(await stop(child)).toBe(0)
    // its stop released the lock
    expect(existsSync(join(dataDir, "server.lock"))).toBe(false)
  }, 120_000)
})
