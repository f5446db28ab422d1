/**
 * Use cases and ports: what the service does, independent of HTTP, WebSocket and SQL.
 */
export * from "./auth/index.js"
export * from "./ports/index.js"
export * from "./errors.js"
export * as Market from "./Market.js"
export type { ChangeListener, IngestOutcome, MarketShape } from "./Market.js"
export * as CursorSecret from "./CursorSecret.js"
export * as TokenQueries from "./queries/TokenQueries.js"
export * as TradeQueries from "./queries/TradeQueries.js"
export * as PositionQueries from "./queries/PositionQueries.js"
export * as DiscoveryQueries from "./queries/DiscoveryQueries.js"
export { Issues, refuseUnknown } from "./queries/Params.js"
export * as SimulatorFeed from "./SimulatorFeed.js"
export * as Ingest from "./Ingest.js"
export type { IngestResult, IngestShape } from "./Ingest.js"
export * as Snapshots from "./Snapshots.js"
export type { RestoreOutcome, SnapshotSettings, TakeOutcome } from "./Snapshots.js"
