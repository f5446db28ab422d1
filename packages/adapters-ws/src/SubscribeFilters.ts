/**
 * The filters of a `subscribe` frame, per channel (spec "Events": spot.tokens, spot.candles,
 * spot.trades; spot.positions is the service's own, docs/streams.md). Every problem is collected
 * so one error frame names every bad field; an unsupported chain slug wins, as in the REST reads.
 * Field paths are `filters.<name>` (`channel` for the channel itself).
 */
import { Candles, Chain, PositionsQuery } from "@spot/domain"
import type { FieldError } from "@spot/domain"

export type ChainSlug = Chain.Chain
type Timeframe = Candles.Timeframe

/** Most addresses in one spot.tokens subscription and wallets in one spot.positions subscription. */
export const maxAddressesPerSubscription = 100

/**
 * Trade flag values the `flags` filter accepts: every classification this service puts on trades
 * (holder groups, `dev`, and the wallet labels it knows). A value outside the list is refused
 * (spec: "unknown ... flags value"); the list grows when the service starts emitting a new flag.
 */
export const filterableTradeFlags = [
  "sniper",
  "insider",
  "bundler",
  "freshWallet",
  "proTrader",
  "partner",
  "phishing",
  "dev",
  "whale",
  "kol",
  "partnerscan"
] as const

export const identityFeeds = ["kol", "partnerscan"] as const
export type IdentityFeed = (typeof identityFeeds)[number]

export interface TokensSpec {
  readonly channel: "spot.tokens"
  readonly chain: ChainSlug
  /** Canonical addresses, each once. */
  readonly tokens: ReadonlyArray<string>
}

export interface CandlesSpec {
  readonly channel: "spot.candles"
  readonly chain: ChainSlug
  readonly token: string
  readonly timeframe: Timeframe
  readonly metric: "price" | "marketCap"
  readonly denomination: "usd" | "native"
}

export type TradesMode =
  | { readonly mode: "token"; readonly chain: ChainSlug; readonly token: string }
  | { readonly mode: "wallet"; readonly chain: ChainSlug; readonly wallet: string }
  | { readonly mode: "identity"; readonly identity: IdentityFeed }

export type TradesSpec = { readonly channel: "spot.trades"; readonly flags: ReadonlyArray<string> | null } & TradesMode

export interface PositionsSpec {
  readonly channel: "spot.positions"
  /** Canonical wallet addresses (EVM lower-cased), each once. */
  readonly wallets: ReadonlyArray<string>
  /** null: every chain. */
  readonly chains: ReadonlyArray<ChainSlug> | null
}

export type SubscriptionSpec = TokensSpec | CandlesSpec | TradesSpec | PositionsSpec

export const channels = ["spot.tokens", "spot.candles", "spot.trades", "spot.positions"] as const
export type ChannelName = (typeof channels)[number]

/** A refusal: the `error` object of the error frame. */
export interface Refusal {
  readonly code: "VALIDATION_ERROR" | "UNSUPPORTED_CHAIN"
  readonly message: string
  readonly details: ReadonlyArray<FieldError>
}

export type ParseResult = { readonly ok: true; readonly spec: SubscriptionSpec } | { readonly ok: false; readonly refusal: Refusal }

const knownFilters: Readonly<Record<ChannelName, ReadonlyArray<string>>> = {
  "spot.tokens": ["chain", "tokens", "token"],
  "spot.candles": ["chain", "token", "timeframe", "metric", "denomination"],
  "spot.trades": ["chain", "token", "wallet", "identity", "flags"],
  "spot.positions": ["wallets", "chains"]
}

class Problems {
  readonly issues: Array<FieldError> = []
  unsupported: { field: string; value: string } | undefined

  add(field: string, message: string): void {
    this.issues.push({ field, message })
  }

  string(filters: Record<string, unknown>, name: string, required: boolean): string | undefined {
    const value = filters[name]
    if (value === undefined) {
      if (required) this.add(`filters.${name}`, `${name} is required`)
      return undefined
    }
    if (typeof value !== "string" || value.length === 0) {
      this.add(`filters.${name}`, `${name} must be a non-empty string`)
      return undefined
    }
    return value
  }

  chain(filters: Record<string, unknown>, name: string, required: boolean): ChainSlug | undefined {
    const value = this.string(filters, name, false)
    if (value === undefined) {
      if (filters[name] === undefined && required) this.add(`filters.${name}`, `${name} is required: one of ${Chain.chains.join(", ")}`)
      return undefined
    }
    if (Chain.isChain(value)) return value
    this.unsupported ??= { field: `filters.${name}`, value }
    return undefined
  }

  address(field: string, label: string, chain: ChainSlug | undefined, value: string): string | undefined {
    if (chain === undefined) return undefined
    if (!Chain.isAddressOn(chain, value)) {
      this.add(field, `${label} ${JSON.stringify(value.slice(0, 64))} is not ${Chain.describeAddressOn(chain)}`)
      return undefined
    }
    return Chain.canonicalAddress(chain, value)
  }

  oneOf<const T extends string>(filters: Record<string, unknown>, name: string, allowed: ReadonlyArray<T>, fallback: T): T {
    const value = filters[name]
    if (value === undefined) return fallback
    if (typeof value === "string" && (allowed as ReadonlyArray<string>).includes(value)) return value as T
    this.add(`filters.${name}`, `${name} must be one of ${allowed.join(", ")}`)
    return fallback
  }

  stringList(filters: Record<string, unknown>, name: string): ReadonlyArray<string> | undefined {
    const value = filters[name]
    if (value === undefined) return undefined
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
      this.add(`filters.${name}`, `${name} must be an array of strings`)
      return undefined
    }
    return value as ReadonlyArray<string>
  }

  refusal(): Refusal | undefined {
    if (this.unsupported !== undefined) {
      const { field, value } = this.unsupported
      return {
        code: "UNSUPPORTED_CHAIN",
        message: `Chain ${JSON.stringify(value)} in ${field} is not supported. Use one of: ${Chain.chains.join(", ")}.`,
        details: [{ field, message: `unsupported chain ${JSON.stringify(value)}` }]
      }
    }
    if (this.issues.length === 0) return undefined
    return {
      code: "VALIDATION_ERROR",
      message: `The subscribe was refused: ${this.issues.map((i) => `${i.field}: ${i.message}`).join("; ")}. Fix the filters and subscribe again.`,
      details: this.issues
    }
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Validates a subscribe frame's channel and filters. */
export const parseSubscription = (channel: unknown, filters: unknown): ParseResult => {
  const problems = new Problems()
  if (typeof channel !== "string" || !(channels as ReadonlyArray<string>).includes(channel)) {
    problems.add("channel", `channel must be one of ${channels.join(", ")}`)
    return { ok: false, refusal: problems.refusal()! }
  }
  const name = channel as ChannelName
  if (!isPlainObject(filters)) {
    problems.add("filters", "filters must be an object")
    return { ok: false, refusal: problems.refusal()! }
  }
  const known = knownFilters[name]
  for (const field of Object.keys(filters)) {
    if (!known.includes(field)) problems.add(`filters.${field}`, `${field} is not a filter of ${name}; it accepts ${known.join(", ")}`)
  }
  const spec = parseChannel(name, filters, problems)
  const refusal = problems.refusal()
  return refusal === undefined && spec !== undefined ? { ok: true, spec } : { ok: false, refusal: refusal ?? internalRefusal }
}

const internalRefusal: Refusal = { code: "VALIDATION_ERROR", message: "The subscribe was refused.", details: [{ field: "filters", message: "is invalid" }] }

const parseChannel = (channel: ChannelName, filters: Record<string, unknown>, problems: Problems): SubscriptionSpec | undefined => {
  switch (channel) {
    case "spot.tokens":
      return parseTokens(filters, problems)
    case "spot.candles":
      return parseCandles(filters, problems)
    case "spot.trades":
      return parseTrades(filters, problems)
    case "spot.positions":
      return parsePositions(filters, problems)
  }
}

const parseTokens = (filters: Record<string, unknown>, problems: Problems): TokensSpec | undefined => {
  const chain = problems.chain(filters, "chain", true)
  let raw: ReadonlyArray<string> | undefined
  let field = "filters.tokens"
  if (filters.tokens !== undefined && filters.token !== undefined) {
    problems.add("filters.token", "send tokens (a list) or token (one address), not both")
  } else if (filters.token !== undefined) {
    field = "filters.token"
    const one = problems.string(filters, "token", true)
    if (one !== undefined) raw = [one]
  } else if (filters.tokens === undefined) {
    problems.add("filters.tokens", `tokens is required: 1 to ${maxAddressesPerSubscription} addresses on chain (or token: one address)`)
  } else {
    raw = problems.stringList(filters, "tokens")
    if (raw !== undefined && raw.length === 0) {
      problems.add(field, `tokens names no address: send 1 to ${maxAddressesPerSubscription}`)
      raw = undefined
    }
  }
  // Canonical and distinct: a repeated address (or one spelled in other letter case on EVM) counts once.
  const distinct = new Set<string>()
  if (raw !== undefined) {
    for (const value of raw) {
      const address = problems.address(field, "token", chain, value)
      if (address !== undefined) distinct.add(address)
    }
  }
  if (distinct.size > maxAddressesPerSubscription) {
    problems.add(field, `tokens names ${distinct.size} distinct addresses; at most ${maxAddressesPerSubscription} per subscription (open another subscription for more)`)
  }
  const tokens = [...distinct]
  return chain === undefined ? undefined : { channel: "spot.tokens", chain, tokens }
}

const parseCandles = (filters: Record<string, unknown>, problems: Problems): CandlesSpec | undefined => {
  const chain = problems.chain(filters, "chain", true)
  const raw = problems.string(filters, "token", true)
  const token = raw === undefined ? undefined : problems.address("filters.token", "token", chain, raw)
  const timeframe = problems.oneOf(filters, "timeframe", Candles.timeframes, "1m")
  const metric = problems.oneOf(filters, "metric", ["price", "marketCap"] as const, "marketCap")
  const denomination = problems.oneOf(filters, "denomination", ["usd", "native"] as const, "usd")
  return chain === undefined || token === undefined ? undefined : { channel: "spot.candles", chain, token, timeframe, metric, denomination }
}

const parseTrades = (filters: Record<string, unknown>, problems: Problems): TradesSpec | undefined => {
  const modes = (["token", "wallet", "identity"] as const).filter((m) => filters[m] !== undefined)
  const identityMode = modes.length === 1 && modes[0] === "identity"
  // With identity the chain is ignored (the feed covers every chain), but an unsupported slug is refused.
  const chain = problems.chain(filters, "chain", !identityMode && modes.length === 1)
  if (modes.length === 0) problems.add("filters", "send exactly one mode: token, wallet or identity")
  else if (modes.length > 1) problems.add(`filters.${modes[1]}`, `send exactly one mode: token, wallet or identity (got ${modes.join(", ")})`)

  let flags: ReadonlyArray<string> | null = null
  const flagList = problems.stringList(filters, "flags")
  if (flagList !== undefined) {
    if (flagList.length === 0) problems.add("filters.flags", "flags names no value: leave it out to keep every trade")
    for (const flag of flagList) {
      if (!(filterableTradeFlags as ReadonlyArray<string>).includes(flag)) {
        problems.add("filters.flags", `unknown flag ${JSON.stringify(flag.slice(0, 64))}; flags accepts ${filterableTradeFlags.join(", ")}`)
      }
    }
    flags = [...new Set(flagList)]
  }
  if (modes.length !== 1) return undefined
  const mode = modes[0]!
  if (mode === "identity") {
    const value = filters.identity
    if (typeof value !== "string" || !(identityFeeds as ReadonlyArray<string>).includes(value)) {
      problems.add("filters.identity", `identity must be one of ${identityFeeds.join(", ")}`)
      return undefined
    }
    return { channel: "spot.trades", flags, mode, identity: value as IdentityFeed }
  }
  const raw = problems.string(filters, mode, true)
  const address = raw === undefined ? undefined : problems.address(`filters.${mode}`, mode, chain, raw)
  if (chain === undefined || address === undefined) return undefined
  return mode === "token"
    ? { channel: "spot.trades", flags, mode, chain, token: address }
    : { channel: "spot.trades", flags, mode, chain, wallet: address }
}

const parsePositions = (filters: Record<string, unknown>, problems: Problems): PositionsSpec | undefined => {
  const raw = problems.stringList(filters, "wallets")
  const wallets: Array<string> = []
  if (filters.wallets === undefined) problems.add("filters.wallets", `wallets is required: 1 to ${maxAddressesPerSubscription} wallet addresses`)
  else if (raw !== undefined) {
    if (raw.length === 0) problems.add("filters.wallets", `wallets names no address: send 1 to ${maxAddressesPerSubscription}`)
    else {
      // Canonical and distinct, as for spot.tokens: a repeated wallet counts once.
      const distinct = new Set<string>()
      for (const wallet of raw) {
        if (!Chain.looksLikeAddress(wallet)) problems.add("filters.wallets", `${JSON.stringify(wallet.slice(0, 64))} is not a wallet address`)
        else distinct.add(PositionsQuery.canonicalWallet(wallet))
      }
      if (distinct.size > maxAddressesPerSubscription) {
        problems.add("filters.wallets", `wallets names ${distinct.size} distinct addresses; at most ${maxAddressesPerSubscription} per subscription`)
      } else wallets.push(...distinct)
    }
  }
  let chains: Array<ChainSlug> | null = null
  const chainList = problems.stringList(filters, "chains")
  if (chainList !== undefined) {
    if (chainList.length === 0) problems.add("filters.chains", "chains names no chain: send one or more, or leave it out for every chain")
    chains = []
    for (const value of chainList) {
      if (Chain.isChain(value)) {
        if (!chains.includes(value)) chains.push(value)
      } else problems.unsupported ??= { field: "filters.chains", value }
    }
  }
  return { channel: "spot.positions", wallets, chains }
}
