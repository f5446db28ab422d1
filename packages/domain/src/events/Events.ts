/**
 * The market-event model as one namespace (`Events` of the package index): the events and their
 * schema (MarketEvent.ts), and the fast paths for ingest, checked against the schema by property
 * tests (MarketEventJson.ts).
 */
export * from "./MarketEvent.js"
export { carriesOnlyEventFields, decodeMarketEventFast, encodeMarketEventFast, fieldCounts, marketEventJson } from "./MarketEventJson.js"
