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
import * as Fixed from "../Fixed.js"
import type { IdentityFeed } from "../wire/Trade.js"
import * as Positions from "./Positions.js"
import { nativeValue, TokenBook } from "./TokenBook.js"
import { TradeRecord, TradeRing } from "./TradeFeed.js"
import { fundingOf, WalletDirectory, type WalletRecord } from "./Wallets.js"

export interface EngineOptions {
  /** How long raw trades stay in each token's tape (stats windows need 24 hours). */
  readonly tapeRetainMs: number
  /** Newest trades kept in memory per token for trade pages. */
  readonly recentTradesPerToken: number
  /** Newest trades kept in memory per identity feed. */
  readonly identityFeedSize: number
}

export const defaultEngineOptions: EngineOptions = {
  tapeRetainMs: 24 * 3_600_000,
  recentTradesPerToken: 200,
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
}

/** Why an event was not applied; `undefined` when it was. */
export type Rejection = string | undefined

const stablecoinSymbols = new Set(["USDC", "USDT", "DAI", "USD1", "PYUSD", "FDUSD", "USDE"])

/** Holder flags as trade flags, in a fixed order. */
const identityLabels: ReadonlyArray<IdentityFeed> = ["kol", "partnerscan"]

export class MarketEngine {
  private readonly tokens = new Map<string, TokenBook>()
  private readonly wallets = new WalletDirectory()
  private positionCount = 0
  /** Positions by wallet address (an EVM address is the same wallet on every EVM chain). */
  private readonly positionsByWallet = new Map<string, Array<PositionEntry>>()
  private readonly tokensByCreator = new Map<string, Array<TokenBook>>()
  private readonly tokenTrades = new Map<string, TradeRing>()
  private readonly identityFeeds: Record<IdentityFeed, TradeRing>
  private readonly nativeUsd = new Map<Chain, Fixed.Fixed>()
  /** Tokens with trades inside the 24-hour window: the only ones whose stats move with time. */
  private readonly activeTokens = new Set<TokenBook>()
  private seq = 0
  private clock = 0
  private changedTokens = new Set<TokenBook>()
  private newTrades: Array<TradeRecord> = []
  private changedPositions = new Set<PositionEntry>()
  private eventCount = 0
  private tradeCount = 0

  constructor(readonly options: EngineOptions = defaultEngineOptions) {
    this.identityFeeds = {
      kol: new TradeRing(options.identityFeedSize),
      partnerscan: new TradeRing(options.identityFeedSize)
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

  // --- folding ----------------------------------------------------------------------------------

  /** Folds one event; returns why it was not applied, or undefined. */
  apply(event: MarketEvent): Rejection {
    if (event.timestamp > this.clock) this.clock = event.timestamp
    const rejection = this.fold(event)
    if (rejection === undefined) this.eventCount++
    return rejection
  }

  /** Checks an event against the current state without applying it (for ingest). */
  check(event: MarketEvent): Rejection {
    switch (event.type) {
      case "tokenLaunched":
      case "walletFunded":
      case "walletLabeled":
      case "identityResolved":
      case "nativePrice":
        return undefined
      default:
        return this.tokens.has(`${event.chain}:${canonicalAddress(event.chain, event.token)}`)
          ? undefined
          : `unknown token ${event.chain}:${event.token}: send its tokenLaunched event first`
    }
  }

  /** Moves the clock to `now`, expiring trades out of the stats windows of active tokens. */
  advanceTo(now: number): void {
    if (now > this.clock) this.clock = now
    for (const token of this.activeTokens) {
      if (token.tape.advanceTo(this.clock)) {
        token.touch(this.clock)
        this.changedTokens.add(token)
      }
      const last = token.tape.lastTradeAt()
      if (last === undefined || last <= this.clock - 24 * 3_600_000) this.activeTokens.delete(token)
    }
  }

  /** Hands over what changed since the previous call. */
  drainChanges(): EngineChanges {
    const changes: EngineChanges = {
      tokens: [...this.changedTokens],
      trades: this.newTrades,
      positions: [...this.changedPositions]
    }
    this.changedTokens = new Set()
    this.newTrades = []
    this.changedPositions = new Set()
    return changes
  }

  private fold(e: MarketEvent): Rejection {
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
        return this.withToken(e.chain, e.token, (token) => {
          if (token.hasCurve && token.graduatedAt === null) token.recordCurve(Fixed.unsafeParse(e.bondingCurvePct), e.timestamp)
        }, e.timestamp)
      case "graduated":
        return this.withToken(e.chain, e.token, (token) => {
          if (token.graduatedAt !== null) return
          token.graduatedAt = e.timestamp
          token.graduatedToPool = e.pool
          token.graduatedToDex = e.dex
          if (token.hasCurve) token.recordCurve(Fixed.fromInt(100), e.timestamp)
          const deepest = token.deepestPool()
          token.pool(e.pool, e.dex, deepest?.anchorAddress ?? "", deepest?.anchorSymbol ?? "")
        }, e.timestamp)
      case "liquidityChanged":
        return this.withToken(e.chain, e.token, (token) => {
          const pool = token.pool(e.pool, e.dex, e.anchorAddress, e.anchorSymbol)
          pool.anchorAddress = e.anchorAddress
          pool.anchorSymbol = e.anchorSymbol
          pool.liquidityNative = nativeValue(e.chain, e.liquidityNative)
          pool.liquidityUsd = Fixed.mul(pool.liquidityNative, this.parseUsd(e.nativeUsd))
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
        })
        return undefined
      }
      case "nativePrice":
        this.nativeUsd.set(e.chain, Fixed.unsafeParse(e.usd))
        return undefined
    }
  }

  private lastUsdText = ""
  private lastUsd: Fixed.Fixed = 0n

  /** USD prices repeat across consecutive swaps of a chain; parse each distinct text once. */
  private parseUsd(text: string): Fixed.Fixed {
    if (text !== this.lastUsdText) {
      this.lastUsd = Fixed.unsafeParse(text)
      this.lastUsdText = text
    }
    return this.lastUsd
  }

  private withToken(chain: Chain, address: string, change: (token: TokenBook) => void, at: number): Rejection {
    const token = this.tokens.get(`${chain}:${canonicalAddress(chain, address)}`)
    if (token === undefined) return `unknown token ${chain}:${address}: send its tokenLaunched event first`
    change(token)
    this.touch(token, at)
    return undefined
  }

  private touch(token: TokenBook, at: number): void {
    token.touch(at)
    this.changedTokens.add(token)
  }

  private onLaunch(e: Events.TokenLaunched): Rejection {
    const address = canonicalAddress(e.chain, e.token)
    const key = `${e.chain}:${address}`
    if (this.tokens.has(key)) return `token ${key} was already launched`
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
    const creatorWallet = this.wallets.get(e.chain, creator)
    if (creatorWallet !== undefined && creatorWallet.funding.status === "resolved") token.devFunding = creatorWallet.funding
    this.tokens.set(key, token)
    const creatorKey = `${e.chain}:${creator}`
    const created = this.tokensByCreator.get(creatorKey)
    if (created === undefined) this.tokensByCreator.set(creatorKey, [token])
    else created.push(token)
    this.touch(token, e.timestamp)
    return undefined
  }

  private onSwap(e: Events.Swap): Rejection {
    const token = this.tokens.get(`${e.chain}:${canonicalAddress(e.chain, e.token)}`)
    if (token === undefined) return `unknown token ${e.chain}:${e.token}: send its tokenLaunched event first`
    const trader = canonicalAddress(e.chain, e.trader)
    const wallet = this.wallets.getOrCreate(e.chain, trader)
    const nativeUsd = this.parseUsd(e.nativeUsd)
    const valueNative = nativeValue(e.chain, e.nativeAmount)
    const valueUsd = Fixed.mul(valueNative, nativeUsd)
    const amount = Fixed.fromBaseUnits(e.tokenAmount, token.decimals)
    const priceNative = Fixed.div(valueNative, amount)
    const priceUsd = Fixed.div(valueUsd, amount)
    const marketCapNative = token.marketCapOf(priceNative)
    const marketCapUsd = token.marketCapOf(priceUsd)

    token.pool(e.pool, e.dex, e.quoteAddress, e.quoteSymbol)
    const fees = token.fees
    const feeTx = nativeValue(e.chain, e.fees.transaction)
    const feeValidator = nativeValue(e.chain, e.fees.validator)
    const feePlatform = nativeValue(e.chain, e.fees.platform)
    const feeDex = nativeValue(e.chain, e.fees.dex)
    if (feeTx !== 0n) {
      fees.transaction.native += feeTx
      fees.transaction.usd += Fixed.mul(feeTx, nativeUsd)
    }
    if (feeValidator !== 0n) {
      fees.validator.native += feeValidator
      fees.validator.usd += Fixed.mul(feeValidator, nativeUsd)
    }
    if (feePlatform !== 0n) {
      fees.platform.native += feePlatform
      fees.platform.usd += Fixed.mul(feePlatform, nativeUsd)
    }
    if (feeDex !== 0n) {
      fees.dex.native += feeDex
      fees.dex.usd += Fixed.mul(feeDex, nativeUsd)
    }
    token.volume.native += valueNative
    token.volume.usd += valueUsd

    const holderFlags = token.holders.recordTrade(trader, e.side, {
      block: e.block,
      timestamp: e.timestamp,
      walletFundedAt: wallet.fundedAt,
      fundedByCex: wallet.fundedByCex,
      terminal: e.terminal,
      phishing: wallet.hasLabel("phishing")
    })
    if (e.side === "buy") token.holders.credit(trader, e.tokenAmount)
    else token.holders.debit(trader, e.tokenAmount)

    token.tape.append(e.timestamp, e.side, priceNative, priceUsd, marketCapNative, marketCapUsd, valueNative, valueUsd)
    token.recordPrice(priceNative, priceUsd, e.timestamp)
    this.activeTokens.add(token)
    this.touch(token, e.timestamp)

    // the wallet's position
    const entry = this.positionOf(token, wallet, e.timestamp)
    // Explicit charges the trader paid; the dex fee is already inside the execution price.
    const feesNative = feeTx + feeValidator + feePlatform
    const fill: Positions.Fill = {
      tokenAmount: e.tokenAmount,
      valueNative,
      valueUsd,
      feesNative,
      feesUsd: Fixed.mul(feesNative, nativeUsd),
      marketCapNative,
      marketCapUsd,
      timestamp: e.timestamp
    }
    if (e.side === "buy") Positions.applyBuy(entry.state, fill)
    else Positions.applySell(entry.state, fill)
    this.changedPositions.add(entry)

    // the trade object
    const flags: Array<string> = []
    for (const f of holderFlags) flags.push(f)
    if (trader === token.creator) flags.push("dev")
    for (const label of wallet.labels) if (!flags.includes(label)) flags.push(label)
    const record = new TradeRecord(++this.seq, {
      eventId: e.id,
      chain: e.chain,
      token: token.address,
      name: token.metadata.name,
      symbol: token.metadata.symbol,
      trader,
      transactionHash: e.transactionHash,
      side: e.side,
      amount,
      priceNative,
      priceUsd,
      valueNative,
      valueUsd,
      marketCapNative,
      marketCapUsd,
      flags,
      terminal: e.terminal,
      identities: wallet.identities,
      timestamp: e.timestamp
    })
    let ring = this.tokenTrades.get(token.key)
    if (ring === undefined) {
      ring = new TradeRing(this.options.recentTradesPerToken)
      this.tokenTrades.set(token.key, ring)
    }
    ring.push(record)
    for (const feed of identityLabels) if (this.inFeed(wallet, feed)) this.identityFeeds[feed].push(record)
    this.newTrades.push(record)
    this.tradeCount++
    return undefined
  }

  /** Whether a wallet's trades belong to an identity feed. */
  inFeed(wallet: WalletRecord, feed: IdentityFeed): boolean {
    if (feed === "kol") return wallet.hasLabel("kol")
    return wallet.hasLabel("partnerscan") || wallet.identities.some((p) => p.source === "partnerscan")
  }

  private onTransfer(e: Events.Transfer): Rejection {
    const token = this.tokens.get(`${e.chain}:${canonicalAddress(e.chain, e.token)}`)
    if (token === undefined) return `unknown token ${e.chain}:${e.token}: send its tokenLaunched event first`
    const from = e.from === null ? null : canonicalAddress(e.chain, e.from)
    const to = e.to === null ? null : canonicalAddress(e.chain, e.to)
    if (from === null) {
      token.supply += e.amount
      token.holders.setSupply(token.supply)
    } else {
      token.holders.debit(from, e.amount)
      if (!token.isExcludedFromTop10(from)) {
        const entry = this.positionOf(token, this.wallets.getOrCreate(e.chain, from), e.timestamp)
        Positions.applyTransferOut(entry.state, e.amount, e.timestamp)
        this.changedPositions.add(entry)
      }
    }
    if (to === null) {
      token.supply = token.supply > e.amount ? token.supply - e.amount : 0n
      token.holders.setSupply(token.supply)
    } else {
      token.holders.credit(to, e.amount)
      if (!token.isExcludedFromTop10(to)) {
        const entry = this.positionOf(token, this.wallets.getOrCreate(e.chain, to), e.timestamp)
        Positions.applyTransferIn(entry.state, e.amount, e.timestamp)
        this.changedPositions.add(entry)
      }
    }
    this.touch(token, e.timestamp)
    return undefined
  }

  private onWalletFunded(e: Events.WalletFunded): Rejection {
    const address = canonicalAddress(e.chain, e.wallet)
    const wallet = this.wallets.getOrCreate(e.chain, address)
    wallet.funding = fundingOf(e)
    for (const token of this.tokensByCreator.get(`${e.chain}:${address}`) ?? []) {
      token.devFunding = wallet.funding
      this.touch(token, e.timestamp)
    }
    for (const key of wallet.tokens) {
      const token = this.tokens.get(key)
      if (token !== undefined && token.holders.onWalletFunded(address, wallet.fundedAt, wallet.fundedByCex)) this.touch(token, e.timestamp)
    }
    return undefined
  }

  private onWalletLabeled(e: Events.WalletLabeled): Rejection {
    const address = canonicalAddress(e.chain, e.wallet)
    const wallet = this.wallets.getOrCreate(e.chain, address)
    if (!wallet.setLabel(e.label, e.active)) return undefined
    if (e.label === "phishing") {
      for (const key of wallet.tokens) {
        const token = this.tokens.get(key)
        if (token !== undefined && token.holders.onPhishingLabel(address, e.active)) this.touch(token, e.timestamp)
      }
    }
    return undefined
  }

  private positionOf(token: TokenBook, wallet: WalletRecord, at: number): PositionEntry {
    let entry = token.positions.get(wallet.address)
    if (entry === undefined) {
      entry = { state: Positions.makePosition(wallet.address, token.chain, token.address, token.decimals, at), token, wallet }
      token.positions.set(wallet.address, entry)
      this.positionCount++
      wallet.tokens.add(token.key)
      const list = this.positionsByWallet.get(wallet.address)
      if (list === undefined) this.positionsByWallet.set(wallet.address, [entry])
      else list.push(entry)
    }
    return entry
  }

  // --- reads ------------------------------------------------------------------------------------

  token(chain: Chain, address: string): TokenBook | undefined {
    return this.tokens.get(`${chain}:${canonicalAddress(chain, address)}`)
  }

  /** Every token, in launch order. */
  allTokens(): IterableIterator<TokenBook> {
    return this.tokens.values()
  }

  nativeUsdOf(chain: Chain): Fixed.Fixed | undefined {
    return this.nativeUsd.get(chain)
  }

  /** The newest trades of one token, newest first, strictly after the keyset position. */
  tokenTradePage(chain: Chain, address: string, after: { timestamp: number; seq: number } | null, limit: number) {
    const ring = this.tokenTrades.get(`${chain}:${canonicalAddress(chain, address)}`)
    return ring === undefined ? { records: [], hasMore: false } : ring.page(after, limit)
  }

  /** The newest trades of an identity feed on the given chains, newest first. */
  identityTradePage(feed: IdentityFeed, onChains: ReadonlyArray<Chain>, after: { timestamp: number; seq: number } | null, limit: number) {
    const all = onChains.length === chains.length
    return this.identityFeeds[feed].page(after, limit, all ? undefined : (r) => onChains.includes(r.chain))
  }

  wallet(chain: Chain, address: string): WalletRecord | undefined {
    return this.wallets.get(chain, canonicalAddress(chain, address))
  }

  /** Every position of the given wallets (any chain); callers narrow further. */
  positionsOfWallets(addresses: ReadonlyArray<string>): Array<PositionEntry> {
    const out: Array<PositionEntry> = []
    const seen = new Set<string>()
    for (const raw of addresses) {
      for (const address of raw.startsWith("0x") ? [raw.toLowerCase()] : [raw]) {
        if (seen.has(address)) continue
        seen.add(address)
        const list = this.positionsByWallet.get(address)
        if (list !== undefined) for (const entry of list) out.push(entry)
      }
    }
    return out
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
      marketCapNative: token.marketCapOf(token.priceNative),
      marketCapUsd: token.marketCapOf(token.priceUsd),
      supply: token.supply,
      hasMarket: token.hasMarket,
      isStablecoin: stablecoinSymbols.has(token.metadata.symbol.toUpperCase()),
      liquidityUsd: token.liquidityUsd
    }
  }

  /** The position wire object, with price-derived fields at the token's latest price. */
  positionWire(entry: PositionEntry): Positions.PositionWire {
    return Positions.toWire(entry.state, this.positionTokenView(entry.token), entry.wallet.funding, entry.wallet.identities)
  }

  /** Approximate heap bytes of the derived state (for the memory benchmark). */
  heapBytes(): number {
    let bytes = 0
    for (const token of this.tokens.values()) bytes += token.heapBytes()
    return bytes
  }
}
