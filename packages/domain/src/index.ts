/**
 * The pure domain: wire schemas, the market-event model, the engine that folds events into every
 * served object, discovery ranking, position PnL, cursors, snapshot-merge rules and the simulator.
 * No I/O, no clock, no randomness: time and seeds come in as arguments.
 */
export * from "./wire/index.js"
export * as Chain from "./Chain.js"
export type { Chain as ChainSlugValue } from "./Chain.js"
export * as Fixed from "./Fixed.js"
export * as Events from "./events/MarketEvent.js"
export type { MarketEvent } from "./events/MarketEvent.js"
export * as Gcra from "./limits/Gcra.js"
export * as Cursor from "./cursor/Cursor.js"
export * as TradeKeyset from "./cursor/TradeKeyset.js"
export * as Discovery from "./discovery/Discovery.js"
export * as SnapshotMerge from "./merge/SnapshotMerge.js"
export * as PositionsQuery from "./positions/PositionsQuery.js"
export * as Positions from "./market/Positions.js"
export * as Candles from "./market/Candles.js"
export { MarketEngine, defaultEngineOptions } from "./market/MarketEngine.js"
export { tradeIdOf, tradeWire } from "./market/TradeFeed.js"
export type { EngineChanges, EngineOptions, PositionEntry, Rejection } from "./market/MarketEngine.js"
export { TokenBook } from "./market/TokenBook.js"
export { TradeRecord } from "./market/TradeFeed.js"
export type { TradeFacts } from "./market/TradeFeed.js"
export { TradeTape } from "./market/TradeTape.js"
export type { CandleQuery, CandleValue, StatsValue } from "./market/TradeTape.js"
export { HolderBook } from "./market/Holders.js"
export * as Simulator from "./simulator/MarketSimulator.js"
