/**
 * Market events for tests, with valid defaults: a test names what it is about (the event's `id`,
 * its `token`, its `timestamp`) and overrides only the fields its assertions depend on. Every
 * event's keys follow the schema's order (packages/domain/src/events/MarketEvent.ts), whatever the
 * overrides, so tests that compare bytes see the same bytes from one run to the next.
 */
import { nativeAsset } from "../src/Chain.js"
import type { MarketEvent, TokenMetadataFields } from "../src/events/MarketEvent.js"

export type TokenLaunched = Extract<MarketEvent, { readonly type: "tokenLaunched" }>
export type Swap = Extract<MarketEvent, { readonly type: "swap" }>
export type Transfer = Extract<MarketEvent, { readonly type: "transfer" }>

/** The fields a test must name; every other field is optional and takes the default. */
type Given<E, Required extends keyof E> = Pick<E, Required> & Partial<Omit<E, "type" | Required>>

/** A creator address for launches that do not care who created the token. */
export const CREATOR = "Creator111111111111111111111111111111111111"
/** A trader address for swaps that do not care who traded. */
export const TRADER = "Trader1111111111111111111111111111111111111"
/** A pool address for swaps that do not care which pool traded. */
export const POOL = "Poo1111111111111111111111111111111111111111"
/** A wallet address for transfers that do not care who received. */
export const WALLET = "Wa11et1111111111111111111111111111111111111"

/** Token metadata with every link null: only the name and symbol, unless overridden. */
export const metadata = (name: string, symbol: string, overrides: Partial<TokenMetadataFields> = {}): TokenMetadataFields => ({
  name,
  symbol,
  image: null,
  description: null,
  website: null,
  twitter: null,
  telegram: null,
  discord: null,
  ...overrides
})

/**
 * A plain Solana token launched by CREATOR: 6 decimals, a supply of 10^9 whole tokens, no
 * launchpad, no curve, in block 1, transaction `${id}-tx`, no annotations, no metadata.
 */
export const launch = ({ id, token, timestamp, ...overrides }: Given<TokenLaunched, "id" | "token" | "timestamp">): TokenLaunched => ({
  type: "tokenLaunched",
  id,
  timestamp,
  chain: "solana",
  token,
  creator: CREATOR,
  decimals: 6,
  supply: 1_000_000_000_000_000n,
  launchpad: null,
  hasCurve: false,
  block: 1,
  transactionHash: `${id}-tx`,
  annotations: [],
  metadata: null,
  ...overrides
})

/**
 * A TRADER's buy on a Raydium pool of a Solana token, quoted in SOL: 1 token (10^6 base units)
 * for 10^6 lamports, in block 1, transaction `${id}-tx`, a 5,000-lamport transaction fee, no
 * terminal, no pool state. `nativeAmount` is `quoteAmount` unless overridden: the quote is the
 * native asset.
 */
export const swap = ({ id, token, timestamp, ...overrides }: Given<Swap, "id" | "token" | "timestamp">): Swap => ({
  type: "swap",
  id,
  timestamp,
  chain: "solana",
  token,
  pool: POOL,
  dex: "raydium",
  trader: TRADER,
  transactionHash: `${id}-tx`,
  block: 1,
  indexInBlock: 0,
  side: "buy",
  tokenAmount: 1_000_000n,
  quoteAmount: 1_000_000n,
  quoteAddress: nativeAsset.solana.address,
  quoteSymbol: "SOL",
  quoteDecimals: 9,
  nativeAmount: overrides.quoteAmount ?? 1_000_000n,
  nativeUsd: "150",
  fees: { transaction: 5000n, validator: 0n, platform: 0n, dex: 0n },
  terminal: null,
  poolAfter: null,
  ...overrides
})

/**
 * A mint of 1 token (10^6 base units) of a Solana token to WALLET, in block 1, transaction
 * `${id}-tx`. `from` null is a mint, `to` null a burn.
 */
export const transfer = ({ id, token, timestamp, ...overrides }: Given<Transfer, "id" | "token" | "timestamp">): Transfer => ({
  type: "transfer",
  id,
  timestamp,
  chain: "solana",
  token,
  from: null,
  to: WALLET,
  amount: 1_000_000n,
  transactionHash: `${id}-tx`,
  block: 1,
  ...overrides
})
