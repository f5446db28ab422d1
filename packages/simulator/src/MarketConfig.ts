/**
 * The simulated market's fixed shape: per chain its block time, native price, quote assets,
 * launchpads (with their curves and graduation venues) and fee levels; the trader populations
 * and the token fates. Rates scale with `SimulatorOptions`; these are the proportions.
 */
import type { ChainSlugValue as Chain } from "@spot/domain"
import { Chain as Chains } from "@spot/domain"
import type { CurveParameters } from "./BondingCurve.js"
import { pumpFunCurve, pumpStyleCurve } from "./BondingCurve.js"

export interface QuoteAsset {
  readonly address: string
  readonly symbol: string
  readonly decimals: number
  /** True when the quote is the chain's native asset (or its wrapped form). */
  readonly isNative: boolean
}

export interface LaunchpadSpec {
  /** Launchpad name on the wire; null for a plain token. */
  readonly name: string | null
  readonly curve: CurveParameters | null
  /** Token decimals and supply when there is no curve. */
  readonly decimals: number
  readonly supply: bigint
  /** Venue of the first pool: the launchpad itself for a curve, else the dex. */
  readonly firstVenue: string
  /** Dex of the pool after graduation (curve) or from the start (no curve). */
  readonly poolDex: string
  readonly poolFeeBps: bigint
  /** Launchpad fee on curve swaps, in bps of the swap value. */
  readonly curveFeeBps: bigint
  /** Initial pool depth in USD of quote for curve-less launches. */
  readonly poolQuoteUsd: number
  /** Share of curve-less launches whose pool quotes a USD stablecoin instead of the native asset. */
  readonly stableQuoteShare: number
  /** Share of supply the creator keeps at launch (curve-less launches only, minted to the creator). */
  readonly creatorSharePct: number
  /** Vanity tail of token addresses (pump.fun mints end in `pump`, four.meme in `4444`). */
  readonly addressSuffix: string
  readonly mayhemShare: number
  readonly weight: number
}

export interface ChainSpec {
  readonly chain: Chain
  readonly blockMs: number
  /** Block number at the simulator's start time. */
  readonly firstBlock: number
  readonly launchShare: number
  readonly nativeUsd: number
  /** Relative volatility of each native price step. */
  readonly priceStepSigma: number
  readonly nativeQuote: QuoteAsset
  readonly stableQuote: QuoteAsset | null
  readonly launchpads: ReadonlyArray<LaunchpadSpec>
  /** USD range of the base transaction fee. */
  readonly transactionFeeUsd: readonly [number, number]
  /** USD range of priority fees / validator tips (bots pay the top of it). */
  readonly validatorFeeUsd: readonly [number, number]
  readonly terminals: ReadonlyArray<string>
}

const oneBillion18 = 1_000_000_000n * 10n ** 18n
const ether = 10n ** 18n

const curveLaunchpad = (
  name: string,
  curve: CurveParameters,
  poolDex: string,
  poolFeeBps: bigint,
  addressSuffix: string,
  weight: number,
  mayhemShare = 0
): LaunchpadSpec => ({
  name,
  curve,
  decimals: curve.decimals,
  supply: curve.supply,
  firstVenue: name,
  poolDex,
  poolFeeBps,
  curveFeeBps: 100n,
  poolQuoteUsd: 0,
  stableQuoteShare: 0,
  creatorSharePct: 0,
  addressSuffix,
  mayhemShare,
  weight
})

const poolLaunch = (
  name: string | null,
  dex: string,
  feeBps: bigint,
  supply: bigint,
  poolQuoteUsd: number,
  stableQuoteShare: number,
  creatorSharePct: number,
  weight: number
): LaunchpadSpec => ({
  name,
  curve: null,
  decimals: 18,
  supply,
  firstVenue: dex,
  poolDex: dex,
  poolFeeBps: feeBps,
  curveFeeBps: 0n,
  poolQuoteUsd,
  stableQuoteShare,
  creatorSharePct,
  addressSuffix: "",
  mayhemShare: 0,
  weight
})

const native = (chain: Chain, symbol: string): QuoteAsset => ({
  address: Chains.nativeAsset[chain].address,
  symbol,
  decimals: Chains.nativeAsset[chain].decimals,
  isNative: true
})

const evmTerminals = ["bullx", "gmgn", "maestro", "sigma", "banana"] as const

export const chainSpecs: ReadonlyArray<ChainSpec> = [
  {
    chain: "solana",
    blockMs: 400,
    firstBlock: 340_000_000,
    launchShare: 0.55,
    nativeUsd: 150,
    priceStepSigma: 0.0012,
    nativeQuote: native("solana", "SOL"),
    stableQuote: null,
    launchpads: [
      curveLaunchpad("pumpfun", pumpFunCurve, "pumpswap", 25n, "pump", 0.75, 0.04),
      curveLaunchpad("letsbonk", pumpFunCurve, "raydium", 25n, "bonk", 0.25)
    ],
    transactionFeeUsd: [0.00075, 0.0008],
    validatorFeeUsd: [0.0015, 0.9],
    terminals: ["axiom", "photon", "bullx", "gmgn", "trojan"]
  },
  {
    chain: "base",
    blockMs: 2000,
    firstBlock: 32_000_000,
    launchShare: 0.16,
    nativeUsd: 3000,
    priceStepSigma: 0.001,
    nativeQuote: native("base", "WETH"),
    stableQuote: { address: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", symbol: "USDC", decimals: 6, isNative: false },
    launchpads: [
      poolLaunch("clanker", "uniswap-v4", 100n, 100_000_000_000n * ether, 9_000, 0.1, 0, 0.45),
      poolLaunch("zora", "uniswap-v4", 100n, oneBillion18, 6_000, 0, 1, 0.4),
      poolLaunch(null, "uniswap-v3", 30n, oneBillion18, 20_000, 0.4, 10, 0.15)
    ],
    transactionFeeUsd: [0.002, 0.03],
    validatorFeeUsd: [0.0002, 0.02],
    terminals: evmTerminals
  },
  {
    chain: "bsc",
    blockMs: 750,
    firstBlock: 52_000_000,
    launchShare: 0.17,
    nativeUsd: 600,
    priceStepSigma: 0.001,
    nativeQuote: native("bsc", "WBNB"),
    stableQuote: { address: "0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d", symbol: "USDC", decimals: 18, isNative: false },
    launchpads: [
      curveLaunchpad("fourmeme", pumpStyleCurve(18, 6n * ether), "pancakeswap", 25n, "4444", 0.85),
      poolLaunch(null, "pancakeswap", 25n, oneBillion18, 15_000, 0.3, 10, 0.15)
    ],
    transactionFeeUsd: [0.01, 0.05],
    validatorFeeUsd: [0, 0.01],
    terminals: evmTerminals
  },
  {
    chain: "robinhood",
    blockMs: 250,
    firstBlock: 1_200_000,
    launchShare: 0.06,
    nativeUsd: 3000,
    priceStepSigma: 0.001,
    nativeQuote: native("robinhood", "ETH"),
    stableQuote: null,
    launchpads: [
      curveLaunchpad("robinpad", pumpStyleCurve(18, (3n * ether) / 2n), "uniswap-v3", 30n, "", 0.8),
      poolLaunch(null, "uniswap-v3", 30n, oneBillion18, 10_000, 0, 10, 0.2)
    ],
    transactionFeeUsd: [0.001, 0.01],
    validatorFeeUsd: [0, 0.002],
    terminals: evmTerminals
  },
  {
    chain: "arc",
    blockMs: 500,
    firstBlock: 6_500_000,
    launchShare: 0.06,
    nativeUsd: 1,
    priceStepSigma: 0.00005,
    nativeQuote: native("arc", "USDC"),
    stableQuote: null,
    launchpads: [
      curveLaunchpad("arcpad", pumpStyleCurve(18, 4_500n * ether), "arcswap", 30n, "", 0.8),
      poolLaunch(null, "arcswap", 30n, oneBillion18, 10_000, 0, 10, 0.2)
    ],
    transactionFeeUsd: [0.005, 0.02],
    validatorFeeUsd: [0, 0.005],
    terminals: evmTerminals
  }
]

/** Trader populations. Each wallet belongs to one; the population sets its sizes and labels. */
export const Population = {
  regular: 0,
  fresh: 1,
  pro: 2,
  partner: 3,
  whale: 4,
  kol: 5,
  partnerscan: 6,
  phishing: 7,
  sniper: 8,
  insider: 9,
  bundler: 10,
  developer: 11,
  mayhemAgent: 12
} as const
export type Population = (typeof Population)[keyof typeof Population]

export interface PopulationSpec {
  readonly population: Population
  /** Wallets per address family (solana / evm); a fixed pool so wallets recur across tokens. */
  readonly poolSize: number
  /** Weight among buyers in the trading phase (0: only at launch bursts). */
  readonly buyWeight: number
  readonly medianUsd: number
  readonly sizeSigma: number
  /** Share of wallets whose first funding is looked up when first seen (fresh wallets: always). */
  readonly fundedShare: number
}

export const populationSpecs: ReadonlyArray<PopulationSpec> = [
  { population: Population.regular, poolSize: 20_000, buyWeight: 0.46, medianUsd: 40, sizeSigma: 1, fundedShare: 0.35 },
  { population: Population.fresh, poolSize: 4_000, buyWeight: 0.14, medianUsd: 30, sizeSigma: 1, fundedShare: 1 },
  { population: Population.pro, poolSize: 3_000, buyWeight: 0.16, medianUsd: 150, sizeSigma: 0.9, fundedShare: 0.5 },
  { population: Population.partner, poolSize: 1_500, buyWeight: 0.08, medianUsd: 80, sizeSigma: 1, fundedShare: 0.4 },
  { population: Population.whale, poolSize: 300, buyWeight: 0.012, medianUsd: 2_500, sizeSigma: 0.5, fundedShare: 0.6 },
  { population: Population.kol, poolSize: 150, buyWeight: 0.025, medianUsd: 400, sizeSigma: 0.7, fundedShare: 0.5 },
  { population: Population.partnerscan, poolSize: 200, buyWeight: 0.02, medianUsd: 200, sizeSigma: 0.8, fundedShare: 0.5 },
  { population: Population.phishing, poolSize: 300, buyWeight: 0.02, medianUsd: 60, sizeSigma: 1, fundedShare: 0.5 },
  { population: Population.sniper, poolSize: 400, buyWeight: 0.04, medianUsd: 300, sizeSigma: 0.6, fundedShare: 0.5 },
  { population: Population.insider, poolSize: 1_000, buyWeight: 0.02, medianUsd: 250, sizeSigma: 0.6, fundedShare: 0.5 },
  { population: Population.bundler, poolSize: 2_000, buyWeight: 0.02, medianUsd: 120, sizeSigma: 0.5, fundedShare: 1 },
  { population: Population.developer, poolSize: 600, buyWeight: 0, medianUsd: 150, sizeSigma: 0.8, fundedShare: 0 },
  { population: Population.mayhemAgent, poolSize: 1, buyWeight: 0, medianUsd: 50, sizeSigma: 0.5, fundedShare: 0 }
]

/**
 * What becomes of a token: how many trades it draws (relative), how fast its activity decays,
 * how long it stays live, and how eager buyers are (which decides how far up its curve it gets).
 */
export interface FateSpec {
  readonly weight: number
  readonly relativeTrades: number
  readonly decayMs: number
  readonly lifetimeMs: readonly [number, number]
  readonly buyShareStart: number
  readonly buyShareEnd: number
}

const minute = 60_000

export const fateSpecs: ReadonlyArray<FateSpec> = [
  // Dies young: a burst of trades in the first minutes, then a trickle.
  { weight: 0.8, relativeTrades: 40, decayMs: 1.5 * minute, lifetimeMs: [5 * minute, 30 * minute], buyShareStart: 0.55, buyShareEnd: 0.3 },
  // Climbs part of the curve and stalls (the graduating column).
  { weight: 0.12, relativeTrades: 150, decayMs: 4 * minute, lifetimeMs: [20 * minute, 60 * minute], buyShareStart: 0.64, buyShareEnd: 0.4 },
  // Runs up, graduates, keeps trading on its pool.
  { weight: 0.08, relativeTrades: 500, decayMs: 8 * minute, lifetimeMs: [40 * minute, 120 * minute], buyShareStart: 0.8, buyShareEnd: 0.5 }
]

/** Longest a token stays live; bounds the simulator's memory to the launches of this window. */
export const maxLifetimeMs = 120 * minute

export const cexLabels = ["Binance", "Coinbase", "OKX", "Bybit", "Kraken", "MEXC"] as const
