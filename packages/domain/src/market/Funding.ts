/**
 * A wallet's first funding, as the position `funding` object and a token's `devFunding` serve it:
 * the value, its packed form the engine keeps per funded wallet, and the rule for which answer of
 * a funding lookup is kept.
 */
import { canonicalAddress } from "../Chain.js"
import type { WalletFunded } from "../events/MarketEvent.js"
import * as Fixed from "../Fixed.js"
import type { Interner } from "./Interned.js"
import type { TextBytes, TextRef } from "./TextBytes.js"

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
 * wallet directory's `TextBytes`, off the JS heap; the short repeated texts interned (the
 * engine's `Interner`, Interned.ts). Read like any `FundingValue`; `fundingWire` gives the plain wire object.
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

export const fundingOf = (event: WalletFunded, texts: TextBytes, interner: Interner): FundingValue =>
  new PackedFunding(
    texts,
    // one spelling per address (EVM lower-case), as every address the API serves
    texts.add(event.funder === null ? null : canonicalAddress(event.chain, event.funder)),
    texts.add(event.transactionHash),
    event.amount === null ? null : Fixed.formatUnits(event.amount, event.assetDecimals ?? 0),
    // low-cardinality texts shared, not kept per wallet (the engine's Interner)
    interner.orNull(event.asset === null ? null : canonicalAddress(event.chain, event.asset)),
    event.sourceKind === null ? null : (interner.of(event.sourceKind) as "cex" | "wallet"),
    interner.orNull(event.sourceLabel),
    interner.orNull(event.assetSymbol),
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
