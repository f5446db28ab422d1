/** Wire schemas of every object the spec defines, exported flat. */
export * from "./Candle.js"
export * from "./Common.js"
export * from "./Discovery.js"
export * from "./ErrorEnvelope.js"
export * from "./Position.js"
export * from "./StreamFrames.js"
export * from "./Token.js"
export * from "./Trade.js"
