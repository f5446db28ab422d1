import { describe, expect, it } from "@effect/vitest"
import type { MarketEvent } from "../../../src/events/MarketEvent.js"
import * as Fixed from "../../../src/Fixed.js"
import type { Rejection } from "../../../src/market/EventChecks.js"
import { rejectionMessage } from "../../../src/market/EventChecks.js"
import { MarketEngine } from "../../../src/market/MarketEngine.js"
import { MAX_UPDATED_AT_LEAD_MS } from "../../../src/market/TokenBook.js"
import { Events } from "../../../testing/index.js"

/** An engine's refusal as ingest words it (undefined when the event passed). */
const told = (rejection: Rejection | undefined): string | undefined => (rejection === undefined ? undefined : rejectionMessage(rejection))

const start = 1_700_000_000_000

const SOL = "So11111111111111111111111111111111111111112"
const TOKEN = "TokenAddress1111111111111111111111111111pump"
const CREATOR = "Creator111111111111111111111111111111111111"
const ALICE = "A1ice11111111111111111111111111111111111111"
const BOB = "Bob1111111111111111111111111111111111111111"

/** A pump.fun launch of TOKEN at `start`, on a curve. */
const launch = (extra: Partial<Events.TokenLaunched> = {}): MarketEvent =>
  Events.launch({ id: "launch", timestamp: start, token: TOKEN, launchpad: "pumpfun", hasCurve: true, block: 100, transactionHash: "txlaunch", metadata: null, ...extra })

/** A transfer of TOKEN at `at` (from null: a mint; to null: a burn). */
const transfer = (from: string | null, to: string | null, amount: bigint, at: number): MarketEvent =>
  Events.transfer({ id: `transfer-${at}`, timestamp: at, token: TOKEN, from, to, amount, transactionHash: `txt${at}`, block: 300 })

/** A swap of TOKEN on its pump.fun curve, numbered in order: its id, transaction and index in the block. */
let swapSeq = 0
const swap = (trader: string, side: "buy" | "sell", tokens: bigint, lamports: bigint, at: number, block = 200, extra: Partial<Events.Swap> = {}): MarketEvent =>
  Events.swap({
    id: `swap-${++swapSeq}`,
    timestamp: at,
    token: TOKEN,
    pool: "Poo111111111111111111111111111111111111111",
    dex: "pumpfun",
    trader,
    transactionHash: `tx${swapSeq}`,
    block,
    indexInBlock: swapSeq,
    side,
    tokenAmount: tokens,
    quoteAmount: lamports,
    quoteAddress: SOL,
    nativeAmount: lamports,
    fees: { transaction: 5000n, validator: 10000n, platform: lamports / 100n, dex: 0n },
    ...extra
  })

describe("MarketEngine", () => {
  it("a token event sees the window expiries up to its own time: a restart without clock ticks dates it as the live service did", () => {
    const curve = (id: string, at: number, pct: string): MarketEvent => ({ type: "curveProgressed", id, timestamp: at, chain: "solana", token: TOKEN, bondingCurvePct: pct })
    const events = [launch(), swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 1000), curve("c1", start + 10 * 60_000, "12")]
    const live = new MarketEngine()
    live.apply(events[0]!)
    live.apply(events[1]!)
    live.advanceTo(start + 6 * 60_000) // a tick: the swap left the 5m window
    live.apply(events[2]!)
    live.advanceTo(start + 20 * 60_000)
    const replayed = new MarketEngine()
    for (const event of events) replayed.apply(event)
    replayed.advanceTo(start + 20 * 60_000)
    const [a, b] = [live.token("solana", TOKEN)!.toWire(), replayed.token("solana", TOKEN)!.toWire()]
    expect(b.updatedAt).toBe(start + 10 * 60_000)
    expect(b).toEqual(a)
  })

  it("bondingCurveActivity is the points gained over the hour before the read, from 0 at launch", () => {
    const minute = 60_000
    const engine = new MarketEngine()
    engine.apply(launch()) // a curve at 0% at `start`
    const reading = (at: number, pct: string): MarketEvent => ({ type: "curveProgressed", id: `c${at}`, timestamp: at, chain: "solana", token: TOKEN, bondingCurvePct: pct })
    engine.apply(reading(start + 21 * minute, "60"))
    const token = engine.token("solana", TOKEN)!
    expect(token.bondingCurveActivity(start + 30 * minute)).toBe(60) // launched under an hour ago: from 0
    engine.apply(reading(start + 90 * minute, "80"))
    // an hour before minute 100 the curve read 60 (since minute 21): 80 - 60
    expect(token.bondingCurveActivity(start + 100 * minute)).toBe(20)
    // two hours after its last reading nothing moved in the last hour, however long the read waits
    expect(token.bondingCurveActivity(start + 210 * minute)).toBe(0)
    expect(token.bondingCurveActivity(start + 3_000 * minute)).toBe(0)
    engine.apply(reading(start + 200 * minute, "70")) // sells pushed it back
    expect(token.bondingCurveActivity(start + 230 * minute)).toBe(-10)
  })

  it("a transfer out by a wallet whose position holds nothing (closed) is not applied to it: no version, no updatedAt", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    engine.apply(swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 1000))
    engine.apply(swap(ALICE, "sell", 1_000_000n, 30_000_000n, start + 2000))
    const position = () => engine.positionWire(engine.positionsOfWallets([ALICE])[0]!)
    const closed = position()
    expect([closed.status, closed.version]).toEqual(["closed", 2])
    expect(engine.apply(transfer(ALICE, BOB, 1n, start + 3000))).toBeUndefined()
    expect(position()).toEqual(closed)
  })

  it("a curve reading for a token without a curve, or graduated, changes nothing, updatedAt included", () => {
    const engine = new MarketEngine()
    engine.apply(launch({ hasCurve: false, launchpad: null }))
    engine.apply(swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 1000))
    engine.drainChanges()
    const before = JSON.stringify(engine.token("solana", TOKEN)!.toWire())
    const reading: MarketEvent = { type: "curveProgressed", id: "c-none", timestamp: start + 5000, chain: "solana", token: TOKEN, bondingCurvePct: "50" }
    expect(engine.apply(reading)).toBeUndefined()
    expect(JSON.stringify(engine.token("solana", TOKEN)!.toWire())).toBe(before)
    expect(engine.drainChanges().tokens).toEqual([])
  })

  it("serves every EVM address in one spelling, lower-case: the anchor of a pool and a creator's funder as well", () => {
    const engine = new MarketEngine()
    const evm = { chain: "base" as const, token: "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01" }
    const creator = "0x2222222222222222222222222222222222222222"
    expect(engine.apply(launch({ ...evm, creator, hasCurve: false, launchpad: null }))).toBeUndefined()
    const buy = swap("0x3333333333333333333333333333333333333333", "buy", 1_000_000n, 10n ** 15n, start + 1000, 200, {
      ...evm, pool: "0xBBBBbbbbBBBBbbbbBBBBbbbbBBBBbbbbBBBBbbbb", quoteAddress: "0xABCDEF0000000000000000000000000000000006", quoteSymbol: "WETH", quoteDecimals: 18,
      nativeUsd: "3000", poolAfter: { liquidityNative: 10n ** 18n, bondingCurvePct: null }
    })
    expect(engine.check(buy)).toBeUndefined()
    expect(engine.apply(buy)).toBeUndefined()
    const funded: MarketEvent = {
      type: "walletFunded", id: "evm-funding", timestamp: start + 2000, chain: "base", wallet: creator, funder: "0xFAFAFAFAFAFAFAFAFAFAFAFAFAFAFAFAFAFAFAFA", sourceKind: "wallet",
      sourceLabel: null, amount: 10n ** 17n, asset: "0xEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE", assetSymbol: "ETH", assetDecimals: 18, fundedAt: start, transactionHash: "0xabc"
    }
    expect(engine.check(funded)).toBeUndefined()
    expect(engine.apply(funded)).toBeUndefined()
    const wire = engine.token("base", evm.token)!.toWire()
    expect(wire.anchorAddress).toBe("0xabcdef0000000000000000000000000000000006")
    expect(wire.devFunding.address).toBe("0xfafafafafafafafafafafafafafafafafafafafa")
  })

  it("refuses amounts beyond its exact range, whole and without changing anything", () => {
    const liquidity = {
      type: "liquidityChanged", id: "l", timestamp: start + 2000, chain: "solana", token: TOKEN, pool: "SwapPoo111111111111111111111111111111111111",
      dex: "raydium", anchorAddress: "So11111111111111111111111111111111111111112", anchorSymbol: "SOL", liquidityNative: 1n, nativeUsd: "150", block: null
    } as const
    const engine = new MarketEngine()
    engine.apply(launch())
    engine.apply(swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 1000))
    const before = JSON.stringify(engine.token("solana", TOKEN)!.toWire())
    const beyond: Array<MarketEvent> = [
      swap(ALICE, "buy", 10n ** 36n + 1n, 30_000_000n, start + 2000),
      swap(ALICE, "buy", 1_000_000n, 10n ** 19n + 1n, start + 2000, 200, { nativeUsd: "0.5" }), // more than 10^10 SOL
      swap(ALICE, "buy", 1_000_000n, 10n ** 18n, start + 2000, 200, { nativeUsd: "10.01" }), // more than $10^10
      swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { nativeUsd: "1000000001" }),
      swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { fees: { transaction: 10n ** 22n, validator: 0n, platform: 0n, dex: 0n } }),
      // a curve is never more than complete
      swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { poolAfter: { liquidityNative: 1n, bondingCurvePct: "100.5" } }),
      { type: "curveProgressed", id: "c-beyond", timestamp: start + 2000, chain: "solana", token: TOKEN, bondingCurvePct: "101" },
      // a token whose amounts the API's 18 decimal places could not show
      launch({ id: "launch-19", token: "Dec19Token1111111111111111111111111111111111", decimals: 19 }),
      // a native USD price past the bound, however it comes
      { type: "nativePrice", id: "np-beyond", timestamp: start + 2000, chain: "solana", usd: "1000000000.000000000000000001" },
      { ...liquidity, id: "l-beyond", nativeUsd: "1000000001" }
    ]
    // a pool's value is bounded as a swap's, a funding's amount as any amount
    beyond.push({ ...liquidity, id: "l-deep", liquidityNative: 10n ** 19n + 1n })
    beyond.push(swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { poolAfter: { liquidityNative: 10n ** 19n + 1n, bondingCurvePct: null } }))
    beyond.push({ type: "walletFunded", id: "f-huge", timestamp: start + 2000, chain: "solana", wallet: ALICE, funder: null, sourceKind: null, sourceLabel: null, amount: 10n ** 36n + 1n, asset: null, assetSymbol: null, assetDecimals: 9, fundedAt: null, transactionHash: null })
    // a share of the liquidity is at most 100 (spec: 0-100)
    beyond.push({ type: "securityScored", id: "sec-beyond", timestamp: start + 2000, chain: "solana", token: TOKEN, mintDisabled: true, transferBlockable: false, lpBurntPct: "100.000001", transferFeeBps: null })
    // ... or worth nothing at 18 places
    const worthless: Array<MarketEvent> = [
      swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { nativeUsd: "0" }),
      swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { nativeUsd: "0.0000000000000000001" }),
      { type: "nativePrice", id: "np-zero", timestamp: start + 2000, chain: "solana", usd: "0.0" },
      { ...liquidity, id: "l-zero", nativeUsd: "0" },
      // a fill worth 0 native units would price the token at 0, wiping every holder's value
      swap(ALICE, "sell", 1_000n, 0n, start + 2000)
    ]
    for (const event of worthless) {
      expect(told(engine.check(event))).toMatch(/must be above 0/)
      expect(told(engine.apply(event))).toMatch(/must be above 0/)
    }
    for (const event of beyond) {
      expect(told(engine.check(event))).toMatch(/beyond/)
      expect(told(engine.apply(event))).toMatch(/beyond/)
    }
    expect(JSON.stringify(engine.token("solana", TOKEN)!.toWire())).toBe(before)
    expect(engine.stats.trades).toBe(1)
    expect(engine.stats.tokens).toBe(1)
    expect(engine.apply(launch({ id: "launch-18", token: "Dec18Token1111111111111111111111111111111111", decimals: 18 }))).toBeUndefined()
    // the largest accepted amounts fold without loss, in the totals and in the stats windows
    expect(engine.apply(swap(ALICE, "buy", 10n ** 36n, 10n ** 19n, start + 3000, 200, { nativeUsd: "1" }))).toBeUndefined()
    const holdings = [...engine.positionsOfToken(engine.token("solana", TOKEN)!)][0]!.state.holdings
    expect(holdings).toBe(10n ** 36n + 1_000_000n)
    const after = engine.token("solana", TOKEN)!.toWire()
    expect(after.totals.volume).toEqual({ native: "10000000000.03", usd: "10000000004.5" })
    expect(after.stats["24h"].buyVolume).toEqual(after.totals.volume)
  })

  it("refuses events whose addresses are not of their chain, whose id has a control character, with an empty name, or launching a launched token again", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    engine.apply(swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 1000))
    const before = JSON.stringify(engine.token("solana", TOKEN)!.toWire())
    const malformed: Array<[MarketEvent, RegExp]> = [
      [launch({ id: "launch-evm-shaped", token: "0xnotbase58token" }), /token "0xnotbase58token" is not a solana address/],
      [launch({ id: "launch-bad-creator", token: "Fresh11111111111111111111111111111111111111", creator: "not an address" }), /creator "not an address" is not a solana address/],
      [swap("0x1111111111111111111111111111111111111111", "buy", 1_000_000n, 30_000_000n, start + 2000), /trader "0x1{40}" is not a solana address/],
      [{ ...swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000), id: "swap\u0000nul" }, /id has a control character/],
      [{ type: "curveProgressed", id: "c-bad-token", timestamp: start + 2000, chain: "solana", token: "short", bondingCurvePct: "10" }, /token "short" is not a solana address/],
      [launch({ id: "launch-arc", chain: "arc", token: TOKEN }), /token "TokenAddress1+pump" is not an arc address \(0x followed by 40 hex digits\)$/],
      // names the API serves as values are never empty
      [launch({ id: "launch-empty-pad", token: "Fresh11111111111111111111111111111111111111", launchpad: "" }), /^launchpad is empty: send null when there is none$/],
      [launch({ id: "launch-empty-kind", token: "Fresh11111111111111111111111111111111111111", annotations: ["mayhem_mode", ""] }), /^annotation is empty: send its kind$/],
      [{ ...swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { terminal: "t\u0000" }) }, /^terminal has a control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "d".repeat(65) }), /^dex is longer than 64 characters$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "ab\u0085" }), /^dex has a control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "ray\u200bdium" }), /^dex has a control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { terminal: " \u00a0" }), /^terminal is empty \(blank\): send null when none is known$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "pumpswap " }), /^dex starts or ends with a space$/],
      [launch({ id: "launch-bom", token: "Fresh11111111111111111111111111111111111111", launchpad: "\ufeffpump" }), /^launchpad has a control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { terminal: "a\u2028b" }), /^terminal has a control or invisible character$/],
      [{ type: "metadataResolved", id: "meta-surrogate", timestamp: start + 2000, chain: "solana", token: TOKEN, metadata: { name: "N\ud800", symbol: "S", image: null, description: null, website: null, twitter: null, telegram: null, discord: null } }, /^metadata\.name is not well-formed Unicode \(a lone surrogate\)/],
      [{ type: "metadataResolved", id: "meta-long", timestamp: start + 2000, chain: "solana", token: TOKEN, metadata: { name: "n".repeat(257), symbol: "S", image: null, description: null, website: null, twitter: null, telegram: null, discord: null } }, /^metadata\.name is longer than 256 characters$/],
      [{ type: "identityResolved", id: "id-surrogate", timestamp: start + 2000, chain: "solana", wallet: ALICE, source: "kol", handle: "\udfffx", displayName: null, avatar: null, twitter: null, telegram: null, farcaster: null }, /^handle is not well-formed Unicode/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { terminal: "" }), /^terminal is empty: send null when none is known$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "" }), /^dex is empty$/],
      [{ type: "tokenListed", id: "listed-empty", timestamp: start + 2000, chain: "solana", token: TOKEN, platform: "", isPaid: false, paidAt: null }, /^platform is empty$/],
      // ids compare exactly, and as text a lone surrogate would become U+FFFD: "X\ud800" and "X\udc00" one event
      [{ ...swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000), id: "X\ud800" }, /^id is not well-formed Unicode \(a lone surrogate\)$/],
      // every address an event carries is one of its chain, every transaction hash one visible token (unchecked, they are served as sent)
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { pool: "p\udc00\u0001" }), /^pool "p\\udc00\\u0001" is not a solana address/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { quoteAddress: "Q\ud800\u0000x" }), /^quoteAddress ".*" is not a solana address/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { transactionHash: "tx\ud800z" }), /^transactionHash is not well-formed Unicode/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { transactionHash: "\ufeffhash" }), /^transactionHash has a space, control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { transactionHash: "tx hash" }), /^transactionHash has a space, control or invisible character$/],
      [{ type: "graduated", id: "g-bad-pool", timestamp: start + 2000, chain: "solana", token: TOKEN, pool: "not a pool", dex: "pumpswap", transactionHash: "gtx" }, /^pool "not a pool" is not a solana address/],
      [{ type: "liquidityChanged", id: "l-bad-anchor", timestamp: start + 2000, chain: "solana", token: TOKEN, pool: "SwapPoo111111111111111111111111111111111111", dex: "raydium", anchorAddress: "SOL", anchorSymbol: "SOL", liquidityNative: 1n, nativeUsd: "150", block: null }, /^anchorAddress "SOL" is not a solana address/],
      [{ type: "walletFunded", id: "f-bad", timestamp: start + 2000, chain: "solana", wallet: ALICE, funder: "f\ud800", sourceKind: "wallet", sourceLabel: null, amount: null, asset: null, assetSymbol: null, assetDecimals: null, fundedAt: null, transactionHash: null }, /^funder ".*" is not a solana address/],
      [{ type: "walletFunded", id: "f-bad-wallet", timestamp: start + 2000, chain: "solana", wallet: "w", funder: null, sourceKind: null, sourceLabel: null, amount: null, asset: null, assetSymbol: null, assetDecimals: null, fundedAt: null, transactionHash: null }, /^wallet "w" is not a solana address/],
      [{ type: "walletLabeled", id: "label-bad-wallet", timestamp: start + 2000, chain: "solana", wallet: "0x1111111111111111111111111111111111111111", label: "kol", active: true }, /^wallet "0x1{40}" is not a solana address/],
      // characters shown as nothing: "pump.fun" + U+FE0F read as "pump.fun" and was another venue
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "pump.fun\ufe0f" }), /^dex has a control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { terminal: "\u3164" }), /^terminal has a control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "ray\u2800" }), /^dex has a control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "pump\ufffe.fun" }), /^dex has a control or invisible character$/],
      // "café" composed and decomposed would be two venues that read the same
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { dex: "cafe\u0301" }), /^dex is not in Unicode normalization form C/],
      // a hash shown as nothing
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { transactionHash: "\u3164" }), /^transactionHash has a space, control or invisible character$/],
      [swap(ALICE, "buy", 1_000_000n, 30_000_000n, start + 2000, 200, { transactionHash: "5h9\ufe0f" }), /^transactionHash has a space, control or invisible character$/],
      // times an event reports about the past are not after it
      [{ type: "tokenListed", id: "listed-later", timestamp: start + 2000, chain: "solana", token: TOKEN, platform: "listingService", isPaid: true, paidAt: start + 62_001 }, /^paidAt is more than 60 s after the event's own timestamp/],
      [{ type: "walletFunded", id: "f-later", timestamp: start + 2000, chain: "solana", wallet: ALICE, funder: null, sourceKind: null, sourceLabel: null, amount: null, asset: null, assetSymbol: null, assetDecimals: null, fundedAt: 2 ** 53 - 1, transactionHash: null }, /^fundedAt is more than 60 s after/],
      // a token launches once: the same token under another launch id
      [launch({ id: "launch-again" }), /^token solana:TokenAddress1+pump was already launched by another event; a token launches once$/]
    ]
    for (const [event, reason] of malformed) {
      expect(told(engine.check(event))).toMatch(reason)
    }
    expect(JSON.stringify(engine.token("solana", TOKEN)!.toWire())).toBe(before)
    // Well-formed ones pass: an EVM token with a mixed-case address, a Solana swap.
    expect(engine.check(launch({ id: "evm", chain: "base", token: "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01", creator: "0x2222222222222222222222222222222222222222" }))).toBeUndefined()
    expect(engine.check(swap(ALICE, "sell", 1_000n, 30_000n, start + 3000))).toBeUndefined()
    expect(engine.check(swap(ALICE, "sell", 1_000n, 30_000n, start + 3000, 200, { dex: "caf\u00e9" }))).toBeUndefined()
    // a paired surrogate (an emoji), control characters in a token's name and a 256-character name are fine
    const fine = { name: "😀 N\u0000".padEnd(256, "x"), symbol: "S😀", image: null, description: null, website: null, twitter: null, telegram: null, discord: null }
    expect(engine.check({ type: "metadataResolved", id: "meta-fine", timestamp: start + 3000, chain: "solana", token: TOKEN, metadata: fine })).toBeUndefined()
    // the very launch again is a repeat (the log drops it), not a second launch
    expect(engine.check(launch())).toBeUndefined()
    // a launch ahead (accepted, not folded yet) counts: events of its token are not of an unknown token, another id is a second launch
    const ahead = (chain: string, address: string) =>
      chain === "base" && address === "0xabcdef0123456789abcdef0123456789abcdef01" ? { id: "evm-launch", timestamp: start + 2000 } : undefined
    const evm = { chain: "base" as const, token: "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01", creator: "0x2222222222222222222222222222222222222222" }
    expect(engine.check(launch({ id: "evm-launch", ...evm }), ahead)).toBeUndefined()
    expect(told(engine.check(launch({ id: "evm-other", ...evm }), ahead))).toMatch(/already launched by another event/)
    const evmCurve: MarketEvent = { type: "curveProgressed", id: "evm-curve", timestamp: start + 3000, chain: "base", token: evm.token, bondingCurvePct: "10" }
    expect(told(engine.check(evmCurve))).toMatch(/^token base:0x\S+ is unknown: send its tokenLaunched event first$/)
    expect(engine.check(evmCurve, ahead)).toBeUndefined()
    // nothing happens to a token before its launch: one held, or one launched ahead
    // (within a minute before it, clock skew between an indexer's sources, is taken)
    expect(told(engine.check(swap(ALICE, "buy", 1_000n, 30_000n, start - 60_001)))).toMatch(/^timestamp is more than 60 s before its token's launch/)
    expect(engine.check(swap(ALICE, "buy", 1_000n, 30_000n, start - 60_000))).toBeUndefined()
    expect(told(engine.check({ ...evmCurve, timestamp: start + 2000 - 60_001 }, ahead))).toMatch(/^timestamp is more than 60 s before its token's launch/)
    expect(engine.check({ ...evmCurve, timestamp: start + 1999 }, ahead)).toBeUndefined()
  })

  it("prices a swap exactly and keeps the four fee kinds apart", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    // Before any trade: a zero ATH, dated at the token's creation (never the epoch).
    const untraded = engine.token("solana", TOKEN)!.toWire()
    expect(untraded.ath).toEqual({ price: { native: "0", usd: "0" }, priceAt: start, marketCap: { native: "0", usd: "0" }, marketCapAt: start })
    // 1,000,000 tokens (6 decimals) for 0.03 SOL at 150 USD/SOL
    expect(engine.apply(swap(ALICE, "buy", 1_000_000_000_000n, 30_000_000n, start + 1000))).toBeUndefined()
    const token = engine.token("solana", TOKEN)!.toWire()
    expect(token.price).toEqual({ native: "0.00000003", usd: "0.0000045" })
    expect(token.marketCap).toEqual({ native: "30", usd: "4500" })
    expect(token.totals.volume).toEqual({ native: "0.03", usd: "4.5" })
    expect(token.totals.fees.transaction).toEqual({ native: "0.000005", usd: "0.00075" })
    expect(token.totals.fees.validator).toEqual({ native: "0.00001", usd: "0.0015" })
    expect(token.totals.fees.platform).toEqual({ native: "0.0003", usd: "0.045" })
    expect(token.totals.fees.dex).toEqual({ native: "0", usd: "0" })
    expect(token.ath).toEqual({ price: token.price, priceAt: start + 1000, marketCap: token.marketCap, marketCapAt: start + 1000 })
    expect(token.stats["5m"].buyCount).toBe(1)
    expect(token.holders.count).toBe(1)
    expect(token.updatedAt).toBe(start + 1000)
  })

  it("an event dated ahead of the service's clock (clockLimit) is its own token's present, not every token's", () => {
    const now = start + 600_000
    const other = launch({ id: "launch-ahead", token: "Ahead111111111111111111111111111111111111111", timestamp: now + 55_000 })
    const fold = (limit: number | undefined) => {
      const engine = new MarketEngine()
      engine.apply(launch(), limit)
      engine.apply(swap(ALICE, "buy", 1_000_000_000_000n, 30_000_000n, now - 270_000), limit) // 30 s left in the 5m window
      engine.advanceTo(now)
      engine.apply(other, limit)
      engine.advanceTo(now)
      return engine
    }
    const live = fold(now)
    expect(live.now).toBe(now)
    const token = live.token("solana", TOKEN)!.toWire()
    expect(token.stats["5m"].buyCount).toBe(1)
    expect(token.updatedAt).toBe(now - 270_000)
    // ... while the event's own token is dated as it says
    const ahead = "Ahead111111111111111111111111111111111111111"
    expect(live.token("solana", ahead)!.toWire().updatedAt).toBe(now + 55_000)
    live.drainChanges()
    // and its next states, before the clock reaches that time, each get a later updatedAt (with a
    // bound of a second past it, the 1,001st and later would share one)
    const seen: Array<number> = []
    for (let i = 0; i < 3_000; i++) {
      live.apply(swap(ALICE, "buy", 1_000n, 30_000n, now, 200, { id: `after-ahead-${i}`, token: ahead }), now)
      live.drainChanges()
      seen.push(live.token("solana", ahead)!.updatedAt)
    }
    expect(seen.every((u, i) => u === now + 55_000 + i + 1)).toBe(true)
    // Without a limit (a replay of the log), event times are the clock: the window has moved on.
    const replayed = fold(undefined)
    expect(replayed.now).toBe(now + 55_000)
    expect(replayed.token("solana", TOKEN)!.toWire().stats["5m"].buyCount).toBe(0)
  })

  it("keeps the all-time highs at or above the current price and market cap through trades, mints and burns", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    expect(engine.apply(swap(ALICE, "buy", 1_000_000_000_000n, 30_000_000n, start + 1000))).toBeUndefined()
    // A mint of 10% more supply at the same price: the market cap is 10% higher, and so is its high.
    expect(engine.apply(transfer(null, ALICE, 100_000_000_000_000n, start + 2000))).toBeUndefined()
    let token = engine.token("solana", TOKEN)!.toWire()
    expect(token.marketCap).toEqual({ native: "33", usd: "4950" })
    expect(token.ath.marketCap).toEqual(token.marketCap)
    expect(token.ath.marketCapAt).toBe(start + 2000)
    // A burn lowers the market cap and leaves the high where it was.
    expect(engine.apply(transfer(ALICE, null, 550_000_000_000_000n, start + 3000))).toBeUndefined()
    token = engine.token("solana", TOKEN)!.toWire()
    expect(token.marketCap).toEqual({ native: "16.5", usd: "2475" })
    expect(token.ath.marketCap).toEqual({ native: "33", usd: "4950" })
    expect(token.ath.marketCapAt).toBe(start + 2000)
  })

  it("a self-transfer changes nothing, a sender holding nothing gets no position, and a transfer-opened position stays isTransfer after a buy", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    const token = () => engine.token("solana", TOKEN)!
    const positionOf = (wallet: string) => [...engine.positionsOfToken(token())].find((entry) => entry.wallet.address === wallet)
    expect(engine.apply(swap(ALICE, "buy", 2_000_000n, 1_000_000_000n, start + 1000))).toBeUndefined()
    const before = JSON.stringify(engine.positionWire(positionOf(ALICE)!))
    const tokenBefore = JSON.stringify(token().toWire())
    // Alice sends to herself, part and then all of her tokens: nothing about her position moves.
    expect(engine.apply(transfer(ALICE, ALICE, 1_000_000n, start + 2000))).toBeUndefined()
    expect(engine.apply(transfer(ALICE, ALICE, 2_000_000n, start + 3000))).toBeUndefined()
    expect(JSON.stringify(engine.positionWire(positionOf(ALICE)!))).toBe(before)
    expect(JSON.stringify(token().toWire())).toBe(tokenBefore)
    // Bob, who never held any, "sends" some: no position appears for him (no cycle he never opened).
    expect(engine.apply(transfer(BOB, ALICE, 5n, start + 4000))).toBeUndefined()
    expect(positionOf(BOB)).toBeUndefined()
    // Carol receives an airdrop, then buys: her position was opened by no buy, so it stays isTransfer.
    const CAROL = "Caro1111111111111111111111111111111111111111"
    expect(engine.apply(transfer(ALICE, CAROL, 1_000_000n, start + 5000))).toBeUndefined()
    expect(engine.apply(swap(CAROL, "buy", 1_000_000n, 500_000_000n, start + 6000))).toBeUndefined()
    const carol = engine.positionWire(positionOf(CAROL)!)
    expect(carol.isTransfer).toBe(true)
    expect(carol.openedAt).toBe(start + 5000)
    expect(carol.buyCount).toBe(1)
  })

  it("a late swap is folded at its own time: its own candle, not the token's price or pool state", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    const pool = (liquidity: bigint) => ({ poolAfter: { liquidityNative: liquidity, bondingCurvePct: null } })
    // 1,000,000 tokens for 0.1 SOL, then for 0.2 SOL three hours later, then a late one for 0.5 SOL in between
    expect(engine.apply(swap(ALICE, "buy", 1_000_000_000_000n, 100_000_000n, start + 1000, 200, pool(10_000_000_000n)))).toBeUndefined()
    expect(engine.apply(swap(BOB, "buy", 1_000_000_000_000n, 200_000_000n, start + 3 * 3_600_000, 201, pool(20_000_000_000n)))).toBeUndefined()
    const before = engine.token("solana", TOKEN)!.toWire()
    expect(engine.apply(swap(ALICE, "buy", 1_000_000_000_000n, 500_000_000n, start + 3_600_000, 202, pool(15_000_000_000n)))).toBeUndefined()
    const after = engine.token("solana", TOKEN)!.toWire()
    expect(after.price).toEqual(before.price)
    expect(after.liquidity).toEqual(before.liquidity)
    expect(after.ath.price).toEqual({ native: "0.0000005", usd: "0.000075" }) // a high is a high, whenever it arrives
    expect(after.totals.volume.native).toBe("0.8")
    const hours = engine.token("solana", TOKEN)!.tape.candles({ timeframe: "1h", metric: "price", denomination: "native" })
    expect(hours.map((c) => [c.time, c.close])).toEqual([
      [Math.floor((start + 1000) / 3_600_000) * 3_600_000, 0.0000001],
      [Math.floor((start + 3_600_000) / 3_600_000) * 3_600_000, 0.0000005],
      [Math.floor((start + 3 * 3_600_000) / 3_600_000) * 3_600_000, 0.0000002]
    ])
  })

  it("computes a market cap from the trade's value and amount, not from the price truncated to 18 decimals", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    // 3,000,000 tokens for one lamport: a price of 3.33...e-16 SOL, whose 18-decimal form keeps 3 digits
    expect(engine.apply(swap(ALICE, "buy", 3_000_000_000_000n, 1n, start + 1000, 200, { fees: { transaction: 0n, validator: 0n, platform: 0n, dex: 0n } }))).toBeUndefined()
    const token = engine.token("solana", TOKEN)!.toWire()
    expect(token.price.native).toBe("0.000000000000000333")
    expect(token.marketCap).toEqual({ native: "0.000000333333333333", usd: "0.00005" })
    expect(token.ath.marketCap).toEqual(token.marketCap)
    const trade = engine.tokenTradePage("solana", TOKEN, null, 1).records[0]!.trade
    expect(trade.marketCap).toEqual(token.marketCap)
  })

  it("computes a USD market cap from the native value and the rate with one rounding, not from the trade's USD value (itself rounded)", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    // one lamport at 150.1234567891 USD is worth 1.501234567891e-7 USD, 19 decimals: the trade's
    // USD value is truncated to 0.000000150123456789, and supply × that ÷ amount would lose the rest
    const noFees = { fees: { transaction: 0n, validator: 0n, platform: 0n, dex: 0n } }
    expect(engine.apply(swap(ALICE, "buy", 3_000_000_000_000n, 1n, start + 1000, 200, { ...noFees, nativeUsd: "150.1234567891" }))).toBeUndefined()
    const token = engine.token("solana", TOKEN)!.toWire()
    expect(token.marketCap.usd).toBe("0.000050041152263033") // 1e9 × 1e-9 × 150.1234567891 ÷ 3e6, truncated once
    expect(token.ath.marketCap.usd).toBe("0.000050041152263033")
    const trade = engine.tokenTradePage("solana", TOKEN, null, 1).records[0]!.trade
    expect(trade.marketCap.usd).toBe("0.000050041152263033")
    expect(trade.volume.usd).toBe("0.000000150123456789")
  })

  it("moves a token's updatedAt forward with every published change (each batch), several in one millisecond and late events included", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    const token = () => engine.token("solana", TOKEN)!
    expect(token().updatedAt).toBe(start)
    const seen = [JSON.stringify(token().toWire())]
    const at = [token().updatedAt]
    // a reader sees the state a batch leaves (the market drains, publishing, after each batch)
    const observe = () => {
      seen.push(JSON.stringify(token().toWire()))
      at.push(token().updatedAt)
      engine.drainChanges()
    }
    // the service's clock is past the events (ticks move it to the wall clock)
    engine.advanceTo(start + 10_000)
    engine.drainChanges()
    // three swaps in one millisecond, each read in between (as a REST reader between batches)
    for (const [i, trader] of [ALICE, BOB, ALICE].entries()) {
      expect(engine.apply(swap(trader, "buy", 1_000_000_000n + BigInt(i), 30_000_000n, start + 5_000, 200, { id: `same-ms-${i}` }))).toBeUndefined()
      observe()
    }
    // a late swap (older timestamp) still changes the token: a later updatedAt
    expect(engine.apply(swap(BOB, "sell", 1_000n, 30n, start + 1_000, 200, { id: "late" }))).toBeUndefined()
    observe()
    // every observed state differs and the later one always has the later updatedAt (the merge rule's premise)
    expect(new Set(seen).size).toBe(seen.length)
    for (let i = 1; i < at.length; i++) expect(at[i]).toBeGreaterThan(at[i - 1]!)
    expect(at[1]).toBe(start + 5_000) // a change at a later time takes that time exactly
    expect(at.at(-1)! - (start + 5_000)).toBe(3) // and runs ahead by one millisecond per further published change

    // Per published state, not per change: 2,000 swaps of one millisecond in one batch move it one
    // millisecond (per change, 5,000 such swaps would take it 5 s ahead of the clock).
    const before = token().updatedAt
    for (let i = 0; i < 2_000; i++) engine.apply(swap(i % 2 === 0 ? ALICE : BOB, "buy", 1_000n + BigInt(i), 30_000n, start + 5_000, 200, { id: `flood-${i}` }))
    expect(token().updatedAt).toBe(before + 1)
    engine.drainChanges()
    expect(token().updatedAt).toBe(before + 1)
    // ... and a later change takes its own time
    engine.apply(swap(ALICE, "buy", 1_000n, 30_000n, start + 60_000, 200, { id: "later" }))
    expect(token().updatedAt).toBe(start + 60_000)
    engine.drainChanges()

    // The 1 ms step never takes it more than MAX_UPDATED_AT_LEAD_MS past the market's clock (here
    // the events' own, as in a replay): more published states than that share the bound.
    const steps: Array<number> = []
    for (let i = 0; i < MAX_UPDATED_AT_LEAD_MS + 5; i++) {
      engine.apply(swap(ALICE, "buy", 1_000n, 30_000n, start + 60_000, 200, { id: `at-clock-${i}` }))
      engine.drainChanges()
      steps.push(token().updatedAt)
    }
    expect(engine.now).toBe(start + 60_000)
    expect(steps.slice(0, 3)).toEqual([start + 60_001, start + 60_002, start + 60_003])
    expect(steps.slice(-6)).toEqual(Array(6).fill(start + 60_000 + MAX_UPDATED_AT_LEAD_MS))
  })

  it("moves devFunding from unresolved to resolved when the creator's funding lookup settles", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    expect(engine.token("solana", TOKEN)!.toWire().devFunding).toEqual({ status: "unresolved", address: null, sourceKind: null, sourceLabel: null })
    engine.apply({
      type: "walletFunded", id: "f1", timestamp: start + 5000, chain: "solana", wallet: CREATOR, funder: "Binance1111111111111111111111111111111111111",
      sourceKind: "cex", sourceLabel: "Binance", amount: 2_000_000_000n, asset: SOL, assetSymbol: "SOL", assetDecimals: 9, fundedAt: start - 86_400_000, transactionHash: "fundtx"
    })
    const token = engine.token("solana", TOKEN)!.toWire()
    expect(token.devFunding).toEqual({ status: "resolved", address: "Binance1111111111111111111111111111111111111", sourceKind: "cex", sourceLabel: "Binance" })
    expect(token.updatedAt).toBe(start + 5000)
  })

  it("keeps the creator's first funding: a later-dated answer or a \"none known\" does not replace it, an earlier-dated one does", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    const funded = (id: string, funder: string | null, fundedAt: number | null): MarketEvent => ({
      type: "walletFunded", id, timestamp: start + 5000, chain: "solana", wallet: CREATOR, funder,
      sourceKind: funder === null ? null : "wallet", sourceLabel: null, amount: funder === null ? null : 1_000_000_000n, asset: funder === null ? null : SOL,
      assetSymbol: funder === null ? null : "SOL", assetDecimals: funder === null ? null : 9, fundedAt, transactionHash: funder === null ? null : `tx-${id}`
    })
    const FIRST = "First111111111111111111111111111111111111111"
    const funderNow = () => engine.token("solana", TOKEN)!.toWire().devFunding.address
    expect(engine.apply(funded("none", null, null))).toBeUndefined()
    expect(engine.token("solana", TOKEN)!.toWire().devFunding.status).toBe("resolved")
    engine.apply(funded("f1", FIRST, start - 2 * 86_400_000))
    expect(funderNow()).toBe(FIRST) // a funder replaces "none known"
    engine.apply(funded("f2", "Later111111111111111111111111111111111111111", start - 86_400_000 / 2))
    expect(funderNow()).toBe(FIRST) // later-dated: not the first funding
    engine.apply(funded("f3", null, null))
    expect(funderNow()).toBe(FIRST) // "none known" never erases a known funder
    engine.apply(funded("f4", "Earlier11111111111111111111111111111111111111", start - 3 * 86_400_000))
    expect(funderNow()).toBe("Earlier11111111111111111111111111111111111111")
  })

  it("records graduation, venues deepest pool first and the deepest pool's anchor", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    // The curve as the last swap on it left it: 400 SOL of (virtual) liquidity, more than the new pool gets.
    engine.apply(swap(ALICE, "buy", 1_000_000n, 1_000n, start + 1, 200, { poolAfter: { liquidityNative: 400_000_000_000n, bondingCurvePct: "99.9" } }))
    expect(engine.token("solana", TOKEN)!.toWire().liquidity).toEqual({ native: "400", usd: "60000" })
    engine.apply({ type: "curveProgressed", id: "c1", timestamp: start + 2, chain: "solana", token: TOKEN, bondingCurvePct: "99.9" })
    engine.apply({ type: "graduated", id: "g1", timestamp: start + 3, chain: "solana", token: TOKEN, pool: "SwapPoo111111111111111111111111111111111111", dex: "pumpswap", transactionHash: "gtx" })
    engine.apply({
      type: "liquidityChanged", id: "l1", timestamp: start + 4, chain: "solana", token: TOKEN, pool: "SwapPoo111111111111111111111111111111111111",
      dex: "pumpswap", anchorAddress: SOL, anchorSymbol: "SOL", liquidityNative: 170_000_000_000n, nativeUsd: "150", block: null
    })
    const token = engine.token("solana", TOKEN)!.toWire()
    expect(token.graduatedAt).toBe(start + 3)
    expect(token.graduatedToPool).toBe("SwapPoo111111111111111111111111111111111111")
    expect(token.graduatedToDex).toBe("pumpswap")
    expect(token.bondingCurvePct).toBe("100")
    expect(token.dexes).toEqual(["pumpswap", "pumpfun"])
    expect(token.anchorSymbol).toBe("SOL")
    // The migration emptied the curve: the new pool alone is the liquidity, and the deepest.
    expect(token.liquidity).toEqual({ native: "170", usd: "25500" })
  })

  it("a graduation empties the curve whatever its venue is called, and only the curve", () => {
    const engine = new MarketEngine()
    engine.apply(launch({ launchpad: "some-launchpad" }))
    // a curve on a venue named otherwise than the launchpad (known as a curve by the progress its swaps report)
    engine.apply(swap(ALICE, "buy", 1_000_000n, 1_000n, start + 1, 200, { dex: "curve-venue", poolAfter: { liquidityNative: 300_000_000_000n, bondingCurvePct: "80" } }))
    // another pool that is no curve, trading beside it
    engine.apply(swap(BOB, "buy", 1_000_000n, 1_000n, start + 2, 201, {
      pool: "Side1111111111111111111111111111111111111111", dex: "side-dex", poolAfter: { liquidityNative: 50_000_000_000n, bondingCurvePct: null }
    }))
    engine.apply({ type: "graduated", id: "g1", timestamp: start + 3, chain: "solana", token: TOKEN, pool: "SwapPoo111111111111111111111111111111111111", dex: "pumpswap", transactionHash: "gtx" })
    engine.apply({
      type: "liquidityChanged", id: "l1", timestamp: start + 4, chain: "solana", token: TOKEN, pool: "SwapPoo111111111111111111111111111111111111",
      dex: "pumpswap", anchorAddress: SOL, anchorSymbol: "SOL", liquidityNative: 170_000_000_000n, nativeUsd: "150", block: null
    })
    const token = engine.token("solana", TOKEN)!.toWire()
    expect(token.liquidity).toEqual({ native: "220", usd: "33000" })
    expect(token.dexes).toEqual(["pumpswap", "side-dex", "curve-venue"])
  })

  it("snipers and insiders count from the first pool: the launch's curve, else the earliest pool seen (its liquidity event's block, or a trade)", () => {
    const wallets = Array.from("ABCDEFGH", (c) => `Wa11et${c}`.padEnd(43, "1"))
    const groups = (engine: MarketEngine) => {
      const h = engine.token("solana", TOKEN)!.toWire().holders
      return [h.sniperCount, h.insiderCount]
    }
    // No curve; the first trades come 50 blocks after the launch: they are the pool's first blocks.
    const late = new MarketEngine()
    late.apply(launch({ launchpad: null, hasCurve: false, block: 5_000 }))
    late.apply(swap(wallets[0]!, "buy", 1_000n, 1_000n, start + 1, 5_050))
    late.apply(swap(wallets[1]!, "buy", 1_000n, 1_000n, start + 2, 5_051))
    late.apply(swap(wallets[2]!, "buy", 1_000n, 1_000n, start + 3, 5_052))
    late.apply(swap(wallets[3]!, "buy", 1_000n, 1_000n, start + 4, 5_053))
    expect(groups(late)).toEqual([2, 3])
    // A pool's liquidity event with its block dates the pool: buys 3 blocks later are nobody.
    const seeded = new MarketEngine()
    seeded.apply(launch({ launchpad: null, hasCurve: false, block: 5_000 }))
    seeded.apply({
      type: "liquidityChanged", id: "seed", timestamp: start + 1, chain: "solana", token: TOKEN, pool: "Poo111111111111111111111111111111111111111",
      dex: "raydium", anchorAddress: SOL, anchorSymbol: "SOL", liquidityNative: 1_000_000_000n, nativeUsd: "150", block: 5_047
    })
    seeded.apply(swap(wallets[0]!, "buy", 1_000n, 1_000n, start + 2, 5_049))
    seeded.apply(swap(wallets[1]!, "buy", 1_000n, 1_000n, start + 3, 5_050))
    expect(groups(seeded)).toEqual([0, 1])
    // A late trade from an earlier block moves the first pool back for the trades after it.
    late.apply(swap(wallets[4]!, "sell", 1n, 1n, start + 5, 5_049))
    late.apply(swap(wallets[5]!, "buy", 1_000n, 1_000n, start + 6, 5_051))
    expect(groups(late)).toEqual([2, 4])
    // With a curve the launch made the pool: a first trade 50 blocks later is nobody.
    const curve = new MarketEngine()
    curve.apply(launch({ block: 5_000 }))
    curve.apply(swap(wallets[0]!, "buy", 1_000n, 1_000n, start + 1, 5_050))
    curve.apply(swap(wallets[1]!, "buy", 1_000n, 1_000n, start + 2, 5_001))
    expect(groups(curve)).toEqual([1, 1])
  })

  it("tokens sent to a burn sink (Solana's incinerator or system program) leave the holders and the top ten", () => {
    for (const sink of ["1nc1nerator11111111111111111111111111111111", "11111111111111111111111111111111"]) {
      const engine = new MarketEngine()
      engine.apply(launch())
      engine.apply(swap(ALICE, "buy", 10_000_000_000n, 1_000n, start + 1))
      engine.apply(transfer(ALICE, sink, 4_000_000_000n, start + 2))
      const holders = engine.token("solana", TOKEN)!.toWire().holders
      expect(holders.count, sink).toBe(1) // ALICE alone
      expect(holders.top10Pct, sink).toBe("0.0006") // ALICE's 6e9 of 1e15
    }
  })

  it("an address that held tokens before it became a known pool stops being a holder (graduation, a swap's new pool)", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    engine.apply(swap(ALICE, "buy", 10_000_000_000n, 1_000n, start + 1))
    const graduationPool = "SwapPoo111111111111111111111111111111111111"
    engine.apply(transfer(ALICE, graduationPool, 2_000_000_000n, start + 2))
    engine.apply(transfer(ALICE, BOB, 1_000_000_000n, start + 3))
    expect(engine.token("solana", TOKEN)!.toWire().holders.count).toBe(3)
    engine.apply({ type: "graduated", id: "g1", timestamp: start + 4, chain: "solana", token: TOKEN, pool: graduationPool, dex: "pumpswap", transactionHash: "gtx" })
    let holders = engine.token("solana", TOKEN)!.toWire().holders
    expect(holders.count).toBe(2)
    expect(holders.top10Pct).toBe("0.0008") // ALICE 7e9 + BOB 1e9 of 1e15
    // A pool first named by a swap: the wallet that already held there leaves the holders too.
    const newPool = "NewPoo1111111111111111111111111111111111111"
    engine.apply(transfer(BOB, newPool, 400_000_000n, start + 5))
    expect(engine.token("solana", TOKEN)!.toWire().holders.count).toBe(3)
    engine.apply(swap("Carol11111111111111111111111111111111111111", "buy", 1_000_000_000n, 1_000n, start + 6, 200, { pool: newPool }))
    holders = engine.token("solana", TOKEN)!.toWire().holders
    expect(holders.count).toBe(3) // ALICE, BOB, Carol; not the pool
    expect(holders.top10Pct).toBe("0.00086")
  })

  it("an EVM pool named in another letter case is the same pool, and no holder", () => {
    const engine = new MarketEngine()
    const token = "0x1111111111111111111111111111111111111111"
    const pool = "0xAbCdEf0000000000000000000000000000000001"
    const trader = "0x2222222222222222222222222222222222222222"
    engine.apply(launch({ chain: "base", token, creator: "0x3333333333333333333333333333333333333333", launchpad: "zora", hasCurve: false, decimals: 18, supply: 10n ** 27n }))
    const base = (e: MarketEvent): MarketEvent => ({ ...e, chain: "base", token, quoteAddress: "0x4200000000000000000000000000000000000006", quoteSymbol: "ETH", quoteDecimals: 18 } as MarketEvent)
    engine.apply(base(swap(trader, "buy", 10n ** 24n, 10n ** 17n, start + 1, 200, { pool })))
    engine.apply(base(transfer(trader, pool.toLowerCase(), 10n ** 23n, start + 2)))
    const wire = engine.token("base", token)!.toWire()
    expect(wire.holders.count).toBe(1)
    expect(wire.dexes.length).toBe(1)
  })

  it("an exchange funding and a phishing label known before a transfer in count from the recipient's first token", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    engine.apply(swap(ALICE, "buy", 10_000_000_000n, 1_000n, start + 1))
    const phisher = "Phish11111111111111111111111111111111111111"
    const cexFunded = "CexFunded111111111111111111111111111111111"
    engine.apply({ type: "walletLabeled", id: "label", timestamp: start + 2, chain: "solana", wallet: phisher, label: "phishing", active: true })
    engine.apply({
      type: "walletFunded", id: "fund", timestamp: start + 3, chain: "solana", wallet: cexFunded, funder: "Binance1111111111111111111111111111111111111",
      sourceKind: "cex", sourceLabel: "Binance", amount: 2_000_000_000n, asset: SOL, assetSymbol: "SOL", assetDecimals: 9, fundedAt: start - 86_400_000, transactionHash: "fundtx"
    })
    engine.apply(transfer(ALICE, phisher, 3_000_000_000n, start + 4))
    engine.apply(transfer(ALICE, cexFunded, 3_000_000_000n, start + 5))
    const holders = engine.token("solana", TOKEN)!.toWire().holders
    expect(holders.count).toBe(3)
    expect(holders.phishingPct).toBe("0.0003")
    expect(holders.fundedByCexPct).toBe("33.333333333333333333")
  })

  it("refuses events for a token it never saw launch, and a second launch of the same token", () => {
    const engine = new MarketEngine()
    expect(told(engine.apply(swap(ALICE, "buy", 1n, 1n, start)))).toMatch(/^token \S+ is unknown/)
    expect(engine.apply(launch())).toBeUndefined()
    expect(told(engine.apply(launch()))).toMatch(/already launched/)
    expect(engine.stats.trades).toBe(0)
  })

  it("builds trade objects with flags, platforms and identities, omitting empty ones", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    engine.apply({ type: "walletLabeled", id: "w1", timestamp: start, chain: "solana", wallet: BOB, label: "kol", active: true })
    engine.apply({ type: "identityResolved", id: "i1", timestamp: start, chain: "solana", wallet: BOB, source: "twitter", handle: "bob", displayName: "Bob", avatar: null, twitter: "bob", telegram: null, farcaster: null })
    engine.apply(swap(BOB, "buy", 1_000_000n, 1_000n, start + 10, 100, { terminal: "axiom" }))
    engine.apply(swap(ALICE, "buy", 1_000_000n, 1_000n, start + 20, 150))
    const [alice, bob] = engine.tokenTradePage("solana", TOKEN, null, 10).records.map((r) => r.trade)
    expect(bob!.flags).toEqual(["sniper", "insider", "proTrader", "kol"])
    expect(bob!.platforms).toEqual([{ platform: "axiom" }])
    expect(bob!.identities).toEqual([{ source: "twitter", handle: "bob", displayName: "Bob", avatar: null, twitter: "bob", telegram: null, farcaster: null }])
    expect(alice).not.toHaveProperty("flags")
    expect(alice).not.toHaveProperty("platforms")
    expect(alice).not.toHaveProperty("identities")
    expect(engine.identityTradePage("kol", ["solana"], null, 10).records.map((r) => r.trader)).toEqual([BOB])
    expect(engine.identityTradePage("kol", ["base"], null, 10).records).toEqual([])
  })

  it("pages trades newest first by keyset with no repeat or gap while trades arrive", () => {
    const engine = new MarketEngine()
    engine.apply(launch())
    for (let i = 0; i < 30; i++) engine.apply(swap(ALICE, "buy", 1_000n, 10n, start + i * 1000))
    const seen: Array<number> = []
    let after: { timestamp: number; seq: number } | null = null
    let arriving = 0
    for (;;) {
      const page = engine.tokenTradePage("solana", TOKEN, after, 7)
      seen.push(...page.records.map((r) => r.seq))
      // trades arrive between pages
      for (let k = 0; k < 3; k++) engine.apply(swap(ALICE, "buy", 1_000n, 10n, start + 100_000 + arriving++))
      if (!page.hasMore) break
      const last = page.records[page.records.length - 1]!
      after = { timestamp: last.timestamp, seq: last.seq }
    }
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => 30 - i))
  })
})
