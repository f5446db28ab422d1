/**
 * Owning Node's `upgrade` event next to the Effect HTTP server, on one port.
 *
 * `NodeHttpServer.make` registers its own `upgrade` listener whenever it serves an app (see
 * `@effect/platform-node/dist/NodeHttpServer.js`, `serve`: `server.on("upgrade", upgradeHandler)`),
 * with no option to leave it out. Two listeners on the same event both run on every upgrade and
 * write to the same socket, corrupting it (docs/streams.md). So the server handed to
 * `NodeHttpServer.layer` is wrapped: a listener added for `upgrade` is not attached but kept as the
 * fallback, and the one real `upgrade` listener routes by path — the stream path to the stream
 * server, every other path to Effect's handler (which answers it through the REST pipeline).
 */
import type { IncomingMessage, Server } from "node:http"
import type { Duplex } from "node:stream"

export type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void

export interface UpgradeRoutes {
  /** Sends upgrades of exactly this path (query string ignored) to `listener`. */
  readonly route: (path: string, listener: UpgradeListener) => void
  /** Removes a route. */
  readonly unroute: (path: string) => void
}

const pathOf = (url: string | undefined): string => {
  if (url === undefined) return "/"
  const q = url.indexOf("?")
  return q < 0 ? url : url.slice(0, q)
}

/** Takes over `server`'s `upgrade` event; returns where to register upgrade routes. */
export const ownUpgrades = (server: Server): UpgradeRoutes => {
  const routes = new Map<string, UpgradeListener>()
  let fallback: UpgradeListener | undefined
  // Typed loosely: these forward any event name to EventEmitter's own methods.
  const on = server.on as (this: Server, event: string | symbol, listener: (...args: Array<any>) => void) => Server
  const off = server.off as (this: Server, event: string | symbol, listener: (...args: Array<any>) => void) => Server
  const intercept = function(this: Server, event: string | symbol, listener: (...args: Array<any>) => void) {
    if (event === "upgrade") {
      fallback = listener as UpgradeListener
      return this
    }
    return on.call(this, event, listener)
  }
  const release = function(this: Server, event: string | symbol, listener: (...args: Array<any>) => void) {
    if (event === "upgrade") {
      if (fallback === listener) fallback = undefined
      return this
    }
    return off.call(this, event, listener)
  }
  on.call(server, "upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const listener = routes.get(pathOf(request.url))
    if (listener !== undefined) return listener(request, socket, head)
    if (fallback !== undefined) return fallback(request, socket, head)
    socket.destroy()
  })
  server.on = intercept as Server["on"]
  server.addListener = intercept as Server["addListener"]
  server.off = release as Server["off"]
  server.removeListener = release as Server["removeListener"]
  return {
    route: (path, listener) => void routes.set(path, listener),
    unroute: (path) => void routes.delete(path)
  }
}
