export * from "./MarketSimulator.js"
export * as Prng from "./Prng.js"
export * as BondingCurve from "./BondingCurve.js"
