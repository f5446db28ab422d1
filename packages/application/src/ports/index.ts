export * from "./EventStore.js"
export * from "./KeyStore.js"
export * from "./RateLimiter.js"
export * from "./SnapshotStore.js"
