/**
 * A deterministic, seeded market simulator: launches, bonding-curve and pool swaps, graduations,
 * transfers, late metadata, dev funding, security scores, listings, wallet labels and identities,
 * and native prices, on all five chains, as the `MarketEvent` stream the engine folds.
 *
 * Everything is driven by an agenda of simulated times (`Schedule`): tokens, the launch process,
 * the per-chain price feeds and delayed off-chain resolutions each sit in it at their next due
 * time. `advance(now)` only drains the agenda up to `now`, so the stream depends on the options
 * alone, never on how a caller chunks time. On-chain events happen at block boundaries of their
 * chain; everything for one block is emitted when its agenda item is due.
 */
import type { ChainSlugValue as Chain, Events, MarketEvent } from "@spot/domain"
import { Chain as Chains, Fixed } from "@spot/domain"
import { evmAddress, evmTransactionHash, solanaAddress, solanaSignature } from "./Addresses.js"
import { CurveTrade, formatProgress, progressUnits, Reserves } from "./BondingCurve.js"
import type { ChainSpec, FateSpec, LaunchpadSpec, QuoteAsset } from "./MarketConfig.js"
import { cexLabels, chainSpecs, fateSpecs, Population, populationSpecs } from "./MarketConfig.js"
import { kolProfile, partnerscanProfile, tokenMetadata, tokenName } from "./Names.js"
import { cumulativeWeights, pickWeighted, Prng } from "./Prng.js"
import type { Scheduled } from "./Schedule.js"
import { Schedule } from "./Schedule.js"
import { HolderBook, Wallet, WalletPool } from "./Wallets.js"

export interface SimulatorOptions {
  readonly seed: number
  /** ms; the simulated clock starts here. */
  readonly startTime: number
  /** Steady-state swap rate across all chains. */
  readonly tradesPerSecond: number
  /** New tokens per minute across all chains. */
  readonly launchesPerMinute: number
}

export const defaultSimulatorOptions = (startTime: number): SimulatorOptions => ({
  seed: 1,
  startTime,
  tradesPerSecond: 200,
  launchesPerMinute: 120
})

// ---------------------------------------------------------------------------------------------
// Agenda items

const KIND_TOKEN = 0
const KIND_LAUNCH = 1
const KIND_PRICE = 2
const KIND_DELAYED = 3

interface AgendaItem extends Scheduled {
  readonly kind: number
}

/** An off-chain resolution (late metadata, funding lookups, scores, labels) due later. */
class DelayedEvent implements AgendaItem {
  readonly kind = KIND_DELAYED
  time = 0
  seq = 0
  constructor(readonly event: MarketEvent) {}
}

class LaunchTimer implements AgendaItem {
  readonly kind = KIND_LAUNCH
  time = 0
  seq = 0
  /** Chain of the launch due at `time` (chosen when scheduled so `time` is on its block grid). */
  chain: ChainRuntime | null = null
  /** Unrounded time of the launch process, so rounding to blocks does not bias its rate. */
  rawTime = 0
}

// ---------------------------------------------------------------------------------------------
// Chains

const chainBit = (index: number): number => 1 << index

/** One chain's clock, native price and fee levels; also the agenda item of its price feed. */
class ChainRuntime implements AgendaItem {
  readonly kind = KIND_PRICE
  time = 0
  seq = 0
  readonly name: Chain
  readonly family: Chains.AddressFamily
  readonly bit: number
  readonly launchpadWeights: ReadonlyArray<number>
  /** Native base units per 1e-9 native unit (1 for lamports, 1e9 for wei). */
  private readonly nanoScale: bigint
  private readonly nativeDecimalsScale: bigint
  usdMicros: number
  usdMicrosBig: bigint
  usd: number
  usdText: string
  priceCount = 0
  private lastBlock = -1
  private txIndex = 0
  /** Fee levels in native base units, refreshed with the price (a small table to draw from). */
  readonly transactionFees: Array<bigint> = []
  readonly priorityFees: Array<bigint> = []
  readonly botPriorityFees: Array<bigint> = []

  constructor(
    readonly spec: ChainSpec,
    index: number,
    readonly startTime: number
  ) {
    this.name = spec.chain
    this.family = Chains.addressFamily(spec.chain)
    this.bit = chainBit(index)
    this.launchpadWeights = cumulativeWeights(spec.launchpads.map((l) => l.weight))
    const decimals = Chains.nativeAsset[spec.chain].decimals
    this.nanoScale = 10n ** BigInt(decimals - 9)
    this.nativeDecimalsScale = 10n ** BigInt(decimals)
    this.usdMicros = Math.round(spec.nativeUsd * 1e6)
    this.usdMicrosBig = BigInt(this.usdMicros)
    this.usd = spec.nativeUsd
    this.usdText = Fixed.format(this.usdMicrosBig * 10n ** 12n)
  }

  blockAt(time: number): number {
    return this.spec.firstBlock + Math.floor((time - this.startTime) / this.spec.blockMs)
  }

  /** The first block boundary at or after `time`. */
  ceilToBlock(time: number): number {
    const blockMs = this.spec.blockMs
    return this.startTime + Math.ceil((time - this.startTime) / blockMs) * blockMs
  }

  /** Transaction index for a new transaction in `block`: increasing, with gaps for others' txs. */
  nextTxIndex(block: number, prng: Prng): number {
    if (block !== this.lastBlock) {
      this.lastBlock = block
      this.txIndex = prng.int(12)
    } else {
      this.txIndex += 1 + prng.int(4)
    }
    return this.txIndex
  }

  address(prng: Prng, suffix = ""): string {
    return this.family === "solana" ? solanaAddress(prng, suffix) : evmAddress(prng, suffix)
  }

  transactionHash(prng: Prng): string {
    return this.family === "solana" ? solanaSignature(prng) : evmTransactionHash(prng)
  }

  /** `usd` worth of the native asset in base units. */
  usdToNative(usd: number): bigint {
    return BigInt(Math.round((usd / this.usd) * 1e9)) * this.nanoScale
  }

  /** Native value of an amount of a USD stablecoin quote. */
  stableToNative(amount: bigint, quote: QuoteAsset): bigint {
    return (amount * this.nativeDecimalsScale * 1_000_000n) / (10n ** BigInt(quote.decimals) * this.usdMicrosBig)
  }

  /** One random-walk step of the native price (mean-reverting so long runs stay plausible). */
  stepPrice(prng: Prng): void {
    const initial = this.spec.nativeUsd * 1e6
    let next = this.usdMicros * (1 + this.spec.priceStepSigma * prng.normal())
    next += (initial - next) * 0.002
    this.usdMicros = Math.max(1, Math.round(next))
    this.usdMicrosBig = BigInt(this.usdMicros)
    this.usd = this.usdMicros / 1e6
    this.usdText = Fixed.format(this.usdMicrosBig * 10n ** 12n)
    this.priceCount++
    this.refreshFees(prng)
  }

  refreshFees(prng: Prng): void {
    const [txLow, txHigh] = this.spec.transactionFeeUsd
    const [tipLow, tipHigh] = this.spec.validatorFeeUsd
    for (let i = 0; i < 8; i++) {
      // Solana charges a fixed 5000 lamports per signature; EVM gas moves with the price.
      this.transactionFees[i] = this.family === "solana" ? 5_000n * BigInt(1 + (i >> 2)) : this.usdToNative(prng.uniform(txLow, txHigh))
      this.priorityFees[i] = this.usdToNative(prng.uniform(tipLow, tipLow + (tipHigh - tipLow) * 0.05))
      this.botPriorityFees[i] = this.usdToNative(prng.uniform(tipLow + (tipHigh - tipLow) * 0.05, tipHigh))
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Tokens

const PHASE_SNIPERS = 0
const PHASE_INSIDERS = 1
const PHASE_TRADING = 2

const recentTradersKept = 24

class SimToken implements AgendaItem {
  readonly kind = KIND_TOKEN
  time = 0
  seq = 0
  phase = PHASE_SNIPERS
  readonly holders = new HolderBook()
  /** Recent buyers, some of whom come back (repeat cycles after selling out). */
  readonly recentTraders: Array<Wallet> = []
  recentCursor = 0
  onCurve: boolean
  graduated = false
  platformFeeBps: bigint
  dexFeeBps: bigint

  constructor(
    readonly chain: ChainRuntime,
    readonly address: string,
    readonly launchpad: LaunchpadSpec,
    readonly creator: Wallet,
    readonly launchTime: number,
    readonly launchBlock: number,
    readonly fate: FateSpec,
    /** Swaps per ms right after launch; decays with `fate.decayMs`. */
    readonly initialRate: number,
    readonly deathTime: number,
    readonly quote: QuoteAsset,
    readonly reserves: Reserves,
    public pool: string,
    public dex: string,
    readonly mayhem: boolean
  ) {
    this.onCurve = launchpad.curve !== null
    this.platformFeeBps = launchpad.curveFeeBps
    this.dexFeeBps = this.onCurve ? 0n : launchpad.poolFeeBps
  }

  rememberTrader(wallet: Wallet): void {
    if (this.recentTraders.length < recentTradersKept) this.recentTraders.push(wallet)
    else {
      this.recentTraders[this.recentCursor] = wallet
      this.recentCursor = (this.recentCursor + 1) % recentTradersKept
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rates and knobs

const second = 1_000
const minute = 60 * second
const day = 24 * 60 * minute

/** Share of token actions that are transfers rather than swaps. */
const transferShare = 0.03
/** Trickle of activity that remains after the launch burst decays (relative to the initial rate). */
const floorRateShare = 0.03
/** Expected swaps per token in launch bursts (dev buy, launch-block snipers, bundles, snipers, insiders). */
const burstSwapsPerToken = 5

const fateWeights = cumulativeWeights(fateSpecs.map((f) => f.weight))
const meanRelativeTrades = fateSpecs.reduce((sum, f) => sum + f.weight * f.relativeTrades, 0)

const tradingPopulations = populationSpecs.filter((p) => p.buyWeight > 0)
const tradingWeights = cumulativeWeights(tradingPopulations.map((p) => p.buyWeight))

/** Populations that pay top priority fees / tips, indexed by population. */
const paysTopPriority: ReadonlyArray<boolean> = populationSpecs.map((p) =>
  [Population.sniper, Population.bundler, Population.pro, Population.insider, Population.mayhemAgent].includes(p.population as never)
)

const solanaTerminals = chainSpecs.find((c) => c.chain === "solana")!.terminals
const evmTerminals = chainSpecs.find((c) => c.chain === "base")!.terminals

// ---------------------------------------------------------------------------------------------

export class MarketSimulator {
  private readonly prng: Prng
  private readonly startTime: number
  private readonly agenda = new Schedule<AgendaItem>()
  private readonly chains: ReadonlyArray<ChainRuntime>
  private readonly chainLaunchWeights: ReadonlyArray<number>
  private readonly launchTimer = new LaunchTimer()
  private readonly meanLaunchGapMs: number
  /** Expected swaps per token outside launch bursts, from the two rate options. */
  private readonly tradesPerToken: number
  private readonly walletPools: Record<Chains.AddressFamily, Array<WalletPool>>
  private readonly funderPools: Record<Chains.AddressFamily, Array<string | undefined>>
  private readonly cexWallets: Record<Chains.AddressFamily, ReadonlyArray<string>>
  private readonly trade = new CurveTrade()
  private out: Array<MarketEvent> = []
  private clock: number
  private offChainSeq = 0
  private liveTokens = 0
  private walletsCreated = 0

  constructor(readonly options: SimulatorOptions) {
    this.prng = new Prng(options.seed)
    this.startTime = Math.floor(options.startTime)
    this.clock = this.startTime - 1
    this.chains = chainSpecs.map((spec, i) => new ChainRuntime(spec, i, this.startTime))
    this.chainLaunchWeights = cumulativeWeights(chainSpecs.map((c) => c.launchShare))
    const launchesPerMs = Math.max(0, options.launchesPerMinute) / minute
    this.meanLaunchGapMs = launchesPerMs > 0 ? 1 / launchesPerMs : Number.POSITIVE_INFINITY
    const swapsPerLaunch = launchesPerMs > 0 ? Math.max(0, options.tradesPerSecond) / second / launchesPerMs : 0
    this.tradesPerToken = Math.max(1, swapsPerLaunch - burstSwapsPerToken) / (1 - transferShare)
    const pools = (): Array<WalletPool> => populationSpecs.map((p) => new WalletPool(p.poolSize))
    this.walletPools = { solana: pools(), evm: pools() }
    this.funderPools = { solana: new Array(300), evm: new Array(300) }
    this.cexWallets = {
      solana: cexLabels.map(() => solanaAddress(this.prng)),
      evm: cexLabels.map(() => evmAddress(this.prng))
    }
    // Native prices first, so every swap has a price announced before it.
    for (const chain of this.chains) {
      chain.refreshFees(this.prng)
      this.agenda.add(chain, this.startTime)
    }
    if (Number.isFinite(this.meanLaunchGapMs)) {
      this.launchTimer.rawTime = this.startTime
      this.scheduleNextLaunch(this.startTime)
    }
  }

  /** Tokens still trading (the only token state the simulator keeps). */
  get liveTokenCount(): number {
    return this.liveTokens
  }

  /** All events with timestamp <= now not yet emitted, in non-decreasing timestamp order. */
  advance(now: number): Array<MarketEvent> {
    const out: Array<MarketEvent> = []
    this.runUntil(now, out)
    return out
  }

  /** Advances in steps to startTime + durationMs and returns everything (for warm-up and tests). */
  runFor(durationMs: number): Array<MarketEvent> {
    const out: Array<MarketEvent> = []
    const end = this.startTime + durationMs
    for (let t = Math.max(this.clock, this.startTime) + minute; t < end; t += minute) this.runUntil(t, out)
    this.runUntil(end, out)
    return out
  }

  private runUntil(now: number, out: Array<MarketEvent>): void {
    this.out = out
    const agenda = this.agenda
    for (;;) {
      const next = agenda.peek()
      if (next === undefined || next.time > now) break
      agenda.pop()
      switch (next.kind) {
        case KIND_TOKEN:
          this.actOnToken(next as SimToken)
          break
        case KIND_LAUNCH:
          this.onLaunchDue()
          break
        case KIND_PRICE:
          this.onPriceDue(next as ChainRuntime)
          break
        default:
          out.push((next as DelayedEvent).event)
      }
    }
    if (now > this.clock) this.clock = now
  }

  // -------------------------------------------------------------------------------------------
  // Scheduling helpers

  private later(event: MarketEvent): void {
    this.agenda.add(new DelayedEvent(event), event.timestamp)
  }

  private offChainId(type: string, chain: Chain, subject: string): string {
    return `${type}:${chain}:${subject}:${this.offChainSeq++}`
  }

  private scheduleNextLaunch(now: number): void {
    const timer = this.launchTimer
    timer.rawTime += this.prng.exponential(this.meanLaunchGapMs)
    const chain = this.chains[pickWeighted(this.prng, this.chainLaunchWeights)]!
    timer.chain = chain
    this.agenda.add(timer, chain.ceilToBlock(Math.max(timer.rawTime, now)))
  }

  // -------------------------------------------------------------------------------------------
  // Native prices

  private onPriceDue(chain: ChainRuntime): void {
    const time = chain.time
    if (chain.priceCount > 0 || time > this.startTime) chain.stepPrice(this.prng)
    else chain.priceCount++
    const event: Events.NativePriceUpdated = {
      type: "nativePrice",
      // The time is part of the identity: a later run of the simulator (after a restart, with
      // another seed) must not reuse the ids of the prices already in the event log.
      id: `nativePrice:${chain.name}:${time}:${chain.priceCount}`,
      timestamp: time,
      chain: chain.name,
      usd: chain.usdText
    }
    this.out.push(event)
    this.agenda.add(chain, time + 2_000 + this.prng.int(4_000))
  }

  // -------------------------------------------------------------------------------------------
  // Wallets

  private wallet(family: Chains.AddressFamily, population: Population): Wallet {
    const pool = this.walletPools[family][population]!
    const index = this.prng.int(pool.size)
    let wallet = pool.at(index)
    if (wallet === undefined) {
      wallet = this.newWallet(family, population)
      pool.put(index, wallet)
    }
    return wallet
  }

  private newWallet(family: Chains.AddressFamily, population: Population): Wallet {
    const prng = this.prng
    const address = family === "solana" ? solanaAddress(prng) : evmAddress(prng)
    const terminals = family === "solana" ? solanaTerminals : evmTerminals
    const serial = this.walletsCreated++
    let terminal: string | null = null
    let labels: ReadonlyArray<string> = []
    let profileSource: string | null = null
    let profile = null
    switch (population) {
      case Population.pro:
        terminal = prng.pick(terminals)
        break
      case Population.partner:
        terminal = "partner"
        if (prng.chance(0.3)) labels = ["partner"]
        break
      case Population.whale:
        labels = ["whale"]
        if (prng.chance(0.2)) terminal = prng.pick(terminals)
        break
      case Population.kol:
        labels = ["kol"]
        profileSource = "twitter"
        profile = kolProfile(prng, serial)
        if (prng.chance(0.5)) terminal = prng.pick(terminals)
        break
      case Population.partnerscan:
        labels = ["partnerscan"]
        profileSource = "partnerscan"
        profile = partnerscanProfile(prng, serial)
        if (prng.chance(0.3)) terminal = "partner"
        break
      case Population.phishing:
        labels = ["phishing"]
        break
      case Population.regular:
        if (prng.chance(0.05)) terminal = prng.pick(terminals)
        break
      default:
        break
    }
    return new Wallet(address, population, terminal, labels, profileSource, profile)
  }

  private funderAddress(family: Chains.AddressFamily): string {
    const pool = this.funderPools[family]
    const index = this.prng.int(pool.length)
    let address = pool[index]
    if (address === undefined) {
      address = family === "solana" ? solanaAddress(this.prng) : evmAddress(this.prng)
      pool[index] = address
    }
    return address
  }

  /**
   * Announces a wallet the first time it acts on a chain: its labels, profile and (for some) its
   * first funding. Phishing labels sometimes arrive only minutes later, as security feeds do.
   */
  private introduce(wallet: Wallet, chain: ChainRuntime, time: number): void {
    if ((wallet.announcedMask & chain.bit) !== 0) return
    wallet.announcedMask |= chain.bit
    const prng = this.prng
    for (const label of wallet.labels) {
      const delayed = label === "phishing" && prng.chance(0.4)
      const event: Events.WalletLabeled = {
        type: "walletLabeled",
        id: this.offChainId("walletLabeled", chain.name, wallet.address),
        timestamp: delayed ? time + prng.between(30 * second, 5 * minute) : time,
        chain: chain.name,
        wallet: wallet.address,
        label,
        active: true
      }
      if (delayed) this.later(event)
      else this.out.push(event)
    }
    if (wallet.profile !== null && wallet.profileSource !== null) {
      const p = wallet.profile
      const event: Events.IdentityResolved = {
        type: "identityResolved",
        id: this.offChainId("identityResolved", chain.name, wallet.address),
        timestamp: time,
        chain: chain.name,
        wallet: wallet.address,
        source: wallet.profileSource,
        handle: p.handle,
        displayName: p.displayName,
        avatar: p.avatar,
        twitter: p.twitter,
        telegram: p.telegram,
        farcaster: p.farcaster
      }
      this.out.push(event)
    }
    const spec = populationSpecs[wallet.population]!
    if (spec.fundedShare > 0 && prng.chance(spec.fundedShare)) {
      const fresh = wallet.population === Population.fresh || wallet.population === Population.bundler
      const fundedAgo = fresh ? prng.uniform(10 * minute, 6 * day) : prng.uniform(8 * day, 700 * day)
      this.out.push(this.funding(chain, wallet, time, Math.round(time - fundedAgo), prng.chance(fresh ? 0.4 : 0.6), true))
    }
  }

  private funding(chain: ChainRuntime, wallet: Wallet, timestamp: number, fundedAt: number, fromCex: boolean, known: boolean): Events.WalletFunded {
    const prng = this.prng
    const id = this.offChainId("walletFunded", chain.name, wallet.address)
    if (!known) {
      return {
        type: "walletFunded",
        id,
        timestamp,
        chain: chain.name,
        wallet: wallet.address,
        funder: null,
        sourceKind: null,
        sourceLabel: null,
        amount: null,
        asset: null,
        assetSymbol: null,
        assetDecimals: null,
        fundedAt: null,
        transactionHash: null
      }
    }
    const cexIndex = prng.int(cexLabels.length)
    const native = Chains.nativeAsset[chain.name]
    return {
      type: "walletFunded",
      id,
      timestamp,
      chain: chain.name,
      wallet: wallet.address,
      funder: fromCex ? this.cexWallets[chain.family][cexIndex]! : this.funderAddress(chain.family),
      sourceKind: fromCex ? "cex" : "wallet",
      sourceLabel: fromCex ? cexLabels[cexIndex]! : null,
      amount: chain.usdToNative(prng.logNormal(250, 1)),
      asset: native.address,
      assetSymbol: native.symbol,
      assetDecimals: native.decimals,
      fundedAt: Math.max(0, fundedAt),
      transactionHash: chain.transactionHash(prng)
    }
  }

  /**
   * The creator's first funding: often known at launch, sometimes resolved seconds to a minute
   * later, sometimes settled with no known funder, rarely never looked up.
   */
  private announceCreator(creator: Wallet, chain: ChainRuntime, time: number): void {
    if ((creator.announcedMask & chain.bit) !== 0) return
    creator.announcedMask |= chain.bit
    const prng = this.prng
    const roll = prng.float()
    if (roll >= 0.95) return
    const fundedAt = Math.round(time - prng.uniform(2 * minute, 3 * day))
    const fromCex = prng.chance(0.55)
    if (roll < 0.5) this.out.push(this.funding(chain, creator, time, fundedAt, fromCex, true))
    else this.later(this.funding(chain, creator, time + prng.between(1 * second, 60 * second), fundedAt, fromCex, roll < 0.83))
  }

  // -------------------------------------------------------------------------------------------
  // Launches

  private onLaunchDue(): void {
    const timer = this.launchTimer
    const time = timer.time
    this.launch(timer.chain!, time)
    this.scheduleNextLaunch(time)
  }

  private launch(chain: ChainRuntime, time: number): void {
    const prng = this.prng
    const spec = chain.spec.launchpads[pickWeighted(prng, chain.launchpadWeights)]!
    const family = chain.family
    const creator = prng.chance(0.3) ? this.wallet(family, Population.developer) : this.newWallet(family, Population.developer)
    const address = chain.address(prng, spec.addressSuffix)
    const block = chain.blockAt(time)
    const txIndex = chain.nextTxIndex(block, prng)
    const hash = chain.transactionHash(prng)
    const name = tokenName(prng)
    const metadata = tokenMetadata(prng, name, 0.45)
    const metadataAtLaunch = prng.chance(0.85)
    const mayhem = spec.mayhemShare > 0 && prng.chance(spec.mayhemShare)
    const fate = fateSpecs[pickWeighted(prng, fateWeights)]!
    const lifetime = prng.uniform(fate.lifetimeMs[0], fate.lifetimeMs[1])
    const quote =
      spec.curve === null && chain.spec.stableQuote !== null && prng.chance(spec.stableQuoteShare)
        ? chain.spec.stableQuote
        : chain.spec.nativeQuote
    const creatorShare = (spec.supply * BigInt(spec.creatorSharePct)) / 100n
    let reserves: Reserves
    if (spec.curve !== null) reserves = Reserves.curve(spec.curve)
    else {
      const depthUsd = spec.poolQuoteUsd * prng.uniform(0.6, 1.6)
      const quoteDepth = quote.isNative ? chain.usdToNative(depthUsd) : BigInt(Math.round(depthUsd * 1e6)) * 10n ** BigInt(quote.decimals - 6)
      reserves = Reserves.pool(spec.supply - creatorShare, quoteDepth)
    }
    // Expected trades ≈ initialRate × (decay + floor share × mean lifetime); solve for the rate.
    const meanLifetime = (fate.lifetimeMs[0] + fate.lifetimeMs[1]) / 2
    const expectedTrades = (fate.relativeTrades / meanRelativeTrades) * this.tradesPerToken * (mayhem ? 2 : 1)
    const initialRate = expectedTrades / (fate.decayMs + floorRateShare * meanLifetime)
    const token = new SimToken(
      chain,
      address,
      spec,
      creator,
      time,
      block,
      fate,
      initialRate,
      time + lifetime,
      quote,
      reserves,
      chain.address(prng),
      spec.firstVenue,
      mayhem
    )
    const launched: Events.TokenLaunched = {
      type: "tokenLaunched",
      id: `${chain.name}:${hash}:0`,
      timestamp: time,
      chain: chain.name,
      token: address,
      creator: creator.address,
      decimals: spec.decimals,
      supply: spec.supply,
      launchpad: spec.name,
      hasCurve: spec.curve !== null,
      block,
      transactionHash: hash,
      annotations: mayhem ? ["mayhem_mode"] : [],
      metadata: metadataAtLaunch ? metadata : null
    }
    this.out.push(launched)
    this.announceCreator(creator, chain, time)
    if (creatorShare > 0n) {
      const minted: Events.Transfer = {
        type: "transfer",
        id: `${chain.name}:${hash}:1`,
        timestamp: time,
        chain: chain.name,
        token: address,
        from: null,
        to: creator.address,
        amount: creatorShare,
        transactionHash: hash,
        block
      }
      this.out.push(minted)
      token.holders.add(creator, creatorShare)
    }
    if (!token.onCurve) this.announceLiquidity(token, time, block, hash, 2)
    // The creator's own buy rides in the launch transaction.
    if (prng.chance(0.6)) this.buy(token, creator, this.sizeUsd(creator), time, block, hash, txIndex, 3)
    // Launch-block snipers and, on some launches, a bundle of 4-8 wallets buying in the same block.
    const launchSnipers = prng.chance(0.4) ? prng.between(1, 2) : 0
    for (let i = 0; i < launchSnipers; i++) this.buyInOwnTransaction(token, this.distinctBuyer(token, Population.sniper), time, block)
    if (prng.chance(token.onCurve ? 0.25 : 0.1)) {
      const bundle = prng.between(4, 8)
      for (let i = 0; i < bundle; i++) this.buyInOwnTransaction(token, this.distinctBuyer(token, Population.bundler), time, block)
    }
    this.agenda.add(token, time + chain.spec.blockMs)
    this.liveTokens++
    this.scheduleLaunchResolutions(token, time, metadataAtLaunch ? null : metadata, name)
    // Keep fresh wallets arriving: now and then a fresh-wallet slot gets a brand-new wallet.
    if (prng.chance(0.3)) this.walletPools[family][Population.fresh]!.recycle(prng)
  }

  /** Off-chain follow-ups of a launch: late metadata, security score, listings, metadata edits. */
  private scheduleLaunchResolutions(token: SimToken, time: number, lateMetadata: Events.TokenMetadataFields | null, name: ReturnType<typeof tokenName>): void {
    const prng = this.prng
    const chain = token.chain.name
    if (lateMetadata !== null) this.later(this.metadataResolved(token, time + prng.between(2 * second, 30 * second), lateMetadata))
    if (prng.chance(0.03)) this.later(this.metadataResolved(token, time + prng.between(1 * minute, 10 * minute), tokenMetadata(prng, name, 1)))
    if (prng.chance(0.85)) {
      const evm = token.chain.family === "evm"
      const scored: Events.SecurityScored = {
        type: "securityScored",
        id: this.offChainId("securityScored", chain, token.address),
        timestamp: time + prng.between(3 * second, 60 * second),
        chain,
        token: token.address,
        mintDisabled: token.launchpad.name !== null || prng.chance(0.7),
        transferBlockable: token.launchpad.name === null && evm && prng.chance(0.25),
        lpBurntPct: token.onCurve ? null : token.launchpad.name !== null ? "100" : prng.chance(0.5) ? String(prng.between(0, 100)) : null,
        transferFeeBps: token.launchpad.name === null && evm && prng.chance(0.2) ? prng.pick([100, 200, 300, 500]) : 0
      }
      this.later(scored)
    }
    if (prng.chance(0.03)) {
      const listedAt = time + prng.between(1 * minute, 20 * minute)
      const isPaid = prng.chance(0.7)
      const listed: Events.TokenListed = {
        type: "tokenListed",
        id: this.offChainId("tokenListed", chain, token.address),
        timestamp: listedAt,
        chain,
        token: token.address,
        platform: "listingService",
        isPaid,
        paidAt: isPaid ? listedAt - prng.between(0, 30 * second) : null
      }
      this.later(listed)
    }
  }

  private metadataResolved(token: SimToken, timestamp: number, metadata: Events.TokenMetadataFields): Events.MetadataResolved {
    return {
      type: "metadataResolved",
      id: this.offChainId("metadataResolved", token.chain.name, token.address),
      timestamp,
      chain: token.chain.name,
      token: token.address,
      metadata
    }
  }

  // -------------------------------------------------------------------------------------------
  // Token activity

  private actOnToken(token: SimToken): void {
    const time = token.time
    const chain = token.chain
    const prng = this.prng
    if (token.phase === PHASE_SNIPERS) {
      // The block after launch: the sniper bots that missed the launch block.
      const block = chain.blockAt(time)
      const count = prng.chance(0.7) ? prng.between(1, 4) : 0
      for (let i = 0; i < count; i++) this.buyInOwnTransaction(token, this.distinctBuyer(token, Population.sniper), time, block)
      token.phase = PHASE_INSIDERS
      this.agenda.add(token, time + chain.spec.blockMs * prng.between(1, 2))
      return
    }
    if (token.phase === PHASE_INSIDERS) {
      // Two or three blocks after launch: wallets close to the creator.
      const block = chain.blockAt(time)
      const count = prng.chance(0.45) ? prng.between(1, 3) : 0
      for (let i = 0; i < count; i++) this.buyInOwnTransaction(token, this.distinctBuyer(token, Population.insider), time, block)
      token.phase = PHASE_TRADING
    } else if (prng.float() < transferShare) {
      this.transferTokens(token, time)
    } else {
      this.tradeOnce(token, time)
    }
    const decay = Math.exp(-(time - token.launchTime) / token.fate.decayMs)
    const rate = token.initialRate * (decay + floorRateShare)
    const next = chain.ceilToBlock(time + prng.exponential(1 / rate))
    if (next > token.deathTime) {
      this.liveTokens--
      return
    }
    this.agenda.add(token, next)
  }

  private tradeOnce(token: SimToken, time: number): void {
    const prng = this.prng
    const chain = token.chain
    const fate = token.fate
    let buyShare: number
    if (token.graduated) buyShare = 0.5
    else {
      const decay = Math.exp(-(time - token.launchTime) / fate.decayMs)
      buyShare = fate.buyShareEnd + (fate.buyShareStart - fate.buyShareEnd) * decay
    }
    const holders = token.holders
    const block = chain.blockAt(time)
    if (holders.size === 0 || prng.float() < buyShare) {
      const buyer = this.pickBuyer(token)
      this.buyInOwnTransaction(token, buyer, time, block)
      return
    }
    const index = prng.int(holders.size)
    const seller = holders.wallets[index]!
    const balance = holders.amounts[index]!
    // A third of sells close the position; the rest take part of it.
    const amount = prng.chance(0.35) ? balance : (balance * BigInt(prng.between(100, 900))) / 1000n
    if (amount <= 0n) return
    const txIndex = chain.nextTxIndex(block, prng)
    this.sell(token, seller, amount, time, block, chain.transactionHash(prng), txIndex, 0)
  }

  private pickBuyer(token: SimToken): Wallet {
    const prng = this.prng
    if (token.mayhem && prng.chance(0.25)) return this.wallet(token.chain.family, Population.mayhemAgent)
    // Returning traders give positions history: repeat cycles after selling out, top-ups.
    if (token.recentTraders.length > 0 && prng.chance(0.2)) return prng.pick(token.recentTraders)
    if (prng.chance(0.01)) return token.creator
    return this.wallet(token.chain.family, tradingPopulations[pickWeighted(prng, tradingWeights)]!.population)
  }

  /** A wallet of `population` that does not yet hold the token (a few tries; bundles need distinct wallets). */
  private distinctBuyer(token: SimToken, population: Population): Wallet {
    let wallet = this.wallet(token.chain.family, population)
    for (let tries = 0; tries < 4 && token.holders.holds(wallet); tries++) wallet = this.wallet(token.chain.family, population)
    return wallet
  }

  private sizeUsd(wallet: Wallet): number {
    const spec = populationSpecs[wallet.population]!
    return Math.min(spec.medianUsd * 40, Math.max(1, this.prng.logNormal(spec.medianUsd, spec.sizeSigma)))
  }

  private buyInOwnTransaction(token: SimToken, buyer: Wallet, time: number, block: number): void {
    const chain = token.chain
    const txIndex = chain.nextTxIndex(block, this.prng)
    this.buy(token, buyer, this.sizeUsd(buyer), time, block, chain.transactionHash(this.prng), txIndex, 0)
  }

  private buy(token: SimToken, buyer: Wallet, usd: number, time: number, block: number, hash: string, txIndex: number, instruction: number): void {
    const chain = token.chain
    const quote = token.quote
    const quoteIn = quote.isNative ? chain.usdToNative(usd) : BigInt(Math.round(usd * 1e6)) * 10n ** BigInt(quote.decimals - 6)
    const trade = this.trade
    if (token.onCurve) trade.curveBuy(token.reserves, quoteIn)
    else trade.poolBuy(token.reserves, quoteIn, token.dexFeeBps)
    if (trade.tokens <= 0n) return
    this.introduce(buyer, chain, time)
    token.holders.add(buyer, trade.tokens)
    token.rememberTrader(buyer)
    this.emitSwap(token, buyer, "buy", trade.tokens, trade.quote, time, block, hash, txIndex, instruction)
    this.afterSwap(token, time, block)
  }

  private sell(token: SimToken, seller: Wallet, amount: bigint, time: number, block: number, hash: string, txIndex: number, instruction: number): void {
    const trade = this.trade
    const reserves = token.reserves
    const { tokens, quote, realTokens, realQuote } = reserves
    if (token.onCurve) trade.curveSell(reserves, amount)
    else trade.poolSell(reserves, amount, token.dexFeeBps)
    if (this.nativeValue(token, trade.quote) === 0n) {
      // A sale worth nothing is no trade (the engine refuses a swap of no native value): undone.
      reserves.tokens = tokens
      reserves.quote = quote
      reserves.realTokens = realTokens
      reserves.realQuote = realQuote
      return
    }
    this.introduce(seller, token.chain, time)
    token.holders.subtract(seller, amount)
    this.emitSwap(token, seller, "sell", amount, trade.quote, time, block, hash, txIndex, instruction)
    this.afterSwap(token, time, block)
  }

  /** A quote amount's value in the chain's native base units. */
  private nativeValue(token: SimToken, quoteAmount: bigint): bigint {
    return token.quote.isNative ? quoteAmount : token.chain.stableToNative(quoteAmount, token.quote)
  }

  private emitSwap(
    token: SimToken,
    trader: Wallet,
    side: "buy" | "sell",
    tokenAmount: bigint,
    quoteAmount: bigint,
    time: number,
    block: number,
    hash: string,
    txIndex: number,
    instruction: number
  ): void {
    const chain = token.chain
    const quote = token.quote
    const nativeAmount = this.nativeValue(token, quoteAmount)
    const feeSlot = this.prng.nextUint32()
    const swap: Events.Swap = {
      type: "swap",
      id: `${chain.name}:${hash}:${instruction}`,
      timestamp: time,
      chain: chain.name,
      token: token.address,
      pool: token.pool,
      dex: token.dex,
      trader: trader.address,
      transactionHash: hash,
      block,
      indexInBlock: txIndex * 1000 + instruction,
      side,
      tokenAmount,
      quoteAmount,
      quoteAddress: quote.address,
      quoteSymbol: quote.symbol,
      quoteDecimals: quote.decimals,
      nativeAmount,
      nativeUsd: chain.usdText,
      fees: {
        transaction: chain.transactionFees[feeSlot & 7]!,
        validator: (paysTopPriority[trader.population] ? chain.botPriorityFees : chain.priorityFees)[(feeSlot >>> 3) & 7]!,
        platform: (nativeAmount * token.platformFeeBps) / 10_000n,
        dex: (nativeAmount * token.dexFeeBps) / 10_000n
      },
      terminal: trader.terminal,
      // The pool as this swap left it (its reserves are already updated).
      poolAfter: {
        liquidityNative: this.liquidityOf(token),
        bondingCurvePct: token.onCurve ? formatProgress(progressUnits(token.reserves.realTokens, token.launchpad.curve!.curveTokens)) : null
      }
    }
    this.out.push(swap)
  }

  /** A swap that emptied the curve graduates the token (same block). */
  private afterSwap(token: SimToken, time: number, block: number): void {
    if (token.onCurve && token.reserves.realTokens === 0n) this.graduate(token, time, block)
  }

  /** Liquidity = twice the quote side of the pool (virtual reserves on a curve), in native units. */
  private liquidityOf(token: SimToken): bigint {
    const quoteSide = token.reserves.quote * 2n
    return token.quote.isNative ? quoteSide : token.chain.stableToNative(quoteSide, token.quote)
  }

  /** A pool's liquidity outside a swap: a new pool seeded at launch or by a graduation. */
  private announceLiquidity(token: SimToken, time: number, block: number, hash: string, instruction: number): void {
    const chain = token.chain
    const quote = token.quote
    const event: Events.LiquidityChanged = {
      type: "liquidityChanged",
      id: `${chain.name}:${hash}:${instruction}`,
      timestamp: time,
      chain: chain.name,
      token: token.address,
      pool: token.pool,
      dex: token.dex,
      anchorAddress: quote.address,
      anchorSymbol: quote.symbol,
      liquidityNative: this.liquidityOf(token),
      nativeUsd: chain.usdText,
      block
    }
    this.out.push(event)
  }

  /** The curve is empty: migrate its raised quote and the reserved tokens into a new pool. */
  private graduate(token: SimToken, time: number, block: number): void {
    const prng = this.prng
    const chain = token.chain
    const spec = token.launchpad
    const curve = spec.curve!
    chain.nextTxIndex(block, prng)
    const hash = chain.transactionHash(prng)
    const raised = token.reserves.realQuote
    token.onCurve = false
    token.graduated = true
    token.pool = chain.address(prng)
    token.dex = spec.poolDex
    // The migration keeps a fee (pump.fun: about 6%); the rest seeds the pool with the reserved tokens.
    const reserves = token.reserves
    reserves.tokens = curve.supply - curve.curveTokens
    reserves.quote = (raised * 94n) / 100n
    reserves.realTokens = reserves.tokens
    reserves.realQuote = reserves.quote
    token.platformFeeBps = spec.name === "pumpfun" ? 5n : 0n
    token.dexFeeBps = spec.poolFeeBps
    const graduated: Events.Graduated = {
      type: "graduated",
      id: `${chain.name}:${hash}:0`,
      timestamp: time,
      chain: chain.name,
      token: token.address,
      pool: token.pool,
      dex: token.dex,
      transactionHash: hash
    }
    this.out.push(graduated)
    this.announceLiquidity(token, time, block, hash, 1)
    const rescored: Events.SecurityScored = {
      type: "securityScored",
      id: this.offChainId("securityScored", chain.name, token.address),
      timestamp: time + prng.between(5 * second, 30 * second),
      chain: chain.name,
      token: token.address,
      mintDisabled: true,
      transferBlockable: false,
      lpBurntPct: "100",
      transferFeeBps: 0
    }
    this.later(rescored)
  }

  /** Airdrops from the creator, wallet-to-wallet moves and burns; never more than the sender holds. */
  private transferTokens(token: SimToken, time: number): void {
    const prng = this.prng
    const chain = token.chain
    const holders = token.holders
    if (holders.size === 0) return
    const block = chain.blockAt(time)
    chain.nextTxIndex(block, prng)
    const hash = chain.transactionHash(prng)
    const roll = prng.float()
    const creatorBalance = holders.balanceOf(token.creator)
    if (roll < 0.4 && creatorBalance > 0n) {
      const recipients = prng.between(1, 4)
      let left = creatorBalance
      for (let i = 0; i < recipients; i++) {
        const amount = (left * BigInt(prng.between(20, 200))) / 1000n
        if (amount <= 0n) break
        left -= amount
        this.moveTokens(token, token.creator, this.wallet(chain.family, prng.chance(0.5) ? Population.regular : Population.fresh), amount, time, block, hash, i)
      }
      return
    }
    const index = prng.int(holders.size)
    const from = holders.wallets[index]!
    const balance = holders.amounts[index]!
    if (roll < 0.9) {
      const amount = prng.chance(0.3) ? balance : (balance * BigInt(prng.between(100, 900))) / 1000n
      if (amount > 0n) this.moveTokens(token, from, this.wallet(chain.family, prng.chance(0.5) ? Population.regular : Population.fresh), amount, time, block, hash, 0)
      return
    }
    const burnt = (balance * BigInt(prng.between(100, 1000))) / 1000n
    if (burnt > 0n) this.moveTokens(token, from, null, burnt, time, block, hash, 0)
  }

  private moveTokens(token: SimToken, from: Wallet, to: Wallet | null, amount: bigint, time: number, block: number, hash: string, instruction: number): void {
    const chain = token.chain
    if (to === from) return
    token.holders.subtract(from, amount)
    if (to !== null) {
      this.introduce(to, chain, time)
      token.holders.add(to, amount)
    }
    const transfer: Events.Transfer = {
      type: "transfer",
      id: `${chain.name}:${hash}:${instruction}`,
      timestamp: time,
      chain: chain.name,
      token: token.address,
      from: from.address,
      to: to === null ? null : to.address,
      amount,
      transactionHash: hash,
      block
    }
    this.out.push(transfer)
  }
}
