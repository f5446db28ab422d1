/**
 * The secret that signs page cursors. Cursors made with one secret are unreadable with another,
 * so a fleet (or a restarted server that must honour old cursors) shares one.
 */
import { Context, Layer } from "effect"

export class CursorSecret extends Context.Service<CursorSecret, Uint8Array>()("@spot/application/CursorSecret") {}

export const layer = (secret: Uint8Array): Layer.Layer<CursorSecret> => Layer.succeed(CursorSecret, secret)
