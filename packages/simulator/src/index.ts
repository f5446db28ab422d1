/**
 * A deterministic market simulator: an event source that invents a market on all five chains and
 * emits it as the domain's `MarketEvent`s, the same events for the same seed however time is cut
 * (docs/simulator.md). Pure like the domain it feeds: its only randomness is its seeded `Prng`.
 * The service's embedded feed uses it through the application's `MarketSimulation` port; tests
 * and benchmarks use it as a kit to make realistic markets.
 */
export * from "./MarketSimulator.js"
export * as Prng from "./Prng.js"
export * as BondingCurve from "./BondingCurve.js"
