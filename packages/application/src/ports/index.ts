export * from "./KeyStore.js"
export * from "./RateLimiter.js"
