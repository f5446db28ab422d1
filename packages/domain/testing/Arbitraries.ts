/**
 * fast-check arbitraries of market events for property tests: every field a valid value of the
 * schema, any field pinned by passing an arbitrary of it (`fc.constant(TOKEN)` for one token). The
 * events come out of the `Events` factories, so their keys follow the schema's order too.
 */
import * as fc from "fast-check"
import { chains } from "../src/Chain.js"
import * as Events from "./Events.js"

/** An arbitrary for each field a caller wants to pin; the others draw from the defaults below. */
export type Overrides<E> = { readonly [K in Exclude<keyof E, "type">]?: fc.Arbitrary<E[K]> }

/** Addresses from a small pool, so that events often share a token, a wallet or a pool. */
export const address = (): fc.Arbitrary<string> =>
  fc.constantFrom(
    "TokenA11111111111111111111111111111111111111",
    "TokenB11111111111111111111111111111111111111",
    Events.CREATOR,
    Events.TRADER,
    Events.WALLET,
    Events.POOL
  )

/** Non-empty identifiers of at most 32 characters (ids, transaction hashes). */
export const identifier = (): fc.Arbitrary<string> => fc.string({ minLength: 1, maxLength: 32 })

/** Times within a day of 2023-11-14, in integer milliseconds. */
export const timestamp = (): fc.Arbitrary<number> => fc.integer({ min: 1_700_000_000_000, max: 1_700_086_400_000 })

const block = (): fc.Arbitrary<number> => fc.integer({ min: 0, max: 1_000_000 })
const baseUnits = (): fc.Arbitrary<bigint> => fc.bigInt({ min: 0n, max: 10n ** 24n })
const positiveBaseUnits = (): fc.Arbitrary<bigint> => fc.bigInt({ min: 1n, max: 10n ** 24n })
const decimalText = (): fc.Arbitrary<string> =>
  fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.option(fc.integer({ min: 0, max: 999_999 }), { nil: undefined }))
    .map(([whole, fraction]) => (fraction === undefined ? `${whole}` : `${whole}.${fraction}`))

/** A launch on any chain, with or without a launchpad, a curve and metadata. */
export const tokenLaunched = (overrides: Overrides<Events.TokenLaunched> = {}): fc.Arbitrary<Events.TokenLaunched> =>
  fc.record({
    id: identifier(),
    timestamp: timestamp(),
    chain: fc.constantFrom(...chains),
    token: address(),
    creator: address(),
    decimals: fc.integer({ min: 0, max: 18 }),
    supply: baseUnits(),
    launchpad: fc.option(fc.constantFrom("pumpfun", "clanker", "four.meme"), { nil: null }),
    hasCurve: fc.boolean(),
    block: block(),
    transactionHash: identifier(),
    annotations: fc.array(fc.constantFrom("mayhem_mode", "cashback"), { maxLength: 2 }),
    metadata: fc.option(fc.tuple(fc.string({ maxLength: 16 }), fc.string({ maxLength: 8 })).map(([name, symbol]) => Events.metadata(name, symbol)), { nil: null }),
    ...overrides
  }).map(Events.launch)

/** A buy or a sell on any chain, with or without a terminal and the pool's state after it. */
export const swap = (overrides: Overrides<Events.Swap> = {}): fc.Arbitrary<Events.Swap> =>
  fc.record({
    id: identifier(),
    timestamp: timestamp(),
    chain: fc.constantFrom(...chains),
    token: address(),
    pool: address(),
    dex: fc.constantFrom("pumpfun", "raydium", "uniswap-v2"),
    trader: address(),
    transactionHash: identifier(),
    block: block(),
    indexInBlock: fc.integer({ min: 0, max: 1_000_000 }),
    side: fc.constantFrom("buy" as const, "sell" as const),
    tokenAmount: positiveBaseUnits(),
    quoteAmount: baseUnits(),
    quoteAddress: address(),
    quoteSymbol: fc.constantFrom("SOL", "ETH", "USDC"),
    quoteDecimals: fc.integer({ min: 0, max: 18 }),
    nativeAmount: baseUnits(),
    nativeUsd: decimalText(),
    fees: fc.record({ transaction: baseUnits(), validator: baseUnits(), platform: baseUnits(), dex: baseUnits() }),
    terminal: fc.option(fc.constantFrom("partner", "axiom"), { nil: null }),
    poolAfter: fc.option(
      fc.record({ liquidityNative: baseUnits(), bondingCurvePct: fc.option(fc.integer({ min: 0, max: 100 }).map(String), { nil: null }) }),
      { nil: null }
    ),
    ...overrides
  }).map(Events.swap)

/** A wallet move, a mint (`from` null) or a burn (`to` null) on any chain. */
export const transfer = (overrides: Overrides<Events.Transfer> = {}): fc.Arbitrary<Events.Transfer> =>
  fc.record({
    id: identifier(),
    timestamp: timestamp(),
    chain: fc.constantFrom(...chains),
    token: address(),
    from: fc.option(address(), { nil: null }),
    to: fc.option(address(), { nil: null }),
    amount: positiveBaseUnits(),
    transactionHash: identifier(),
    block: block(),
    ...overrides
  }).map(Events.transfer)
