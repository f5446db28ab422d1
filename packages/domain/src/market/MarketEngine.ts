/**
 * The market engine: folds market events, in order, into every object the API serves — tokens,
 * trades, candles, holders, positions, discovery candidates — and records what changed so that
 * readers and streams can encode each changed object once.
 *
 * Deterministic: the same events (and the same `advanceTo` calls) in the same order give the same
 * state. Pure: no I/O, no clock (time is the events' timestamps and `advanceTo`'s argument).
 */
import type { Chain } from "../Chain.js"
import { canonicalAddress, chains } from "../Chain.js"
import type * as Events from "../events/MarketEvent.js"
import type { MarketEvent } from "../events/MarketEvent.js"
import { subjectTokenOf } from "../events/MarketEvent.js"
import * as Fixed from "../Fixed.js"
import type { IdentityFeed } from "../wire/Trade.js"
import * as Positions from "./Positions.js"
import { nativeUsdValue, nativeValue, TokenBook, TotalKind } from "./TokenBook.js"
import { ReadRecords, spellTradeId, stableKeyOf, TradeCodes, tradeIdHalves, TradeRecord, TradeRing } from "./TradeFeed.js"
import { formRejection, magnitudeRejection } from "./EventChecks.js"
import type { Rejection } from "./EventChecks.js"
import type { BuyContext } from "./Holders.js"
import { Interner } from "./Interned.js"
import { fundingOf, fundingWire, supersedesFunding } from "./Funding.js"
import { WalletDirectory, type WalletRecord } from "./Wallets.js"

export interface EngineOptions {
  /** How long raw trades stay in each token's tape (stats windows need 24 hours). */
  readonly tapeRetainMs: number
  /**
   * Newest trades kept in memory per token for trade pages; when a token's feed is full, its
   * oldest half leaves memory in one block (`EngineChanges.leftMemory`) for the trade archive.
   */
  readonly recentTradesPerToken: number
  /** Newest trades kept in memory per identity feed. */
  readonly identityFeedSize: number
}

export const defaultEngineOptions: EngineOptions = {
  tapeRetainMs: 24 * 3_600_000,
  recentTradesPerToken: 50,
  identityFeedSize: 20_000
}

/** One wallet's position in one token, with what its wire object needs. */
export interface PositionEntry {
  readonly state: Positions.PositionState
  readonly token: TokenBook
  readonly wallet: WalletRecord
}

/** What changed since the last `drainChanges`. */
export interface EngineChanges {
  readonly tokens: ReadonlyArray<TokenBook>
  readonly trades: ReadonlyArray<TradeRecord>
  readonly positions: ReadonlyArray<PositionEntry>
  /** Token trades memory let go of, in the order they left (ascending `leftAt`). */
  readonly leftMemory: ReadonlyArray<TradesLeftMemory>
}

/**
 * Trades of one token that left the engine's memory together (a block of its feed's oldest, or
 * one late trade older than all it held): from then on only the trade archive has them.
 */
export interface TradesLeftMemory {
  readonly chain: Chain
  readonly token: string
  /** The seq of the trade whose arrival moved them out: strictly increasing across all of them. */
  readonly leftAt: number
  /** One trade that arrived older than every trade its full feed held (it may sort among earlier blocks). */
  readonly late: boolean
  /** Newest first. */
  readonly trades: ReadonlyArray<TradeRecord>
}


const stablecoinSymbols = new Set(["USDC", "USDT", "DAI", "USD1", "PYUSD", "FDUSD", "USDE"])

/** Holder flags as trade flags, in a fixed order. */
const identityLabels: ReadonlyArray<IdentityFeed> = ["kol", "partnerscan"]

const MAX_INTERNED = 4_096

/**
 * One engine's trade flag lists, interned: equal contents share one frozen array, so a trade record
 * holds a reference instead of its own list. Keyed by the holder-flag list (itself one shared
 * frozen list per flag set, Holders.flagListOf), the dev mark and the wallet's labels.
 */
export class TradeFlagLists {
  private readonly withDev = new Map<ReadonlyArray<string>, ReadonlyArray<string>>()
  private readonly labelled = new Map<string, ReadonlyArray<string>>()

  /** The trade's flags: the holder's, then "dev" for the token's creator, then the wallet's labels. */
  of(holderFlags: ReadonlyArray<string>, isDev: boolean, labels: ReadonlyArray<string>): ReadonlyArray<string> {
    if (labels.length === 0) {
      if (!isDev) return holderFlags
      let list = this.withDev.get(holderFlags)
      if (list === undefined) {
        list = Object.freeze([...holderFlags, "dev"])
        this.withDev.set(holderFlags, list)
      }
      return list
    }
    const flags: Array<string> = [...holderFlags]
    if (isDev) flags.push("dev")
    for (const label of labels) if (!flags.includes(label)) flags.push(label)
    const key = flags.join("\u0000")
    let list = this.labelled.get(key)
    if (list === undefined) {
      list = Object.freeze(flags)
      // Labels come from events: past a bound, new combinations are kept per trade, not interned.
      if (this.labelled.size < MAX_INTERNED) this.labelled.set(key, list)
    }
    return list
  }
}

/**
 * Trade records kept for reuse by pages (about 1.5 KB each once encoded): the newest trades of the
 * tokens and feeds being read, many times over the newest 50 of a busy token.
 */
const READ_RECORDS = 8_192

/**
 * How long before its token's launch an event of the token may be dated: an indexer's launch and
 * first swaps can come from two sources with two clocks (docs/market-events.md), as ingest allows
 * events up to a minute in the future for the same reason.
 */
export const LAUNCH_SKEW_MS = 60_000

/** A token's launch accepted but not folded yet (ingest's batches in flight), as `MarketEngine.check` needs it. */
export interface LaunchAhead {
  readonly id: string
  readonly timestamp: number
}

export class MarketEngine {
  private readonly tokens = new Map<string, TokenBook>()
  private readonly wallets = new WalletDirectory()
  private positionCount = 0
  private readonly tokensByCreator = new Map<string, Array<TokenBook>>()
  /** Tokens by chain, then by canonical address: the per-event lookup builds no key string. */
  private readonly tokensByChain = new Map<Chain, Map<string, TokenBook>>()
  /** The codes this engine's trade feeds store terminals and flag lists as. */
  private readonly tradeCodes = new TradeCodes()
  private readonly tradeFlagLists = new TradeFlagLists()
  private readonly identityFeeds: Record<IdentityFeed, TradeRing>
  /**
   * Records the pages built from ring rows, handed out again to the next reads (ReadRecords). A
   * cache, not state: snapshots leave it out and a restored engine starts a new one.
   */
  private readRecords: ReadRecords | undefined = undefined
  /**
   * This engine's canonical copies of short repeated texts (Interned.ts), made on first use. Values
   * only, deciding nothing: snapshots leave it out and a restored engine starts an empty one.
   */
  private interned: Interner | undefined = undefined
  private readonly nativeUsd = new Map<Chain, Fixed.Fixed>()
  /** Tokens with trades inside the 24-hour window: the only ones whose stats move with time. */
  private readonly activeTokens = new Set<TokenBook>()
  private seq = 0
  private clock = 0
  private changedTokens = new Set<TokenBook>()
  private newTrades: Array<TradeRecord> = []
  private leftMemory: Array<TradesLeftMemory> = []
  /**
   * Positions changed since the last drain, as (token, slot, wallet) triples, each once per round
   * (the wallet kept from the change: looking it up again by address at the drain costs a probe
   * of a map of every wallet per changed position).
   */
  private changedPositionTokens: Array<TokenBook> = []
  private changedPositionSlots: Array<number> = []
  private changedPositionWallets: Array<WalletRecord> = []
  /** The change round: bumped by every drain (PositionBook.markChanged). */
  private changeRound = 1
  private eventCount = 0
  private tradeCount = 0
  /** Scratch of each swap's holder-book call (the book reads it and keeps nothing). */
  private readonly swapBuyContext: { -readonly [K in keyof BuyContext]: BuyContext[K] } = {
    block: 0,
    timestamp: 0,
    walletFundedAt: null,
    fundedByCex: false,
    terminal: null,
    phishing: false
  }
  /** Scratch of each swap's position fill (the apply functions read it and keep nothing). */
  private readonly swapFill: { -readonly [K in keyof Positions.Fill]: Positions.Fill[K] } = {
    tokenAmount: 0n,
    valueNative: 0n,
    valueUsd: 0n,
    feesNative: 0n,
    feesUsd: 0n,
    marketCapNative: 0n,
    marketCapUsd: 0n,
    timestamp: 0
  }
  /** Scratch of each swap's trade id halves (`tradeIdHalves`). */
  private readonly swapIdHalves = new Float64Array(2)

  constructor(readonly options: EngineOptions = defaultEngineOptions) {
    this.identityFeeds = {
      kol: new TradeRing(this.tradeCodes, options.identityFeedSize),
      partnerscan: new TradeRing(this.tradeCodes, options.identityFeedSize)
    }
  }

  /** The engine's clock: the latest event time or `advanceTo` argument seen. */
  get now(): number {
    return this.clock
  }

  get stats() {
    return {
      tokens: this.tokens.size,
      wallets: this.wallets.size,
      positions: this.positionCount,
      events: this.eventCount,
      trades: this.tradeCount
    }
  }

  /** How many distinct short texts this engine interns (at most `maxInterned`; none yet after a restore). */
  get internedTexts(): number {
    return this.interned?.size ?? 0
  }

  // --- folding ----------------------------------------------------------------------------------

  /**
   * Folds one event; returns why it was not applied, or undefined. The clock moves to the event's
   * time, but not past `clockLimit` (the service's clock, when the caller has one): an event dated
   * ahead of it (ingest takes up to a minute of an indexer's clock skew) is its own token's
   * present, not every token's: unlimited, one launch dated 55 s ahead would end every other
   * token's trailing windows 55 s early and date them in the future. Without a limit (a replay of
   * the log, an embedder), event times are the clock.
   */
  apply(event: MarketEvent, clockLimit: number = Infinity): Rejection | undefined {
    const at = event.timestamp
    if (at > this.clock) this.clock = at <= clockLimit ? at : Math.max(this.clock, clockLimit)
    const rejection = this.fold(event)
    if (rejection === undefined) this.eventCount++
    return rejection
  }

  /**
   * Checks an event against the current state without applying it (for ingest). `launchAhead`
   * names the launch of a token (chain, canonical address) by an event accepted before this one
   * but not folded yet (earlier in the same batch, or a batch in flight): that launch event's id
   * and time. A token launched ahead is not unknown to the events after its launch, and a second
   * launch of it with another id is refused; every other check applies to them all the same. A
   * token's event dated more than `LAUNCH_SKEW_MS` before its launch is refused (nothing happens to
   * a token before it exists: a swap dated 1970 gave a position an `updatedAt` decades before its
   * `openedAt`); within it, it is clock skew between an indexer's sources and is taken.
   */
  check(event: MarketEvent, launchAhead?: (chain: Chain, address: string) => LaunchAhead | undefined): Rejection | undefined {
    const malformed = formRejection(event)
    if (malformed !== undefined) return malformed
    const beyond = this.magnitudeRejection(event)
    if (beyond !== undefined) return beyond
    if (event.type === "tokenLaunched") {
      const address = canonicalAddress(event.chain, event.token)
      const launched = this.tokenOn(event.chain, address)
      // the same launch again (same id) is a repeat the log drops: not refused
      const other = launched !== undefined
        ? launched.launchIdKey !== stableKeyOf(event.id)
        : (launchAhead?.(event.chain, address)?.id ?? event.id) !== event.id
      return other ? { _tag: "AlreadyLaunched", chain: event.chain, token: address, byAnotherEvent: true } : undefined
    }
    const subject = subjectTokenOf(event)
    if (subject === undefined) return undefined
    const launchedAt = this.tokenOn(subject.chain, subject.token)?.createdAt ??
      launchAhead?.(subject.chain, canonicalAddress(subject.chain, subject.token))?.timestamp
    if (launchedAt === undefined) return { _tag: "UnknownToken", chain: subject.chain, token: subject.token }
    return event.timestamp < launchedAt - LAUNCH_SKEW_MS ? { _tag: "BeforeLaunch", launchedAt, skewMs: LAUNCH_SKEW_MS } : undefined
  }

  /** Moves the clock to `now`, expiring trades out of the stats windows of active tokens. */
  advanceTo(now: number): void {
    if (now > this.clock) this.clock = now
    for (const token of this.activeTokens) {
      if (token.tape.advanceTo(this.clock)) {
        // changed when its trades left their windows, not when the clock noticed: a restart that
        // replays the log in one sweep gives the same `updatedAt` as the live ticks did
        token.touch(token.tape.expiredAt)
        this.changedTokens.add(token)
      }
      const last = token.tape.lastTradeAt()
      if (last === undefined || last <= this.clock - 24 * 3_600_000) this.activeTokens.delete(token)
    }
  }

  /**
   * Hands over the trades made and the trades that left memory since the previous drain, and
   * nothing else: changed tokens and positions keep accumulating (each once) until `drainChanges`.
   * For a big batch told in slices: its trades early, its tokens and positions once.
   */
  drainTrades(): EngineChanges {
    const changes: EngineChanges = { tokens: [], trades: this.newTrades, positions: [], leftMemory: this.leftMemory }
    this.newTrades = []
    this.leftMemory = []
    return changes
  }

  /** Hands over what changed since the previous call. */
  drainChanges(): EngineChanges {
    const positions = new Array<PositionEntry>(this.changedPositionSlots.length)
    for (let i = 0; i < positions.length; i++) {
      const token = this.changedPositionTokens[i]!
      positions[i] = { state: token.positions.at(this.changedPositionSlots[i]!), token, wallet: this.changedPositionWallets[i]! }
    }
    for (const token of this.changedTokens) token.publish(this.clock)
    const changes: EngineChanges = { tokens: [...this.changedTokens], trades: this.newTrades, positions, leftMemory: this.leftMemory }
    this.leftMemory = []
    this.changedTokens = new Set()
    this.newTrades = []
    this.changedPositionTokens = []
    this.changedPositionSlots = []
    this.changedPositionWallets = []
    this.changeRound++
    return changes
  }

  private fold(e: MarketEvent): Rejection | undefined {
    const beyond = this.magnitudeRejection(e)
    if (beyond !== undefined) return beyond
    switch (e.type) {
      case "tokenLaunched":
        return this.onLaunch(e)
      case "swap":
        return this.onSwap(e)
      case "transfer":
        return this.onTransfer(e)
      case "metadataResolved":
        return this.withToken(e.chain, e.token, (token) => {
          token.metadata = e.metadata
        }, e.timestamp)
      case "walletFunded":
        return this.onWalletFunded(e)
      case "curveProgressed":
        // a token without a curve, or graduated, has no progress to record: nothing changes
        return this.withToken(e.chain, e.token, (token) => token.progressCurve(Fixed.unsafeParse(e.bondingCurvePct), e.timestamp), e.timestamp)
      case "graduated":
        return this.withToken(e.chain, e.token, (token) => {
          if (token.graduatedAt !== null) return false // graduated once: a repeat changes nothing
          token.graduatedAt = e.timestamp
          token.graduatedToDex = e.dex
          if (token.hasCurve) token.recordCurve(Fixed.fromInt(100), e.timestamp)
          const deepest = token.deepestPool()
          const migratedTo = token.pool(e.pool, e.dex, deepest?.anchorAddress ?? "", deepest?.anchorSymbol ?? "", this.interner())
          token.graduatedToPool = migratedTo.address
          // The migration moves the curve's reserves into the new pool: the curve holds nothing
          // from now on (its last reading, on virtual reserves, would still count as liquidity and
          // keep it the deepest pool). A curve is a pool a swap reported curve progress on, or one
          // on the launchpad's own venue.
          for (const pool of token.pools) {
            if (pool !== migratedTo && (pool.isCurve || (token.launchpad !== null && pool.dex === token.launchpad))) {
              token.setPoolLiquidity(pool, pool.anchorAddress, pool.anchorSymbol, 0n, 0n, this.interner())
            }
          }
        }, e.timestamp)
      case "liquidityChanged":
        return this.withToken(e.chain, e.token, (token) => {
          const interner = this.interner()
          const pool = token.pool(e.pool, e.dex, e.anchorAddress, e.anchorSymbol, interner)
          token.setPoolLiquidity(pool, e.anchorAddress, e.anchorSymbol, nativeValue(e.chain, e.liquidityNative), this.parseUsd(e.nativeUsd), interner)
          if (e.block !== null) token.holders.poolSeenAt(e.block)
        }, e.timestamp)
      case "securityScored":
        return this.withToken(e.chain, e.token, (token) => {
          token.security = {
            mintDisabled: e.mintDisabled,
            transferBlockable: e.transferBlockable,
            lpBurntPct: e.lpBurntPct === null ? null : Fixed.format(Fixed.unsafeParse(e.lpBurntPct)),
            transferFeeBps: e.transferFeeBps
          }
        }, e.timestamp)
      case "tokenListed":
        return this.withToken(e.chain, e.token, (token) => {
          const listing = { platform: e.platform, isPaid: e.isPaid, paidAt: e.paidAt }
          token.platforms = [...token.platforms.filter((p) => p.platform !== e.platform), listing]
        }, e.timestamp)
      case "walletLabeled":
        return this.onWalletLabeled(e)
      case "identityResolved": {
        const wallet = this.wallets.getOrCreate(e.chain, canonicalAddress(e.chain, e.wallet))
        wallet.setIdentity({
          source: e.source,
          handle: e.handle,
          displayName: e.displayName,
          avatar: e.avatar,
          twitter: e.twitter,
          telegram: e.telegram,
          farcaster: e.farcaster
        }, this.interner())
        return undefined
      }
      case "nativePrice":
        this.nativeUsd.set(e.chain, this.parseUsd(e.usd))
        return undefined
    }
  }

  /** `magnitudeRejection`, with the event's native USD price parsed once (`usdOf`) for the check and the fold. */
  private magnitudeRejection(e: MarketEvent): Rejection | undefined {
    const text = e.type === "swap" || e.type === "liquidityChanged" ? e.nativeUsd : e.type === "nativePrice" ? e.usd : undefined
    return magnitudeRejection(e, text === undefined ? undefined : this.usdOf(text))
  }

  private lastUsdText = ""
  private lastUsd: Fixed.Fixed = 0n

  /** USD prices repeat across consecutive swaps of a chain; parse each distinct text once (undefined: not a decimal). */
  private usdOf(text: string): Fixed.Fixed | undefined {
    if (text === this.lastUsdText) return this.lastUsd
    const usd = Fixed.parse(text)
    if (usd !== undefined) {
      this.lastUsd = usd
      this.lastUsdText = text
    }
    return usd
  }

  /** `usdOf` of a text the event's checks already accepted. */
  private parseUsd(text: string): Fixed.Fixed {
    return this.usdOf(text) ?? Fixed.unsafeParse(text)
  }

  /** Applies `change` to the token; it returns false when the event changed nothing (no touch then). */
  private withToken(chain: Chain, address: string, change: (token: TokenBook) => boolean | void, at: number): Rejection | undefined {
    const token = this.tokenOn(chain, address)
    if (token === undefined) return { _tag: "UnknownToken", chain, token: address }
    if (change(token) !== false) this.touch(token, at)
    return undefined
  }

  /**
   * The token changed at `at`. Its windows first move to `at` (trades that left them by then leave
   * now), so the state dated `at` is the state at `at` whichever clock ticks came before: a restart
   * replaying the log without ticks dates every change as the live service did.
   */
  private touch(token: TokenBook, at: number): void {
    token.tape.advanceTo(at)
    token.touch(at)
    this.changedTokens.add(token)
  }

  private onLaunch(e: Events.TokenLaunched): Rejection | undefined {
    const address = canonicalAddress(e.chain, e.token)
    const key = `${e.chain}:${address}`
    if (this.tokens.has(key)) return { _tag: "AlreadyLaunched", chain: e.chain, token: address, byAnotherEvent: false }
    const creator = canonicalAddress(e.chain, e.creator)
    const token = new TokenBook(
      e.chain,
      address,
      creator,
      e.decimals,
      e.supply,
      e.launchpad,
      e.hasCurve,
      e.block,
      e.timestamp,
      e.annotations,
      this.options.tapeRetainMs
    )
    if (e.metadata !== null) token.metadata = e.metadata
    token.launchIdKey = stableKeyOf(e.id)
    const creatorWallet = this.wallets.get(e.chain, creator)
    if (creatorWallet !== undefined && creatorWallet.funding.status === "resolved") token.devFunding = creatorWallet.funding
    this.tokens.set(key, token)
    let onChain = this.tokensByChain.get(e.chain)
    if (onChain === undefined) {
      onChain = new Map()
      this.tokensByChain.set(e.chain, onChain)
    }
    onChain.set(address, token)
    const creatorKey = `${e.chain}:${creator}`
    const created = this.tokensByCreator.get(creatorKey)
    if (created === undefined) this.tokensByCreator.set(creatorKey, [token])
    else created.push(token)
    // New: its updatedAt is its creation time.
    this.changedTokens.add(token)
    return undefined
  }

  private onSwap(e: Events.Swap): Rejection | undefined {
    const chain = e.chain
    const token = this.tokenOn(chain, e.token)
    if (token === undefined) return { _tag: "UnknownToken", chain, token: e.token }
    const wallet = this.wallets.getOrCreate(chain, canonicalAddress(chain, e.trader))
    // The wallet's copy of the address: one string per wallet, shared by its trades and positions.
    const trader = wallet.address
    const nativeUsd = this.parseUsd(e.nativeUsd)
    const isBuy = e.side === "buy"
    const timestamp = e.timestamp
    const tokenAmount = e.tokenAmount
    const nativeAmount = e.nativeAmount
    const valueNative = nativeValue(chain, nativeAmount)
    const valueUsd = nativeUsdValue(chain, nativeAmount, nativeUsd)
    const amount = Fixed.fromBaseUnits(tokenAmount, token.decimals)
    const priceNative = Fixed.div(valueNative, amount)
    // USD figures from the native value and the rate, rounded once (not from valueUsd, itself rounded)
    const priceUsd = Fixed.mulDiv(valueNative, nativeUsd, amount)
    const marketCapNative = token.marketCapAt(valueNative, amount)
    const marketCapUsd = token.marketCapUsdAt(valueNative, nativeUsd, amount)

    // A late swap (older than the token's latest trade) is history: it adds its volume, fees and
    // trade, and can set a high, but the price and the pool's state stay the latest swap's.
    const latest = token.tape.lastTradeAt()
    const isLate = latest !== undefined && timestamp < latest
    const interner = this.interner()
    const pool = token.pool(e.pool, e.dex, e.quoteAddress, e.quoteSymbol, interner)
    const after = e.poolAfter
    if (after !== null && after.bondingCurvePct !== null) pool.isCurve = true
    if (after !== null && !isLate) {
      // The pool as the swap left it: what a liquidityChanged and a curveProgressed after it would say.
      token.setPoolLiquidity(pool, e.quoteAddress, e.quoteSymbol, nativeValue(chain, after.liquidityNative), nativeUsd, interner)
      if (after.bondingCurvePct !== null) token.progressCurve(Fixed.unsafeParse(after.bondingCurvePct), timestamp)
    }
    // Fee sums: native in base units, USD valued per swap; zero terms (common) cost nothing.
    const fees = e.fees
    const feeTx = fees.transaction
    const feeValidator = fees.validator
    const feePlatform = fees.platform
    const feeDex = fees.dex
    if (feeTx !== 0n) token.addTotal(TotalKind.feeTransaction, feeTx, nativeUsdValue(chain, feeTx, nativeUsd))
    if (feeValidator !== 0n) token.addTotal(TotalKind.feeValidator, feeValidator, nativeUsdValue(chain, feeValidator, nativeUsd))
    if (feePlatform !== 0n) token.addTotal(TotalKind.feePlatform, feePlatform, nativeUsdValue(chain, feePlatform, nativeUsd))
    if (feeDex !== 0n) token.addTotal(TotalKind.feeDex, feeDex, nativeUsdValue(chain, feeDex, nativeUsd))
    token.addTotal(TotalKind.volume, nativeAmount, valueUsd)

    const context = this.swapBuyContext
    context.block = e.block
    context.timestamp = timestamp
    context.walletFundedAt = wallet.fundedAt
    context.fundedByCex = wallet.fundedByCex
    context.terminal = e.terminal
    context.phishing = wallet.labels.length !== 0 && wallet.hasLabel("phishing")
    const holderFlags = token.holders.recordTrade(trader, isBuy ? "buy" : "sell", context)
    if (isBuy) token.holders.credit(trader, tokenAmount)
    else token.holders.debit(trader, tokenAmount)

    token.tape.append(timestamp, isBuy ? "buy" : "sell", priceNative, priceUsd, marketCapNative, marketCapUsd, valueNative, valueUsd)
    token.recordPrice(valueNative, nativeUsd, amount, priceNative, priceUsd, marketCapNative, marketCapUsd, timestamp, !isLate)
    this.activeTokens.add(token)
    // changed when it traded, or, told after the clock passed it, when it left the windows it is out of by now
    const leftWindowsAt = token.tape.leftWindowsBy(timestamp)
    this.touch(token, leftWindowsAt > timestamp ? leftWindowsAt : timestamp)

    // the wallet's position
    const position = this.positionOf(token, wallet, timestamp)
    // Explicit charges the trader paid; the dex fee is already inside the execution price.
    const feeUnits = feeTx + feeValidator + feePlatform
    const fill = this.swapFill
    fill.tokenAmount = tokenAmount
    fill.valueNative = valueNative
    fill.valueUsd = valueUsd
    fill.feesNative = feeUnits === 0n ? 0n : nativeValue(chain, feeUnits)
    fill.feesUsd = feeUnits === 0n ? 0n : nativeUsdValue(chain, feeUnits, nativeUsd)
    fill.marketCapNative = marketCapNative
    fill.marketCapUsd = marketCapUsd
    fill.timestamp = timestamp
    if (isBuy) Positions.applyBuy(position, fill)
    else Positions.applySell(position, fill)
    this.positionChanged(token, position.slot, wallet)

    // the trade object: the swap's inputs and shared references; its figures are derived on read
    const halves = this.swapIdHalves
    tradeIdHalves(e.id, halves)
    const idA = halves[0]!
    const idB = halves[1]!
    const record = new TradeRecord(
      ++this.seq,
      spellTradeId(idA, idB),
      token.tradeContext,
      trader,
      e.transactionHash,
      isBuy ? "buy" : "sell",
      tokenAmount,
      nativeAmount,
      nativeUsd,
      this.tradeFlagLists.of(holderFlags, trader === token.creator, wallet.labels),
      e.terminal === null ? null : interner.of(e.terminal),
      wallet.identities,
      timestamp,
      idA,
      idB
    )
    let ring = token.recentTrades
    if (ring === undefined) {
      const capacity = this.options.recentTradesPerToken
      ring = new TradeRing(this.tradeCodes, capacity, undefined, Math.max(1, capacity >> 1))
      token.recentTrades = ring
    }
    const left = ring.push(record)
    if (left !== undefined) {
      this.leftMemory.push({ chain, token: token.address, leftAt: record.seq, late: left.late, trades: left.trades })
    }
    if (wallet.labels.length !== 0 || wallet.identities.length !== 0) {
      for (const feed of identityLabels) if (this.inFeed(wallet, feed)) this.identityFeeds[feed].push(record)
    }
    this.newTrades.push(record)
    this.tradeCount++
    return undefined
  }

  /** Whether a wallet's trades belong to an identity feed. */
  inFeed(wallet: WalletRecord, feed: IdentityFeed): boolean {
    if (feed === "kol") return wallet.hasLabel("kol")
    return wallet.hasLabel("partnerscan") || wallet.identities.some((p) => p.source === "partnerscan")
  }

  private onTransfer(e: Events.Transfer): Rejection | undefined {
    const token = this.tokenOn(e.chain, e.token)
    if (token === undefined) return { _tag: "UnknownToken", chain: e.chain, token: e.token }
    const from = e.from === null ? null : canonicalAddress(e.chain, e.from)
    const to = e.to === null ? null : canonicalAddress(e.chain, e.to)
    // A wallet sending to itself moves nothing: no balance, cost basis or cycle changes.
    if (from !== null && from === to) return undefined
    if (from === null) {
      token.changeSupply(token.supply + e.amount, e.timestamp)
    } else {
      token.holders.debit(from, e.amount)
      // Only a position holding tokens can send some: tokens never seen arriving cannot leave our
      // books, so a sender with nothing held gets no position (and no closed cycle it never opened).
      if (!token.isExcludedFromTop10(from) && this.holdsAny(token, from)) {
        const sender = this.wallets.getOrCreate(e.chain, from)
        const position = this.positionOf(token, sender, e.timestamp)
        Positions.applyTransferOut(position, e.amount, e.timestamp)
        this.positionChanged(token, position.slot, sender)
      }
    }
    if (to === null) {
      token.changeSupply(token.supply > e.amount ? token.supply - e.amount : 0n, e.timestamp)
    } else {
      // What is already known of the recipient counts from its first token (exchange funding, phishing label).
      const recipient = this.wallets.get(e.chain, to)
      if (recipient !== undefined && (recipient.fundedByCex || recipient.labels.length !== 0)) {
        token.holders.learnWallet(to, recipient.fundedByCex, recipient.hasLabel("phishing"))
      }
      token.holders.credit(to, e.amount)
      if (!token.isExcludedFromTop10(to)) {
        const receiver = recipient ?? this.wallets.getOrCreate(e.chain, to)
        const position = this.positionOf(token, receiver, e.timestamp)
        Positions.applyTransferIn(position, e.amount, e.timestamp)
        this.positionChanged(token, position.slot, receiver)
      }
    }
    this.touch(token, e.timestamp)
    return undefined
  }

  private onWalletFunded(e: Events.WalletFunded): Rejection | undefined {
    const address = canonicalAddress(e.chain, e.wallet)
    const wallet = this.wallets.getOrCreate(e.chain, address)
    if (!supersedesFunding(wallet.funding, e)) return undefined
    wallet.funding = fundingOf(e, this.wallets.texts, this.interner())
    for (const token of this.tokensByCreator.get(`${e.chain}:${address}`) ?? []) {
      token.devFunding = wallet.funding
      this.touch(token, e.timestamp)
    }
    for (const token of wallet.positionTokens) {
      if (token.holders.onWalletFunded(address, wallet.fundedAt, wallet.fundedByCex)) this.touch(token, e.timestamp)
    }
    return undefined
  }

  private onWalletLabeled(e: Events.WalletLabeled): Rejection | undefined {
    const address = canonicalAddress(e.chain, e.wallet)
    const wallet = this.wallets.getOrCreate(e.chain, address)
    if (!wallet.setLabel(e.label, e.active, this.interner())) return undefined
    if (e.label === "phishing") {
      for (const token of wallet.positionTokens) {
        if (token.holders.onPhishingLabel(address, e.active)) this.touch(token, e.timestamp)
      }
    }
    return undefined
  }

  private interner(): Interner {
    return (this.interned ??= new Interner())
  }

  private builtRecords(): ReadRecords {
    return (this.readRecords ??= new ReadRecords(READ_RECORDS))
  }

  /** Whether `wallet` has a position in `token` holding tokens now (creates nothing). */
  private holdsAny(token: TokenBook, wallet: string): boolean {
    const slot = token.holders.slotIfAny(wallet)
    return slot !== undefined && token.positions.has(slot) && token.positions.at(slot).holdings > 0n
  }

  /** The wallet's position in the token (opened now if it had none), in the wallet's holder slot. */
  private positionOf(token: TokenBook, wallet: WalletRecord, at: number): Positions.PositionState {
    const slot = token.holders.slotFor(wallet.address)
    if (token.positions.open(slot, wallet.address, at)) {
      this.positionCount++
      wallet.addPosition(token)
    }
    return token.positions.at(slot)
  }

  private positionChanged(token: TokenBook, slot: number, wallet: WalletRecord): void {
    if (!token.positions.markChanged(slot, this.changeRound)) return
    this.changedPositionTokens.push(token)
    this.changedPositionSlots.push(slot)
    this.changedPositionWallets.push(wallet)
  }

  private entryAt(token: TokenBook, slot: number): PositionEntry {
    const state = token.positions.at(slot)
    return { state, token, wallet: this.wallets.get(token.chain, state.wallet)! }
  }

  // --- reads ------------------------------------------------------------------------------------

  token(chain: Chain, address: string): TokenBook | undefined {
    return this.tokenOn(chain, address)
  }

  private tokenOn(chain: Chain, address: string): TokenBook | undefined {
    return this.tokensByChain.get(chain)?.get(canonicalAddress(chain, address))
  }

  /** Every token, in launch order. */
  allTokens(): IterableIterator<TokenBook> {
    return this.tokens.values()
  }

  nativeUsdOf(chain: Chain): Fixed.Fixed | undefined {
    return this.nativeUsd.get(chain)
  }

  /**
   * The newest trades of one token held in memory, newest first, strictly after the keyset
   * position. `olderElsewhere`: memory has dropped older trades of the token, so past this page
   * there are more, in the trade archive (docs/storage.md, "Trade history").
   */
  tokenTradePage(
    chain: Chain,
    address: string,
    after: { timestamp: number; seq: number } | null,
    limit: number
  ): { readonly records: Array<TradeRecord>; readonly hasMore: boolean; readonly olderElsewhere: boolean } {
    const ring = this.tokenOn(chain, address)?.recentTrades
    if (ring === undefined) return { records: [], hasMore: false, olderElsewhere: false }
    const page = ring.page(after, limit, undefined, this.builtRecords())
    return { records: page.records, hasMore: page.hasMore, olderElsewhere: !page.hasMore && ring.dropped }
  }

  /** The newest trades of an identity feed on the given chains, newest first. */
  identityTradePage(feed: IdentityFeed, onChains: ReadonlyArray<Chain>, after: { timestamp: number; seq: number } | null, limit: number) {
    const all = onChains.length === chains.length
    return this.identityFeeds[feed].page(after, limit, all ? undefined : (chain) => onChains.includes(chain), this.builtRecords())
  }

  wallet(chain: Chain, address: string): WalletRecord | undefined {
    return this.wallets.get(chain, canonicalAddress(chain, address))
  }

  /**
   * Every position of the given wallets (any chain), by chain in `chains` order, then in the order
   * they were opened; callers narrow further and sort (the positions read has a total order).
   */
  positionsOfWallets(addresses: ReadonlyArray<string>): Array<PositionEntry> {
    const out: Array<PositionEntry> = []
    const seen = new Set<string>()
    for (const raw of addresses) {
      for (const address of raw.startsWith("0x") ? [raw.toLowerCase()] : [raw]) {
        if (seen.has(address)) continue
        seen.add(address)
        // One wallet record per chain: an EVM address is the same wallet on every EVM chain.
        for (const chain of chains) {
          const wallet = this.wallets.get(chain, address)
          if (wallet === undefined) continue
          for (const token of wallet.positionTokens) {
            out.push({ state: token.positions.at(token.holders.slotIfAny(address)!), token, wallet })
          }
        }
      }
    }
    return out
  }

  /** Every position in one token, in the order its wallets first touched the token. */
  *positionsOfToken(token: TokenBook): IterableIterator<PositionEntry> {
    for (const slot of token.positions.slots()) yield this.entryAt(token, slot)
  }

  /** What a position's wire object is priced with: its token's latest state. */
  positionTokenView(token: TokenBook): Positions.PositionTokenView {
    return {
      address: token.address,
      chain: token.chain,
      decimals: token.decimals,
      image: token.metadata.image,
      name: token.metadata.name,
      symbol: token.metadata.symbol,
      priceNative: token.priceNative,
      priceUsd: token.priceUsd,
      lastValueNative: token.lastValueNative,
      lastUsdPerNative: token.lastUsdPerNative,
      lastAmount: token.lastAmount,
      marketCapNative: token.marketCapNative,
      marketCapUsd: token.marketCapUsd,
      supply: token.supply,
      hasMarket: token.hasMarket,
      isStablecoin: stablecoinSymbols.has(token.metadata.symbol.toUpperCase()),
      liquidityUsd: token.liquidityUsd
    }
  }

  /** The position wire object, with price-derived fields at the token's latest price. */
  positionWire(entry: PositionEntry): Positions.PositionWire {
    return Positions.toWire(entry.state, this.positionTokenView(entry.token), fundingWire(entry.wallet.funding), entry.wallet.identities)
  }
}
