/**
 * What the market knows about wallets: first funding, labels and identity profiles, per chain.
 */
import type { Chain } from "../Chain.js"
import { canonicalAddress } from "../Chain.js"
import type { FundingValue } from "./Funding.js"
import { unresolvedFunding } from "./Funding.js"
import type { Interner } from "./Interned.js"
import { chainLiteral } from "./Interned.js"
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

  /** True when the set changed. A label added is kept as `interner`'s copy (the engine's). */
  setLabel(label: string, active: boolean, interner: Interner): boolean {
    const at = this.labels.indexOf(label)
    if (active && at < 0) {
      this.labels = [...this.labels, interner.of(label)]
      return true
    }
    if (!active && at >= 0) {
      this.labels = this.labels.filter((l) => l !== label)
      return true
    }
    return false
  }

  /** Sets the profile of `profile.source` (its source text kept as `interner`'s copy). */
  setIdentity(profile: IdentityProfileValue, interner: Interner): void {
    const others = this.identities.filter((p) => p.source !== profile.source)
    this.identities = [...others, { ...profile, source: interner.of(profile.source) }].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))
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
