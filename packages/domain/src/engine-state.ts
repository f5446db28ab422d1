/**
 * The engine's state as a state codec sees it (`@spot/domain/engine-state`): for a serializer of
 * a whole engine, such as the storage adapter's snapshot codec, not for reading the market (reads
 * go through `MarketEngine`'s methods, exported from `@spot/domain`). A codec walks an engine's
 * object graph, so it must know the classes of the objects it meets, the module-level objects the
 * engine compares by identity (read off probe instances), and the modules whose exported code
 * folds events: their source text identifies the fold's rules, so bytes written by other rules can
 * be refused. Nothing here is
 * stable API beyond that purpose: a class added to the engine's state is added here.
 */

// The classes whose instances make up an engine's state.
export { CandleHourlySeries } from "./market/CandleHourlySeries.js"
export { HolderBook } from "./market/Holders.js"
export { defaultEngineOptions, MarketEngine, TradeFlagLists } from "./market/MarketEngine.js"
export type { EngineOptions } from "./market/MarketEngine.js"
export { PositionBook } from "./market/Positions.js"
export { TextBytes } from "./market/TextBytes.js"
export { TokenBook } from "./market/TokenBook.js"
export { TradeCodes, TradeRecord, TradeRing } from "./market/TradeFeed.js"
export { TradeTape } from "./market/TradeTape.js"
export { PackedFunding, unresolvedFunding } from "./market/Funding.js"
export { WalletDirectory, WalletRecord } from "./market/Wallets.js"

// The chains' constants the fold reads.
export { canonicalAddress, chains, nativeAsset } from "./Chain.js"

// The modules whose exported functions and constants fold events (and the helpers they share).
export * as CandleAggregate from "./market/CandleAggregate.js"
export * as CandleHourlySeriesModule from "./market/CandleHourlySeries.js"
export * as Candles from "./market/Candles.js"
export * as Fixed from "./Fixed.js"
export * as Funding from "./market/Funding.js"
export * as Holders from "./market/Holders.js"
export * as MarketEngineModule from "./market/MarketEngine.js"
export * as Positions from "./market/Positions.js"
export * as TapeNumbers from "./market/TapeNumbers.js"
export * as TokenBookModule from "./market/TokenBook.js"
export * as TradeFeed from "./market/TradeFeed.js"
export * as TradeTapeModule from "./market/TradeTape.js"
export * as Wallets from "./market/Wallets.js"
export * as Wide from "./market/Wide.js"
