/**
 * What the market knows about wallets: first funding, labels and identity profiles, per chain.
 */
import type { Chain } from "../Chain.js"
import { canonicalAddress } from "../Chain.js"
import type { WalletFunded } from "../events/MarketEvent.js"
import * as Fixed from "../Fixed.js"
import { chainLiteral, interned, internedOrNull } from "./Interned.js"
import type { TextRef } from "./TextBytes.js"
import { TextBytes } from "./TextBytes.js"
import type { TokenBook } from "./TokenBook.js"

export interface IdentityProfileValue {
  readonly source: string
  readonly handle: string | null
  readonly displayName: string | null
  readonly avatar: string | null
  readonly twitter: string | null
  readonly telegram: string | null
  readonly farcaster: string | null
}

/** The position `funding` object; also the source of the token's `devFunding`. */
export interface FundingValue {
  readonly status: "unresolved" | "resolved"
  readonly address: string | null
  readonly amount: string | null
  readonly asset: string | null
  readonly sourceKind: "cex" | "wallet" | null
  readonly sourceLabel: string | null
  readonly symbol: string | null
  readonly timestamp: number | null
  readonly tx: string | null
}

export const unresolvedFunding: FundingValue = {
  status: "unresolved",
  address: null,
  amount: null,
  asset: null,
  sourceKind: null,
  sourceLabel: null,
  symbol: null,
  timestamp: null,
  tx: null
}

/**
 * A resolved funding as the engine keeps it, one per funded wallet (tens of thousands): the
 * funder's address and the transaction hash — unique texts, the largest part of it — in the
 * wallet directory's `TextBytes`, off the JS heap; the short repeated texts interned
 * (Interned.ts). Read like any `FundingValue`; `fundingWire` gives the plain wire object.
 */
export class PackedFunding implements FundingValue {
  constructor(
    private readonly texts: TextBytes,
    private readonly addressRef: TextRef,
    private readonly txRef: TextRef,
    readonly amount: string | null,
    readonly asset: string | null,
    readonly sourceKind: "cex" | "wallet" | null,
    readonly sourceLabel: string | null,
    readonly symbol: string | null,
    readonly timestamp: number | null
  ) {}

  get status(): "resolved" {
    return "resolved"
  }

  get address(): string | null {
    return this.texts.read(this.addressRef)
  }

  get tx(): string | null {
    return this.texts.read(this.txRef)
  }
}

export const fundingOf = (event: WalletFunded, texts: TextBytes): FundingValue =>
  new PackedFunding(
    texts,
    // one spelling per address (EVM lower-case), as every address the API serves
    texts.add(event.funder === null ? null : canonicalAddress(event.chain, event.funder)),
    texts.add(event.transactionHash),
    event.amount === null ? null : Fixed.formatUnits(event.amount, event.assetDecimals ?? 0),
    // low-cardinality texts shared, not kept per wallet (Interned.ts)
    internedOrNull(event.asset === null ? null : canonicalAddress(event.chain, event.asset)),
    event.sourceKind === null ? null : (interned(event.sourceKind) as "cex" | "wallet"),
    internedOrNull(event.sourceLabel),
    internedOrNull(event.assetSymbol),
    event.fundedAt
  )

/**
 * Whether a funding lookup's answer replaces the funding a wallet already has. What is kept is the
 * wallet's **first** inbound funding (spec: `devFunding` is the creator's "first inbound
 * funding"): any answer replaces `unresolved`; one naming a funder replaces "settled, none known";
 * between two named fundings the earlier one stays (a later-dated answer is a later funding, not
 * the first; on equal times the one already kept); "none known" never erases a known funder.
 */
export const supersedesFunding = (current: FundingValue, event: WalletFunded): boolean => {
  if (current.status === "unresolved") return true
  if (event.funder === null) return false
  if (current.address === null) return true
  return event.fundedAt !== null && (current.timestamp === null || event.fundedAt < current.timestamp)
}

/** The funding as a plain object of the wire's fields, in the wire's order. */
export const fundingWire = (f: FundingValue): FundingValue => ({
  status: f.status,
  address: f.address,
  amount: f.amount,
  asset: f.asset,
  sourceKind: f.sourceKind,
  sourceLabel: f.sourceLabel,
  symbol: f.symbol,
  timestamp: f.timestamp,
  tx: f.tx
})

const noLabels: ReadonlyArray<string> = Object.freeze([])
const noIdentities: ReadonlyArray<IdentityProfileValue> = Object.freeze([])

/** Shared by every wallet without positions (most funded-only wallets never trade). */
const noPositions: ReadonlyArray<TokenBook> = Object.freeze([])

export class WalletRecord {
  funding: FundingValue = unresolvedFunding
  /**
   * Active labels (kol, partnerscan, phishing, whale, partner, ...), in the order first set. Both
   * lists are replaced, never mutated (trades keep a reference), and start as shared empty lists.
   */
  labels: ReadonlyArray<string> = noLabels
  identities: ReadonlyArray<IdentityProfileValue> = noIdentities
  /**
   * The tokens the wallet has positions in: the first one, then the others (most wallets trade one
   * token, and a field costs less than an array per wallet). See `positionTokens`.
   */
  private firstPositionToken: TokenBook | undefined = undefined
  private otherPositionTokens: Array<TokenBook> | undefined = undefined
  constructor(readonly chain: Chain, readonly address: string) {}

  /**
   * The tokens the wallet has a position in on this chain, in the order the positions were opened
   * (the position itself is in the token's PositionBook, in the wallet's holder slot).
   */
  get positionTokens(): ReadonlyArray<TokenBook> {
    if (this.firstPositionToken === undefined) return noPositions
    return this.otherPositionTokens === undefined ? [this.firstPositionToken] : [this.firstPositionToken, ...this.otherPositionTokens]
  }

  addPosition(token: TokenBook): void {
    if (this.firstPositionToken === undefined) this.firstPositionToken = token
    else if (this.otherPositionTokens === undefined) this.otherPositionTokens = [token]
    else this.otherPositionTokens.push(token)
  }

  hasLabel(label: string): boolean {
    return this.labels.includes(label)
  }

  /** True when the set changed. */
  setLabel(label: string, active: boolean): boolean {
    const at = this.labels.indexOf(label)
    if (active && at < 0) {
      this.labels = [...this.labels, interned(label)]
      return true
    }
    if (!active && at >= 0) {
      this.labels = this.labels.filter((l) => l !== label)
      return true
    }
    return false
  }

  setIdentity(profile: IdentityProfileValue): void {
    const others = this.identities.filter((p) => p.source !== profile.source)
    this.identities = [...others, { ...profile, source: interned(profile.source) }].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))
  }

  get fundedAt(): number | null {
    return this.funding.status === "resolved" ? this.funding.timestamp : null
  }

  get fundedByCex(): boolean {
    return this.funding.sourceKind === "cex"
  }
}

export class WalletDirectory {
  /** The funders' addresses and funding transactions of `PackedFunding`s (off the JS heap). */
  readonly texts = new TextBytes()
  private readonly byChain = new Map<Chain, Map<string, WalletRecord>>()
  private count = 0

  get(chain: Chain, address: string): WalletRecord | undefined {
    return this.byChain.get(chain)?.get(address)
  }

  getOrCreate(chain: Chain, address: string): WalletRecord {
    let wallets = this.byChain.get(chain)
    if (wallets === undefined) {
      wallets = new Map()
      this.byChain.set(chain, wallets)
    }
    let record = wallets.get(address)
    if (record === undefined) {
      record = new WalletRecord(chainLiteral(chain), address)
      wallets.set(address, record)
      this.count++
    }
    return record
  }

  get size(): number {
    return this.count
  }
}
