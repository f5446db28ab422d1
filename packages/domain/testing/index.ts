/**
 * The domain's test kit (`@spot/domain/testing`), for tests and benchmarks of any package that
 * folds a market: market events with valid defaults and overridable fields (`Events`), fast-check
 * arbitraries of them with any field pinnable (`EventArbitraries`), every read an engine serves, as
 * text, and the first place two such lists differ.
 * Not for production code (the architecture check keeps `src/` from importing it).
 */
export { firstDifference, readsOf } from "./EngineReads.js"
export type { ReadsOptions } from "./EngineReads.js"
export * as Events from "./Events.js"
export * as EventArbitraries from "./Arbitraries.js"
