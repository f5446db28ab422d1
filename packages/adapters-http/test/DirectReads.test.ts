/**
 * The server's request listener (DirectReads.ownRequests) while the service stops: once the
 * server no longer listens, every response closes its connection (a client's kept-alive
 * connections must not carry new requests into the shutdown, which would wait for them), and a
 * request that arrives after the request pipeline is gone gets the envelope, not a bare 503.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, createServer, request } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import { connect } from "node:net"
import type { AddressInfo } from "node:net"
import { DirectReads } from "@spot/adapters-http"

interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

const get = (port: number, agent: Agent, headers: Record<string, string> = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request({ port, path: "/v1/anything", agent, headers }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (body += chunk))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }))
    })
    req.on("error", reject)
    req.end()
  })

describe("the request listener while the service stops", () => {
  it("closes each connection after its response once the server stopped listening, so the stop does not wait on kept-alive clients", async () => {
    const server = createServer()
    DirectReads.ownRequests(server)
    let release: (() => void) | undefined
    // the platform's handler (as Effect's server registers it): answers at once, or when released
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const answer = () => res.end("ok")
      if (req.headers["x-hold"] === "1") release = answer
      else answer()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as AddressInfo).port
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const first = await get(port, agent)
    expect(first.headers.connection).toBe("keep-alive")
    // a request in progress when the stop begins
    const held = get(port, agent, { "x-hold": "1" })
    while (release === undefined) await new Promise((resolve) => setTimeout(resolve, 5))
    let closed = false
    server.close(() => (closed = true))
    release()
    const answer = await held
    expect(answer.status).toBe(200)
    expect(answer.headers.connection).toBe("close")
    // its connection closed with it: the stop is not held by it
    for (let waited = 0; !closed && waited < 2_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(closed).toBe(true)
    agent.destroy()
  })

  it("does not carry out a request pipelined behind a response that closes the connection: it could never be answered", async () => {
    const server = createServer()
    DirectReads.ownRequests(server)
    const handled: Array<string> = []
    let release: (() => void) | undefined
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      handled.push(req.url!)
      if (req.url === "/first") release = () => res.end("first")
      else res.end("other")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as AddressInfo).port
    const socket = connect(port, "127.0.0.1")
    let received = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => (received += chunk))
    const ended = new Promise<void>((resolve) => socket.on("close", () => resolve()))
    socket.write("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
    while (release === undefined) await new Promise((resolve) => setTimeout(resolve, 5))
    server.close()
    // sent after the stop began, behind the first request's response on the same connection
    socket.write("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
    await new Promise((resolve) => setTimeout(resolve, 50))
    release()
    await ended
    expect(handled).toEqual(["/first"])
    expect(received).toContain("Connection: close")
    expect(received).toContain("first")
    expect(received).not.toContain("other")
  })

  it("answers the envelope (503 SERVICE_UNAVAILABLE, its request id) when the request pipeline is gone", async () => {
    const server = createServer()
    DirectReads.ownRequests(server)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as AddressInfo).port
    const agent = new Agent({ keepAlive: true })
    const answer = await get(port, agent, { "x-request-id": "stop-1" })
    expect(answer.status).toBe(503)
    expect(answer.headers["x-request-id"]).toBe("stop-1")
    expect(answer.headers.connection).toBe("close")
    expect(JSON.parse(answer.body)).toEqual({ error: { code: "SERVICE_UNAVAILABLE", message: expect.stringContaining("stopping") } })
    agent.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
})
