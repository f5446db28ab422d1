/**
 * WebSocket frames at /v1/stream (spec "Events" → "Frames"). The spec shows the subscribe,
 * update and error frames; unsubscribe, acknowledgement and keep-alive frames and the meaning
 * of `id` are the service's own: `id` is chosen by the client and echoed on the frame that
 * answers it.
 */
import { Schema } from "effect"
import { TimestampMs } from "./Common.js"
import { StreamErrorBody } from "./ErrorEnvelope.js"

export const StreamChannel = Schema.Literals(["spot.tokens", "spot.candles", "spot.trades", "spot.positions"]).annotate({
  identifier: "StreamChannel",
  description: "Stream channel"
})
export type StreamChannel = typeof StreamChannel.Type

const clientId = Schema.optionalKey(
  Schema.String.annotate({ description: "Chosen by the client; echoed on the frame that answers this one" })
)
const echoedId = Schema.optionalKey(
  Schema.String.annotate({ description: "The `id` of the client frame this answers, when it carried one" })
)

// ---------------------------------------------------------------------------------------------
// Client → server

export const SubscribeFrame = Schema.Struct({
  action: Schema.Literal("subscribe"),
  channel: Schema.String.annotate({ description: "Channel name, such as `spot.trades`" }),
  filters: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "Channel filters" }),
  id: clientId
}).annotate({ identifier: "SubscribeFrame", description: "Subscribe to a channel" })
export type SubscribeFrame = typeof SubscribeFrame.Type

export const UnsubscribeFrame = Schema.Struct({
  action: Schema.Literal("unsubscribe"),
  subscriptionId: Schema.String,
  id: clientId
}).annotate({ identifier: "UnsubscribeFrame", description: "End one subscription" })
export type UnsubscribeFrame = typeof UnsubscribeFrame.Type

export const PingFrame = Schema.Struct({
  action: Schema.Literal("ping"),
  id: clientId
}).annotate({ identifier: "PingFrame", description: "Keep-alive; answered with a pong frame" })
export type PingFrame = typeof PingFrame.Type

export const ClientFrame = Schema.Union([SubscribeFrame, UnsubscribeFrame, PingFrame]).annotate({
  identifier: "ClientFrame",
  description: "A frame sent by the client"
})
export type ClientFrame = typeof ClientFrame.Type

// ---------------------------------------------------------------------------------------------
// Server → client

export const UpdateFrame = Schema.Struct({
  type: Schema.Literal("update"),
  channel: Schema.String,
  subscriptionId: Schema.String,
  data: Schema.Unknown.annotate({ description: "The channel's object: token, candle, trade or position" })
}).annotate({ identifier: "UpdateFrame", description: "An object of a subscribed channel changed" })
export type UpdateFrame = typeof UpdateFrame.Type

export const SubscribedFrame = Schema.Struct({
  type: Schema.Literal("subscribed"),
  channel: Schema.String,
  subscriptionId: Schema.String,
  id: echoedId
}).annotate({ identifier: "SubscribedFrame", description: "A subscribe was accepted" })
export type SubscribedFrame = typeof SubscribedFrame.Type

export const UnsubscribedFrame = Schema.Struct({
  type: Schema.Literal("unsubscribed"),
  subscriptionId: Schema.String,
  id: echoedId
}).annotate({ identifier: "UnsubscribedFrame", description: "A subscription ended" })
export type UnsubscribedFrame = typeof UnsubscribedFrame.Type

export const PongFrame = Schema.Struct({
  type: Schema.Literal("pong"),
  id: echoedId,
  time: TimestampMs.annotateKey({ description: "Server time" })
}).annotate({ identifier: "PongFrame", description: "Answer to a ping" })
export type PongFrame = typeof PongFrame.Type

export const ErrorFrame = Schema.Struct({
  type: Schema.Literal("error"),
  id: echoedId,
  error: StreamErrorBody
}).annotate({ identifier: "ErrorFrame", description: "A client frame was refused, such as a subscribe" })
export type ErrorFrame = typeof ErrorFrame.Type

export const ServerFrame = Schema.Union([UpdateFrame, SubscribedFrame, UnsubscribedFrame, PongFrame, ErrorFrame]).annotate({
  identifier: "ServerFrame",
  description: "A frame sent by the server"
})
export type ServerFrame = typeof ServerFrame.Type
