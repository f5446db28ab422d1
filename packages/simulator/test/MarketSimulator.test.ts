import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import type { ChainSlugValue as Chain, MarketEvent } from "@spot/domain"
import { Chain as Chains, Events } from "@spot/domain"
import { defaultSimulatorOptions, MarketSimulator } from "../src/MarketSimulator.js"
import type { SimulatorOptions } from "../src/MarketSimulator.js"

const startTime = 1_760_000_000_000
const minute = 60_000

const small: SimulatorOptions = { seed: 42, startTime, tradesPerSecond: 40, launchesPerMinute: 40 }

const encodeAll = (events: ReadonlyArray<MarketEvent>): Array<string> => events.map((e) => JSON.stringify(Events.encodeMarketEvent(e)))

const lazy = <A>(make: () => A): (() => A) => {
  let value: A | undefined
  return () => (value ??= make())
}

/** Six simulated minutes at the default rates, shared by the behavioural checks below. */
const defaultRun = lazy(() => new MarketSimulator(defaultSimulatorOptions(startTime)).runFor(6 * minute))

const swapsOf = (events: ReadonlyArray<MarketEvent>): Array<Events.Swap> => events.filter((e): e is Events.Swap => e.type === "swap")
const launchesOf = (events: ReadonlyArray<MarketEvent>): Array<Events.TokenLaunched> =>
  events.filter((e): e is Events.TokenLaunched => e.type === "tokenLaunched")
const key = (chain: Chain, address: string): string => `${chain}:${address}`

describe("MarketSimulator determinism", () => {
  it("gives byte-identical events for the same seed and different ones for another seed", () => {
    const a = encodeAll(new MarketSimulator(small).runFor(2 * minute))
    const b = encodeAll(new MarketSimulator(small).runFor(2 * minute))
    const c = encodeAll(new MarketSimulator({ ...small, seed: 43 }).runFor(2 * minute))
    expect(a.length).toBeGreaterThan(1_000)
    expect(b).toEqual(a)
    expect(c).not.toEqual(a)
  })

  it.prop(
    "does not depend on how time is chunked across advance() calls",
    [Schema.Array(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(20_000))).check(Schema.isMinLength(1), Schema.isMaxLength(40))],
    ([steps]) => {
      const reference = encodeAll(new MarketSimulator(small).runFor(90_000))
      const chunked = new MarketSimulator(small)
      const out: Array<MarketEvent> = []
      let now = startTime - 5
      for (const step of steps) {
        now += step
        if (now >= startTime + 90_000) break
        for (const e of chunked.advance(now)) out.push(e)
      }
      for (const e of chunked.advance(startTime + 90_000)) out.push(e)
      expect(encodeAll(out)).toEqual(reference)
    },
    { timeout: 60_000, arbitrary: { runs: 4 } }
  )
})

describe("MarketSimulator event stream", () => {
  it("round-trips every event through the MarketEvent schema", () => {
    const decode = Schema.decodeUnknownSync(Events.MarketEvent)
    const events = new MarketSimulator(small).runFor(90_000)
    const seenTypes = new Set<string>()
    for (const event of events) {
      seenTypes.add(event.type)
      expect(decode(Events.encodeMarketEvent(event))).toEqual(event)
    }
    expect(seenTypes.size).toBeGreaterThanOrEqual(11)
  })

  it("keeps timestamps non-decreasing, ids unique and blocks/indices ordered per chain", () => {
    const events = defaultRun()
    const ids = new Set<string>()
    const lastOrder = new Map<Chain, [number, number]>()
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!
      if (i > 0) expect(e.timestamp).toBeGreaterThanOrEqual(events[i - 1]!.timestamp)
      ids.add(e.id)
      if (e.type === "swap") {
        const last = lastOrder.get(e.chain)
        if (last !== undefined) expect(e.block > last[0] || (e.block === last[0] && e.indexInBlock > last[1])).toBe(true)
        lastOrder.set(e.chain, [e.block, e.indexInBlock])
      }
    }
    expect(ids.size).toBe(events.length)
  })

  it("uses chain-shaped addresses and transaction hashes", () => {
    for (const e of defaultRun()) {
      if (e.type === "swap") {
        expect(Chains.isAddressOn(e.chain, e.token) && Chains.isAddressOn(e.chain, e.trader) && Chains.isAddressOn(e.chain, e.pool)).toBe(true)
        expect(e.transactionHash).toMatch(e.chain === "solana" ? /^[1-9A-HJ-NP-Za-km-z]{88}$/ : /^0x[0-9a-f]{64}$/)
      } else if (e.type === "tokenLaunched") {
        expect(Chains.isAddressOn(e.chain, e.token) && Chains.isAddressOn(e.chain, e.creator)).toBe(true)
      } else if (e.type === "walletFunded" && e.funder !== null) {
        expect(Chains.isAddressOn(e.chain, e.wallet) && Chains.isAddressOn(e.chain, e.funder)).toBe(true)
      }
    }
  })

  it("never lets a wallet sell or send more than it holds", () => {
    const balances = new Map<string, bigint>()
    const balanceKey = (chain: Chain, token: string, wallet: string) => `${chain}:${token}:${wallet}`
    const change = (k: string, delta: bigint) => {
      const next = (balances.get(k) ?? 0n) + delta
      expect(next >= 0n).toBe(true)
      balances.set(k, next)
    }
    let sells = 0
    let transfers = 0
    for (const e of defaultRun()) {
      if (e.type === "swap") {
        const k = balanceKey(e.chain, e.token, e.trader)
        if (e.side === "sell") sells++
        change(k, e.side === "buy" ? e.tokenAmount : -e.tokenAmount)
      } else if (e.type === "transfer") {
        transfers++
        if (e.from !== null) change(balanceKey(e.chain, e.token, e.from), -e.amount)
        if (e.to !== null) change(balanceKey(e.chain, e.token, e.to), e.amount)
      }
    }
    expect(sells).toBeGreaterThan(1_000)
    expect(transfers).toBeGreaterThan(100)
  })
})

describe("MarketSimulator market content", () => {
  it("covers all five chains with native prices near their assets", () => {
    const events = defaultRun()
    const expectedUsd: Record<Chain, number> = { solana: 150, base: 3000, bsc: 600, robinhood: 3000, arc: 1 }
    for (const chain of Chains.chains) {
      expect(swapsOf(events).some((s) => s.chain === chain)).toBe(true)
      expect(launchesOf(events).some((l) => l.chain === chain)).toBe(true)
      const prices = events.filter((e) => e.type === "nativePrice" && e.chain === chain)
      expect(prices.length).toBeGreaterThan(50)
      for (const p of prices) {
        const usd = Number((p as { usd: string }).usd)
        expect(usd / expectedUsd[chain]).toBeGreaterThan(0.8)
        expect(usd / expectedUsd[chain]).toBeLessThan(1.25)
      }
    }
  })

  it("launches on curve and curve-less launchpads and plain tokens", () => {
    const launches = launchesOf(defaultRun())
    const pads = new Set(launches.map((l) => `${l.chain}/${l.launchpad}/${l.hasCurve}`))
    for (const pad of [
      "solana/pumpfun/true",
      "solana/letsbonk/true",
      "bsc/fourmeme/true",
      "robinhood/robinpad/true",
      "arc/arcpad/true",
      "base/clanker/false",
      "base/zora/false",
      "base/null/false",
      "bsc/null/false"
    ]) {
      expect(pads.has(pad)).toBe(true)
    }
    expect(launches.some((l) => l.annotations.includes("mayhem_mode") && l.launchpad === "pumpfun")).toBe(true)
    expect(launches.some((l) => l.metadata === null)).toBe(true)
    expect(launches.filter((l) => l.metadata !== null).length / launches.length).toBeGreaterThan(0.7)
    const late = new Set(defaultRun().filter((e) => e.type === "metadataResolved").map((e) => (e as { token: string }).token))
    expect(launches.filter((l) => l.metadata === null).some((l) => late.has(l.token))).toBe(true)
  })

  it("graduates tokens within minutes and keeps trading them on the new pool", () => {
    const events = defaultRun()
    const graduations = events.filter((e) => e.type === "graduated")
    expect(graduations.length).toBeGreaterThan(0)
    const graduatedPools = new Map(graduations.map((g) => [key(g.chain, (g as { token: string }).token), (g as { pool: string }).pool]))
    expect(swapsOf(events).some((s) => graduatedPools.get(key(s.chain, s.token)) === s.pool)).toBe(true)
    const dexes = new Set(graduations.map((g) => (g as { dex: string }).dex))
    expect([...dexes].every((d) => ["pumpswap", "raydium", "pancakeswap", "uniswap-v3", "arcswap"].includes(d))).toBe(true)
  })

  it("spreads tokens over the three discovery columns", () => {
    const events = defaultRun()
    const progress = new Map<string, number>()
    const graduated = new Set<string>()
    const curveless = new Set<string>()
    for (const e of events) {
      if (e.type === "swap" && e.poolAfter?.bondingCurvePct != null) progress.set(key(e.chain, e.token), Number(e.poolAfter.bondingCurvePct))
      else if (e.type === "graduated") graduated.add(key(e.chain, e.token))
      else if (e.type === "tokenLaunched" && !e.hasCurve) curveless.add(key(e.chain, e.token))
    }
    const newPairs = [...progress].filter(([k, p]) => p < 40 && !graduated.has(k)).length
    const graduating = [...progress].filter(([k, p]) => p >= 40 && !graduated.has(k)).length
    expect(newPairs).toBeGreaterThan(100)
    expect(graduating).toBeGreaterThan(10)
    expect(graduated.size + curveless.size).toBeGreaterThan(50)
  })

  it("prices curve swaps by the pump.fun curve (progress matches the swaps)", () => {
    const events = defaultRun()
    const curveTokens = new Map<string, bigint>()
    const sold = new Map<string, bigint>()
    const curvePool = new Map<string, string>()
    let checked = 0
    for (const e of events) {
      if (e.type === "tokenLaunched" && e.hasCurve) {
        curveTokens.set(key(e.chain, e.token), 793_100_000n * 10n ** BigInt(e.decimals))
      } else if (e.type === "swap" && curveTokens.has(key(e.chain, e.token)) && e.dex === launchpadOf(events, e)) {
        const k = key(e.chain, e.token)
        if (!curvePool.has(k)) curvePool.set(k, e.pool)
        if (curvePool.get(k) !== e.pool) continue
        sold.set(k, (sold.get(k) ?? 0n) + (e.side === "buy" ? e.tokenAmount : -e.tokenAmount))
        // The swap carries the curve's progress after it.
        const total = curveTokens.get(k)!
        const real = total - (sold.get(k) ?? 0n)
        const exact = (1 - Number(real) / Number(total)) * 100
        expect(Math.abs(Number(e.poolAfter!.bondingCurvePct) - exact)).toBeLessThan(0.0002)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(1_000)
  })

  it("charges chain-appropriate fees", () => {
    const swaps = swapsOf(defaultRun())
    const solanaCurve = swaps.filter((s) => s.chain === "solana" && (s.dex === "pumpfun" || s.dex === "letsbonk"))
    expect(solanaCurve.length).toBeGreaterThan(100)
    for (const s of solanaCurve) {
      expect(s.fees.transaction >= 5_000n && s.fees.validator > 0n).toBe(true)
      expect(s.fees.platform).toBe(s.nativeAmount / 100n)
      expect(s.fees.dex).toBe(0n)
    }
    expect(swaps.some((s) => s.dex === "uniswap-v4" && s.fees.dex > 0n && s.fees.transaction > 0n)).toBe(true)
    expect(swaps.some((s) => s.quoteSymbol === "USDC" && s.chain !== "arc" && s.nativeAmount > 0n)).toBe(true)
  })
})

const launchpadByToken = new WeakMap<ReadonlyArray<MarketEvent>, Map<string, string | null>>()
const launchpadOf = (events: ReadonlyArray<MarketEvent>, swap: Events.Swap): string | null | undefined => {
  let map = launchpadByToken.get(events)
  if (map === undefined) {
    map = new Map(launchesOf(events).map((l) => [key(l.chain, l.token), l.launchpad]))
    launchpadByToken.set(events, map)
  }
  return map.get(key(swap.chain, swap.token))
}

describe("MarketSimulator trader populations", () => {
  it("labels whales, KOLs, partnerscan, partner and phishing wallets, with identities", () => {
    const events = defaultRun()
    const labels = new Set(events.flatMap((e) => (e.type === "walletLabeled" ? [e.label] : [])))
    for (const label of ["whale", "kol", "partnerscan", "partner", "phishing"]) expect(labels.has(label)).toBe(true)
    const sources = new Set(events.flatMap((e) => (e.type === "identityResolved" ? [e.source] : [])))
    expect(sources.has("twitter") && sources.has("partnerscan")).toBe(true)
  })

  it("routes swaps through known terminals and the partner terminal", () => {
    const terminals = new Set(swapsOf(defaultRun()).map((s) => s.terminal))
    expect(terminals.has("partner")).toBe(true)
    expect(terminals.has(null)).toBe(true)
    expect(["axiom", "photon", "bullx", "gmgn"].some((t) => terminals.has(t))).toBe(true)
  })

  it("has snipers, insiders and bundles around launches", () => {
    const events = defaultRun()
    const launchBlock = new Map(launchesOf(events).map((l) => [key(l.chain, l.token), l.block]))
    const buyersPerBlock = new Map<string, Set<string>>()
    let nextBlockBuys = 0
    let insiderBlockBuys = 0
    for (const s of swapsOf(events)) {
      if (s.side !== "buy") continue
      const launch = launchBlock.get(key(s.chain, s.token))!
      if (s.block === launch + 1) nextBlockBuys++
      if (s.block === launch + 2 || s.block === launch + 3) insiderBlockBuys++
      const blockKey = `${key(s.chain, s.token)}:${s.block}`
      const buyers = buyersPerBlock.get(blockKey) ?? new Set<string>()
      buyers.add(s.trader)
      buyersPerBlock.set(blockKey, buyers)
    }
    expect(nextBlockBuys).toBeGreaterThan(100)
    expect(insiderBlockBuys).toBeGreaterThan(50)
    expect([...buyersPerBlock.values()].filter((b) => b.size >= 4).length).toBeGreaterThan(20)
  })

  it("funds fresh wallets within seven days of trading, creators sometimes late or unknown", () => {
    const events = defaultRun()
    const fundedAt = new Map<string, number>()
    let freshTrades = 0
    let nullFunders = 0
    let cex = 0
    const creators = new Map<string, number>()
    let lateCreatorFunding = 0
    for (const e of events) {
      if (e.type === "tokenLaunched") {
        if (!creators.has(key(e.chain, e.creator))) creators.set(key(e.chain, e.creator), e.timestamp)
      } else if (e.type === "walletFunded") {
        if (e.funder === null) nullFunders++
        if (e.sourceKind === "cex") {
          cex++
          expect(e.sourceLabel).not.toBeNull()
        }
        if (e.fundedAt !== null) fundedAt.set(key(e.chain, e.wallet), e.fundedAt)
        const launchedAt = creators.get(key(e.chain, e.wallet))
        if (launchedAt !== undefined && e.timestamp > launchedAt) lateCreatorFunding++
      } else if (e.type === "swap") {
        const at = fundedAt.get(key(e.chain, e.trader))
        if (at !== undefined && e.timestamp - at < 7 * 24 * 60 * minute) freshTrades++
      }
    }
    expect(freshTrades).toBeGreaterThan(500)
    expect(nullFunders).toBeGreaterThan(5)
    expect(cex).toBeGreaterThan(100)
    expect(lateCreatorFunding).toBeGreaterThan(20)
  })

  it("gives wallets repeated cycles: buy, sell out, buy again", () => {
    const balances = new Map<string, bigint>()
    let rebuys = 0
    const closed = new Set<string>()
    for (const s of swapsOf(defaultRun())) {
      const k = `${s.chain}:${s.token}:${s.trader}`
      const next = (balances.get(k) ?? 0n) + (s.side === "buy" ? s.tokenAmount : -s.tokenAmount)
      if (s.side === "buy" && closed.has(k)) rebuys++
      if (next === 0n && s.side === "sell") closed.add(k)
      balances.set(k, next)
    }
    expect(rebuys).toBeGreaterThan(20)
  })

  it("emits off-chain resolutions: security scores, listings, burns", () => {
    const events = defaultRun()
    expect(events.some((e) => e.type === "securityScored" && e.lpBurntPct === "100")).toBe(true)
    expect(events.some((e) => e.type === "tokenListed" && e.platform === "listingService")).toBe(true)
    expect(events.some((e) => e.type === "transfer" && e.to === null)).toBe(true)
    expect(events.some((e) => e.type === "transfer" && e.from === null)).toBe(true)
  })
})

describe("MarketSimulator rates and memory", () => {
  it("settles near the configured swap rate and keeps a bounded set of live tokens", () => {
    const options: SimulatorOptions = { seed: 9, startTime, tradesPerSecond: 10, launchesPerMinute: 20 }
    const simulator = new MarketSimulator(options)
    const live: Array<number> = []
    let lastHourSwaps = 0
    for (let hour = 1; hour <= 4; hour++) {
      for (let t = (hour - 1) * 60; t < hour * 60; t += 10) {
        const events = simulator.advance(startTime + (t + 10) * minute)
        if (hour === 4) for (const e of events) if (e.type === "swap") lastHourSwaps++
      }
      live.push(simulator.liveTokenCount)
    }
    const rate = lastHourSwaps / 3_600
    expect(rate).toBeGreaterThan(7)
    expect(rate).toBeLessThan(13)
    // Tokens live at most two hours: the live set stops growing once launches and deaths balance.
    expect(Math.max(live[2]!, live[3]!)).toBeLessThan(live[1]! * 1.3)
    expect(live[3]!).toBeLessThan(options.launchesPerMinute * 120)
  })
})
