/**
 * What discovery ranks: one launchpad token's current state, as the engine keeps it. Plain data;
 * the use case turns a ranked candidate into the wire token object.
 */
import type { Chain } from "../Chain.js"
import type { Fixed } from "../Fixed.js"

export interface DiscoveryCandidate {
  readonly chain: Chain
  readonly address: string
  readonly name: string
  readonly symbol: string
  readonly creator: string
  /** The wallet that funded the creator; null until known (or when no funder is known). */
  readonly creatorFunder: string | null
  /** Launchpad name (such as `pump.fun`); null for a plain token, which discovery never lists. */
  readonly launchpad: string | null
  /** Launch flags such as `mayhem_mode`. */
  readonly annotations: ReadonlyArray<string>
  readonly createdAt: number
  /** When the token's state last changed (ms); the clock of `lastActivityMinutes`. */
  readonly updatedAt: number
  /** When the token migrated off its curve (ms); null until then and for curve-less launchers. */
  readonly graduatedAt: number | null
  /** Curve completion, 0-100; null for launchers without a bonding curve. */
  readonly bondingCurvePct: Fixed | null
  /**
   * Curve percentage points gained over the hour before `now` (the curve now minus its reading at
   * `now` − 1 h, negative when sells pushed the curve back; 0 without a curve). Computed by the
   * engine from its curve history; see docs/discovery.md.
   */
  bondingCurveActivity(now: number): number
  /** Symbol of the quote asset of the token's deepest pool. */
  readonly anchorSymbol: string | null
  readonly volume24hUsd: Fixed
  readonly marketCapUsd: Fixed
  readonly liquidityUsd: Fixed
  readonly holdersCount: number
  readonly buys24h: number
  readonly sells24h: number
  readonly devHoldingPct: Fixed
  readonly snipersPct: Fixed
  readonly top10Pct: Fixed
  readonly globalFeesPaidUsd: Fixed
  readonly twitter: string | null
  readonly website: string | null
  readonly telegram: string | null
  readonly discord: string | null
}
