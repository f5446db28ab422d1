import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Schema } from "effect"
import * as Fixed from "../../../src/Fixed.js"
import * as Positions from "../../../src/market/Positions.js"
import { Position } from "../../../src/wire/Position.js"

const DECIMALS = 6
const UNIT = 10n ** BigInt(DECIMALS)
const f = Fixed.unsafeParse
/** Whole tokens as base units. */
const tokens = (n: number | string): bigint => Fixed.toBaseUnits(f(String(n)), DECIMALS)

interface FillInput {
  readonly amount: bigint
  readonly native: string
  readonly usd?: string
  readonly fees?: string
  readonly mcap?: string
  readonly at?: number
}

const fill = (input: FillInput): Positions.Fill => ({
  tokenAmount: input.amount,
  valueNative: f(input.native),
  valueUsd: f(input.usd ?? input.native),
  feesNative: f(input.fees ?? "0"),
  feesUsd: f(input.fees ?? "0"),
  marketCapNative: f(input.mcap ?? "0"),
  marketCapUsd: f(input.mcap ?? "0"),
  timestamp: input.at ?? 1_000
})

const tokenView = (price: string, overrides: Partial<Positions.PositionTokenView> = {}): Positions.PositionTokenView => ({
  address: "Tok1111111111111111111111111111111111111111",
  chain: "solana",
  decimals: DECIMALS,
  image: null,
  name: "Token",
  symbol: "TOK",
  priceNative: f(price),
  priceUsd: f(price),
  // a latest trade of one whole token for `price` native at 1 USD per native
  lastValueNative: f(price),
  lastUsdPerNative: Fixed.ONE,
  lastAmount: Fixed.ONE,
  marketCapNative: f("1000"),
  marketCapUsd: f("1000"),
  supply: tokens(1_000_000),
  hasMarket: true,
  isStablecoin: false,
  liquidityUsd: f("5000"),
  ...overrides
})

const unresolved: Positions.PositionFunding = {
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

const fresh = (at = 1_000) =>
  Positions.makePosition("Wal1111111111111111111111111111111111111111", "solana", "Tok1", DECIMALS, at)

const wire = (p: Positions.PositionState, price = "1", overrides: Partial<Positions.PositionTokenView> = {}) =>
  Positions.toWire(p, tokenView(price, overrides), unresolved, [])

const decodePosition = Schema.decodeUnknownSync(Position)

describe("Positions worked examples", () => {
  it("weighted average cost, realized and unrealized PnL within one cycle", () => {
    const p = fresh()
    Positions.applyBuy(p, fill({ amount: tokens(100), native: "100", at: 1_000 }))
    Positions.applyBuy(p, fill({ amount: tokens(100), native: "300", at: 2_000 }))
    let w = wire(p, "3")
    expect(w.avgCost).toEqual({ native: "2", usd: "2" })
    expect(w.invested).toEqual({ native: "400", usd: "400" })
    expect(w.status).toBe("open")
    expect(w.openedAt).toBe(1_000)

    Positions.applySell(p, fill({ amount: tokens(50), native: "200", at: 3_000 }))
    w = wire(p, "5")
    expect(w.realizedPnl).toEqual({ native: "100", usd: "100" })
    expect(w.received).toEqual({ native: "200", usd: "200" })
    expect(w.holdings).toBe("150")
    expect(w.avgCost).toEqual({ native: "2", usd: "2" })
    expect(w.value).toEqual({ native: "750", usd: "750" })
    expect(w.unrealizedPnl).toEqual({ native: "450", usd: "450" }) // (5 − 2) × 150
    expect(w.totalPnl).toEqual({ native: "550", usd: "550" })
    expect(w.pnlPct).toBe("137.5") // 550 / 400 × 100
    expect(w.tokensBought).toBe("200")
    expect(w.tokensSold).toBe("50")
    expect(w.buyCount).toBe(2)
    expect(w.sellCount).toBe(1)
    expect(w.version).toBe(3)
    expect(w.updatedAt).toBe(3_000)
    expect(w.closedAt).toBeUndefined()

    Positions.applySell(p, fill({ amount: tokens(150), native: "150", at: 4_000 }))
    w = wire(p, "1")
    expect(w.status).toBe("closed")
    expect(w.closedAt).toBe(4_000)
    expect(w.holdings).toBe("0")
    expect(w.realizedPnl).toEqual({ native: "-50", usd: "-50" }) // 100 + (150 − 2 × 150)
    expect(w.unrealizedPnl).toEqual({ native: "0", usd: "0" })
    expect(w.totalPnl).toEqual({ native: "-50", usd: "-50" })
    expect(w.pnlPct).toBe("-12.5")
    expect(w.avgCost).toEqual({ native: "2", usd: "2" }) // kept after the close
    expect(w.lifetime.cycleCount).toBe(1)
    expect(w.lifetime.winningCycleCount).toBe(0)
    expect(() => decodePosition(w)).not.toThrow()
  })

  it("a buy after the close opens a new cycle; lifetime keeps every cycle", () => {
    const p = fresh()
    Positions.applyBuy(p, fill({ amount: tokens(10), native: "10", fees: "0.5", at: 1_000 }))
    Positions.applySell(p, fill({ amount: tokens(10), native: "25", fees: "0.5", at: 2_000 }))
    Positions.applyBuy(p, fill({ amount: tokens(4), native: "8", fees: "0.25", at: 3_000 }))
    const w = wire(p, "2")
    expect(w.status).toBe("open")
    expect(w.openedAt).toBe(3_000)
    expect(w.closedAt).toBeUndefined()
    expect(w.invested).toEqual({ native: "8", usd: "8" })
    expect(w.realizedPnl).toEqual({ native: "0", usd: "0" })
    expect(w.fees).toEqual({ native: "0.25", usd: "0.25" })
    expect(w.buyCount).toBe(1)
    expect(w.sellCount).toBe(0)
    expect(w.avgExitMarketCap).toBeUndefined()
    expect(w.lifetime).toEqual({
      buyCount: 2,
      cycleCount: 2,
      fees: { native: "1.25", usd: "1.25" },
      invested: { native: "18", usd: "18" },
      realizedPnl: { native: "15", usd: "15" },
      received: { native: "25", usd: "25" },
      sellCount: 1,
      tokensBought: "14",
      tokensSold: "10",
      winningCycleCount: 1
    })
  })

  it("keeps fees out of PnL", () => {
    const p = fresh()
    Positions.applyBuy(p, fill({ amount: tokens(10), native: "10", fees: "3" }))
    Positions.applySell(p, fill({ amount: tokens(10), native: "12", fees: "3" }))
    const w = wire(p)
    expect(w.realizedPnl.native).toBe("2")
    expect(w.fees.native).toBe("6")
  })

  it("tracks native and USD cost separately, USD at each buy's time", () => {
    const p = fresh()
    // 1 native = 100 USD at the first buy, 200 USD at the second.
    Positions.applyBuy(p, fill({ amount: tokens(100), native: "1", usd: "100" }))
    Positions.applyBuy(p, fill({ amount: tokens(100), native: "1", usd: "200" }))
    Positions.applySell(p, fill({ amount: tokens(100), native: "1", usd: "150" }))
    const w = Positions.toWire(p, tokenView("0.01", { priceUsd: f("1.5"), lastUsdPerNative: f("150") }), unresolved, [])
    expect(w.avgCost).toEqual({ native: "0.01", usd: "1.5" })
    expect(w.realizedPnl).toEqual({ native: "0", usd: "0" })
    expect(w.unrealizedPnl).toEqual({ native: "0", usd: "0" })
  })

  it("values holdings at the latest trade's value ÷ amount (one rounding), not at the price served (truncated to 18 decimals)", () => {
    // an 18-decimal token of a huge supply: 3e13 whole tokens bought for 0.01 native at 599.9 USD
    const p = Positions.makePosition("Wal1111111111111111111111111111111111111111", "bsc", "Tok1", 18, 1_000)
    const amount = 30_000_000_000_000n * 10n ** 18n
    Positions.applyBuy(p, { ...fill({ amount, native: "0.01", usd: "5.999" }) })
    const view = tokenView("0", {
      decimals: 18,
      priceNative: Fixed.div(f("0.01"), f("30000000000000")), // 0.000000000000000333
      priceUsd: Fixed.div(f("5.999"), f("30000000000000")),
      lastValueNative: f("0.01"),
      lastUsdPerNative: f("599.9"),
      lastAmount: f("30000000000000")
    })
    const w = Positions.toWire(p, view, unresolved, [])
    expect(w.token.price.native).toBe("0.000000000000000333")
    expect(w.value).toEqual({ native: "0.01", usd: "5.999" })
    expect(w.unrealizedPnl).toEqual({ native: "0", usd: "0" })
    expect(w.pnlPct).toBe("0")
    // a second holder of a third of that, at the same trade: a third of the value, rounded once
    const q = Positions.makePosition("Wal2222222222222222222222222222222222222222", "bsc", "Tok1", 18, 1_000)
    Positions.applyBuy(q, { ...fill({ amount: amount / 3n, native: "0.003", usd: "1.7997" }) })
    expect(Positions.toWire(q, view, unresolved, []).value).toEqual({ native: "0.003333333333333333", usd: "1.999666666666666666" })
  })

  it("weights entry and exit market caps by amount", () => {
    const p = fresh()
    Positions.applyBuy(p, fill({ amount: tokens(100), native: "1", mcap: "1000" }))
    Positions.applyBuy(p, fill({ amount: tokens(300), native: "1", mcap: "2000" }))
    Positions.applySell(p, fill({ amount: tokens(50), native: "1", mcap: "3000" }))
    Positions.applySell(p, fill({ amount: tokens(150), native: "1", mcap: "5000" }))
    const w = wire(p)
    expect(w.avgEntryMarketCap).toEqual({ native: "1750", usd: "1750" })
    expect(w.avgExitMarketCap).toEqual({ native: "4500", usd: "4500" })
  })

  it("a position opened by a transfer has zero cost and realizes nothing on its sells", () => {
    const p = fresh()
    Positions.applyTransferIn(p, tokens(1_000), 1_000)
    Positions.applySell(p, fill({ amount: tokens(400), native: "40", at: 2_000 }))
    const w = wire(p, "0.5")
    expect(w.isTransfer).toBe(true)
    expect(w.status).toBe("open")
    expect(w.invested).toEqual({ native: "0", usd: "0" })
    expect(w.received).toEqual({ native: "40", usd: "40" })
    expect(w.realizedPnl).toEqual({ native: "0", usd: "0" })
    expect(w.sellCount).toBe(1)
    expect(w.tokensSold).toBe("400")
    expect(w.avgCost).toEqual({ native: "0", usd: "0" })
    expect(w.value).toEqual({ native: "300", usd: "300" })
    expect(w.unrealizedPnl).toEqual({ native: "300", usd: "300" }) // zero cost basis
    expect(w.pnlPct).toBeNull() // nothing invested
    Positions.applySell(p, fill({ amount: tokens(600), native: "60", at: 3_000 }))
    const closed = wire(p)
    expect(closed.status).toBe("closed")
    expect(closed.lifetime.winningCycleCount).toBe(0)
    expect(closed.lifetime.cycleCount).toBe(1)
  })

  it("a buy in a transfer-opened cycle: still isTransfer (no buy opened it), transferred tokens keep zero cost, later sells realize", () => {
    const p = fresh()
    Positions.applyTransferIn(p, tokens(100), 1_000)
    Positions.applyBuy(p, fill({ amount: tokens(100), native: "100", at: 2_000 }))
    const w = wire(p, "1")
    expect(w.isTransfer).toBe(true)
    expect(w.invested).toEqual({ native: "100", usd: "100" })
    expect(w.openedAt).toBe(1_000)
    expect(w.avgCost).toEqual({ native: "0.5", usd: "0.5" })
    expect(w.lifetime.cycleCount).toBe(1)
    Positions.applySell(p, fill({ amount: tokens(100), native: "100", at: 3_000 }))
    expect(wire(p).realizedPnl).toEqual({ native: "50", usd: "50" })
  })

  it("a transfer out removes cost basis proportionally and realizes nothing", () => {
    const p = fresh()
    Positions.applyBuy(p, fill({ amount: tokens(100), native: "100", at: 1_000 }))
    Positions.applyTransferOut(p, tokens(25), 2_000)
    let w = wire(p, "2")
    expect(w.holdings).toBe("75")
    expect(w.avgCost).toEqual({ native: "1", usd: "1" })
    expect(w.realizedPnl).toEqual({ native: "0", usd: "0" })
    expect(w.received).toEqual({ native: "0", usd: "0" })
    expect(w.unrealizedPnl).toEqual({ native: "75", usd: "75" })
    expect(w.invested).toEqual({ native: "100", usd: "100" })
    expect(w.pnlPct).toBe("75")
    Positions.applyTransferOut(p, tokens(500), 3_000) // capped at the 75 held
    w = wire(p, "2")
    expect(w.status).toBe("closed")
    expect(w.closedAt).toBe(3_000)
    expect(w.holdings).toBe("0")
    expect(w.realizedPnl).toEqual({ native: "0", usd: "0" })
  })

  it("selling more than was seen arriving treats the excess as received without cost", () => {
    const p = fresh()
    Positions.applySell(p, fill({ amount: tokens(10), native: "5", at: 1_000 }))
    let w = wire(p)
    expect(w.isTransfer).toBe(true)
    expect(w.status).toBe("closed")
    expect(w.openedAt).toBe(1_000)
    expect(w.closedAt).toBe(1_000)
    expect(w.realizedPnl.native).toBe("0")
    expect(w.received.native).toBe("5")
    expect(w.version).toBe(1)

    const q = fresh()
    Positions.applyBuy(q, fill({ amount: tokens(10), native: "10" }))
    Positions.applySell(q, fill({ amount: tokens(20), native: "30" }))
    w = wire(q)
    expect(w.status).toBe("closed")
    expect(w.holdings).toBe("0")
    expect(w.realizedPnl.native).toBe("20") // 30 received for 10 of cost; the unseen 10 cost nothing
  })

  it("a transfer out of a wallet that never held the token changes nothing but the version", () => {
    const p = fresh(500)
    Positions.applyTransferOut(p, tokens(1), 1_000)
    const w = wire(p)
    expect(w.version).toBe(1)
    expect(w.updatedAt).toBe(1_000)
    expect(w.lifetime.cycleCount).toBe(0)
    expect(w.closedAt).toBeUndefined()
  })

  it("reports value and PnL as null for a token with no market record", () => {
    const p = fresh()
    Positions.applyBuy(p, fill({ amount: tokens(1), native: "1" }))
    const w = wire(p, "2", { hasMarket: false })
    expect(w.value).toBeNull()
    expect(w.unrealizedPnl).toBeNull()
    expect(w.totalPnl).toBeNull()
    expect(w.pnlPct).toBeNull()
    expect(w.realizedPnl).toEqual({ native: "0", usd: "0" })
    expect(() => decodePosition(w)).not.toThrow()
  })

  it("fills the token, share of supply, funding and identities", () => {
    const p = fresh()
    Positions.applyBuy(p, fill({ amount: tokens(2_500), native: "1" }))
    const identity: Positions.IdentityProfileValue = {
      source: "partner",
      handle: "h",
      displayName: null,
      avatar: null,
      twitter: null,
      telegram: null,
      farcaster: null
    }
    const w = Positions.toWire(p, tokenView("0.001", { isStablecoin: true }), unresolved, [identity])
    expect(w.product).toBe("spot")
    expect(w.walletAddress).toBe("Wal1111111111111111111111111111111111111111")
    expect(w.holdingsPctSupply).toBe("0.25")
    expect(w.isStablecoin).toBe(true)
    expect(w.token.price).toEqual({ native: "0.001", usd: "0.001" })
    expect(w.token.marketCap).toEqual({ native: "1000", usd: "1000" })
    expect(w.funding).toEqual(unresolved)
    expect(w.identities).toEqual([identity])
    expect("identities" in wire(p)).toBe(false)
    expect(() => decodePosition(w)).not.toThrow()
  })
})

// ---------------------------------------------------------------------------------------------
// Random sequences

const intBetween = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

/** [kind, size 1..1000000, native price per whole token in thousandths, native→USD rate, mcap, fee] */
const Step = Schema.Tuple([
  Schema.Literals(["buy", "sellPart", "sellAll", "transferIn", "transferOutPart", "transferOutAll"]),
  intBetween(1, 1_000_000),
  intBetween(1, 5_000),
  intBetween(1, 300),
  intBetween(0, 10_000),
  intBetween(0, 50)
])
type Step = typeof Step.Type
const steps = Schema.Array(Step).check(Schema.isMaxLength(60))
const tradeSteps = Schema.Array(
  Schema.Tuple([Schema.Literals(["buy", "sellPart", "sellAll"]), intBetween(1, 1_000_000), intBetween(1, 5_000), intBetween(1, 300), intBetween(0, 10_000), intBetween(0, 50)])
).check(Schema.isMaxLength(60))

interface Applied {
  readonly kind: "buy" | "sell" | "transferIn" | "transferOut"
  readonly fill: Positions.Fill | null
  readonly amount: bigint
  /** Holdings before the step. */
  readonly before: bigint
}

/**
 * Applies a random sequence, never selling or moving out more than is held, and returns what was
 * applied. `onStep` sees the state after each step.
 */
const run = (
  input: ReadonlyArray<Step>,
  onStep: (p: Positions.PositionState, applied: Applied, index: number) => void = () => {},
  /** Each step's date (cycled); default one second apart, in order. */
  dates?: ReadonlyArray<number>
): Positions.PositionState => {
  const p = fresh(0)
  input.forEach(([kind, size, price, rate, mcap, fee], i) => {
    const at = dates === undefined || dates.length === 0 ? 1_000 * (i + 1) : dates[i % dates.length]!
    const before = p.holdings
    const amountOf = (part: boolean): bigint => (part ? (before * BigInt(size)) / 1_000_000n || 1n : before)
    const fillOf = (amount: bigint): Positions.Fill => {
      const valueNative = (BigInt(price) * 10n ** 15n * amount) / UNIT
      return {
        tokenAmount: amount,
        valueNative,
        valueUsd: valueNative * BigInt(rate),
        feesNative: BigInt(fee) * 10n ** 15n,
        feesUsd: BigInt(fee) * 10n ** 15n * BigInt(rate),
        marketCapNative: BigInt(mcap) * 10n ** 18n,
        marketCapUsd: BigInt(mcap) * BigInt(rate) * 10n ** 18n,
        timestamp: at
      }
    }
    let applied: Applied
    if (kind === "buy" || ((kind === "sellPart" || kind === "sellAll") && before === 0n)) {
      const amount = BigInt(size) * 1_000n
      const fl = fillOf(amount)
      Positions.applyBuy(p, fl)
      applied = { kind: "buy", fill: fl, amount, before }
    } else if (kind === "sellPart" || kind === "sellAll") {
      const amount = amountOf(kind === "sellPart")
      const fl = fillOf(amount)
      Positions.applySell(p, fl)
      applied = { kind: "sell", fill: fl, amount, before }
    } else if (kind === "transferIn" || (kind === "transferOutPart" && before === 0n)) {
      const amount = BigInt(size) * 1_000n
      Positions.applyTransferIn(p, amount, at)
      applied = { kind: "transferIn", fill: null, amount, before }
    } else {
      // From an empty balance this moves nothing: still a change of the position (its version).
      const amount = amountOf(kind === "transferOutPart")
      Positions.applyTransferOut(p, amount, at)
      applied = { kind: "transferOut", fill: null, amount, before }
    }
    onStep(p, applied, i)
  })
  return p
}

/** Exact rational arithmetic for the reference model. */
interface Ratio {
  readonly n: bigint
  readonly d: bigint
}
const ratio = (n: bigint, d = 1n): Ratio => ({ n, d })
const add = (a: Ratio, b: Ratio): Ratio => ({ n: a.n * b.d + b.n * a.d, d: a.d * b.d })
const sub = (a: Ratio, b: Ratio): Ratio => add(a, { n: -b.n, d: b.d })
const scale = (a: Ratio, n: bigint, d: bigint): Ratio => ({ n: a.n * n, d: a.d * d })
const toFixedFloor = (a: Ratio): bigint => a.n / a.d

describe("Positions properties", () => {
  it.prop("holdings equal tokens bought minus tokens sold without transfers", [tradeSteps], ([input]) => {
    const p = run(input, (state) => {
      expect(state.holdings).toBe(state.lifetimeTokensBought - state.lifetimeTokensSold)
      expect(state.holdings).toBe(state.tokensBought - state.tokensSold)
    })
    expect(p.holdings >= 0n).toBe(true)
  })

  it.prop("open exactly while tokens are held; a closed position holds nothing and has closedAt", [steps], ([input]) => {
    run(input, (p, applied, i) => {
      const w = wire(p)
      if (applied.before > 0n && p.holdings === 0n) expect(w.closedAt).toBe(1_000 * (i + 1))
      if (w.status === "closed") {
        expect(p.holdings).toBe(0n)
        expect(w.holdings).toBe("0")
        // A no-op transfer out after the close moves updatedAt, never closedAt.
        if (p.cycleCount === 0) expect(w.closedAt).toBeUndefined()
        else expect(w.closedAt! <= p.updatedAt && w.closedAt! >= w.openedAt).toBe(true)
      } else {
        expect(p.holdings > 0n).toBe(true)
        expect(w.closedAt).toBeUndefined()
      }
    })
  })

  it.prop("version rises by exactly one per apply and updatedAt is the last apply's time", [steps], ([input]) => {
    let previous = 0
    run(input, (p, _applied, i) => {
      expect(p.version).toBe(previous + 1)
      expect(p.updatedAt).toBe(1_000 * (i + 1))
      previous = p.version
    })
  })

  it.prop(
    "events dated in any order: the times never go back (updatedAt the latest date so far, openedAt ≤ closedAt ≤ updatedAt)",
    [steps, Schema.Array(intBetween(1, 100_000)).check(Schema.isMaxLength(20))],
    ([input, dates]) => {
      let latest = 0
      run(input, (p, _applied, i) => {
        latest = Math.max(latest, dates.length === 0 ? 1_000 * (i + 1) : dates[i % dates.length]!)
        expect(p.updatedAt).toBe(latest)
        const w = wire(p)
        expect(w.openedAt <= w.updatedAt).toBe(true)
        if (w.closedAt !== undefined) expect(w.openedAt <= w.closedAt && w.closedAt <= w.updatedAt).toBe(true)
      }, dates)
    }
  )

  it("a late event counts at the position's updatedAt: a late sell cannot close a position before it opened", () => {
    const p = fresh(10_000)
    Positions.applyBuy(p, fill({ amount: tokens(1), native: "1", at: 10_000 }))
    Positions.applySell(p, fill({ amount: tokens(1), native: "2", at: 0 }))
    const w = wire(p)
    expect(w.status).toBe("closed")
    expect([w.openedAt, w.closedAt, w.updatedAt]).toEqual([10_000, 10_000, 10_000])
    // its figures are the sell's all the same
    expect(w.realizedPnl).toEqual({ native: "1", usd: "1" })
  })

  it.prop("the average cost is set when tokens come in, kept when they leave, and reading it changes nothing", [steps], ([input]) => {
    let expectedNative = 0n
    let expectedUsd = 0n
    const watched = run(input, (state, applied) => {
      if (applied.before === 0n && (applied.kind === "buy" || applied.kind === "transferIn")) {
        expectedNative = 0n // a new cycle starts from no average
        expectedUsd = 0n
      }
      if ((applied.kind === "buy" || applied.kind === "transferIn") && state.holdings > 0n) {
        expectedNative = (state.costBasisNative * UNIT) / state.holdings
        expectedUsd = (state.costBasisUsd * UNIT) / state.holdings
      }
      expect(state.avgCostNative).toBe(expectedNative)
      expect(state.avgCostUsd).toBe(expectedUsd)
    })
    // The same steps with nothing read in between end in the same position.
    const unwatched = run(input)
    expect(JSON.stringify(wire(unwatched))).toBe(JSON.stringify(wire(watched)))
  })

  it.prop("lifetime sums every cycle and counts winning closed cycles", [steps], ([input]) => {
    let closedRealizedUsd = 0n
    let closedRealizedNative = 0n
    let winning = 0
    let cycles = 0
    let investedNative = 0n
    let investedUsd = 0n
    let receivedUsd = 0n
    let feesUsd = 0n
    const p = run(input, (state, applied) => {
      if (applied.before === 0n && (applied.kind === "buy" || applied.kind === "transferIn" || applied.kind === "sell"))
        cycles++
      if (applied.fill !== null) feesUsd += applied.fill.feesUsd
      if (applied.kind === "buy") {
        investedNative += applied.fill!.valueNative
        investedUsd += applied.fill!.valueUsd
      }
      if (applied.kind === "sell") receivedUsd += applied.fill!.valueUsd
      if (state.holdings === 0n && applied.before > 0n) {
        closedRealizedUsd += state.realizedPnlUsd
        closedRealizedNative += state.realizedPnlNative
        if (state.realizedPnlUsd > 0n) winning++
      }
    })
    const openRealizedUsd = p.holdings > 0n ? p.realizedPnlUsd : 0n
    const openRealizedNative = p.holdings > 0n ? p.realizedPnlNative : 0n
    expect(p.lifetimeRealizedPnlUsd).toBe(closedRealizedUsd + openRealizedUsd)
    expect(p.lifetimeRealizedPnlNative).toBe(closedRealizedNative + openRealizedNative)
    expect(p.lifetimeInvestedNative).toBe(investedNative)
    expect(p.lifetimeInvestedUsd).toBe(investedUsd)
    expect(p.lifetimeReceivedUsd).toBe(receivedUsd)
    expect(p.lifetimeFeesUsd).toBe(feesUsd)
    expect(p.cycleCount).toBe(cycles)
    expect(p.winningCycleCount).toBe(winning)
    expect(p.winningCycleCount <= p.cycleCount).toBe(true)
  })

  it.prop("a transfer position with no buy in its cycle has invested nothing and realized nothing", [steps], ([input]) => {
    run(input, (p) => {
      if (p.isTransfer && p.buyCount === 0) {
        expect(p.investedNative).toBe(0n)
        expect(p.investedUsd).toBe(0n)
        expect(p.realizedPnlNative).toBe(0n)
        expect(p.realizedPnlUsd).toBe(0n)
        expect(p.buyCount).toBe(0)
        expect(wire(p).pnlPct).toBeNull()
      }
    })
  })

  it.prop("realized PnL matches an exact weighted-average-cost model within rounding", [steps], ([input]) => {
    // Reference: cost basis of the held tokens as an exact ratio; transfers in at zero cost.
    let cost = ratio(0n)
    let held = 0n
    let transferCycle = false
    let openedByTransfer = false
    let realized = ratio(0n)
    let steps = 0
    run(input, (p, applied) => {
      steps++
      if (applied.before === 0n && applied.kind !== "transferOut") {
        cost = ratio(0n)
        realized = ratio(0n)
        transferCycle = applied.kind !== "buy"
        openedByTransfer = applied.kind !== "buy"
      }
      // isTransfer: no buy opened the current cycle (spec: hideTransfers "drops positions no buy opened").
      expect(p.isTransfer).toBe(openedByTransfer)
      if (applied.kind === "buy") {
        transferCycle = false
        cost = add(cost, ratio(applied.fill!.valueNative))
        held += applied.amount
      } else if (applied.kind === "transferIn") {
        held += applied.amount
      } else if (applied.amount > 0n) {
        const out = scale(cost, applied.amount, held)
        cost = sub(cost, out)
        held -= applied.amount
        if (applied.kind === "sell" && !transferCycle) realized = add(realized, sub(ratio(applied.fill!.valueNative), out))
      }
      expect(p.holdings).toBe(held)
      // Each proportional removal truncates by less than 1e-18; allow one unit per step.
      const error = p.realizedPnlNative - toFixedFloor(realized)
      expect(error >= -BigInt(steps) && error <= BigInt(steps)).toBe(true)
      const costError = p.costBasisNative - toFixedFloor(cost)
      expect(costError >= -BigInt(steps) && costError <= BigInt(steps)).toBe(true)
    })
  })

  it.prop("the wire form always decodes as a spec Position and carries valuationOf's figures", [steps, intBetween(0, 10_000)], ([input, price]) => {
    const p = run(input)
    const view = tokenView(String(price / 1000))
    const w = Positions.toWire(p, view, unresolved, [])
    expect(() => decodePosition(w)).not.toThrow()
    if (p.investedUsd > 0n) expect(w.pnlPct).not.toBeNull()
    // The read's sort keys come from valuationOf: they must be the very figures on the wire.
    const v = Positions.valuationOf(p, view)!
    expect(w.value!.usd).toBe(Fixed.format(v.valueUsd))
    expect(w.totalPnl!.usd).toBe(Fixed.format(v.totalPnlUsd))
    expect(w.pnlPct).toBe(v.pnlPct === null ? null : Fixed.format(v.pnlPct))
    expect(v.totalPnlUsd).toBe(p.realizedPnlUsd + v.unrealizedPnlUsd)
  })
})

describe("Positions average entry and exit market caps", () => {
  it("stay within the fills' market caps and within one unit per fill of the exact amount-weighted mean", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 30n }), fc.bigInt({ min: 0n, max: 10n ** 33n })), { minLength: 1, maxLength: 20 }),
        (buys) => {
          const p = fresh()
          for (const [amount, mcap] of buys) {
            Positions.applyBuy(p, { ...fill({ amount, native: "1" }), marketCapNative: mcap, marketCapUsd: mcap })
          }
          const caps = buys.map(([, mcap]) => mcap)
          const low = caps.reduce((a, b) => (a < b ? a : b))
          const high = caps.reduce((a, b) => (a > b ? a : b))
          const average = p.avgEntryMarketCapUsd
          expect(average >= low && average <= high).toBe(true)
          const total = buys.reduce((sum, [amount]) => sum + amount, 0n)
          const exact = buys.reduce((sum, [amount, mcap]) => sum + amount * mcap, 0n) / total
          const drift = exact - average
          expect(drift >= 0n && drift <= BigInt(buys.length)).toBe(true)
          expect(wire(p).avgEntryMarketCap).toEqual({ native: Fixed.format(average), usd: Fixed.format(average) })
        }
      )
    )
  })
})

describe("PositionBook", () => {
  it("keeps every position whatever the order slots open in: across the growth of its first chunk and past it", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 200 }), (slots) => {
        const book = new Positions.PositionBook("solana", "Tok1", DECIMALS)
        slots.forEach((slot, i) => {
          expect(book.open(slot, `Wal${slot}`, 1_000 + i)).toBe(true)
          Positions.applyBuy(book.at(slot), fill({ amount: tokens(slot + 1), native: String(slot + 1), at: 1_000 + i }))
          // every position opened so far still holds what it bought, whichever chunk it is in
          for (const earlier of slots.slice(0, i + 1)) expect(book.at(earlier).holdings).toBe(tokens(earlier + 1))
        })
        expect(book.open(slots[0]!, "Wal-again", 9_999)).toBe(false)
        expect([...book.slots()]).toEqual([...slots].sort((a, b) => a - b))
        for (let slot = 0; slot <= 301; slot++) expect(book.has(slot)).toBe(slots.includes(slot))
        expect(book.size).toBe(slots.length)
        for (const slot of slots) {
          const position = book.at(slot)
          expect(position.wallet).toBe(`Wal${slot}`)
          expect(position.buyCount).toBe(1)
          expect(position.investedNative).toBe(f(String(slot + 1)))
        }
      }),
      { numRuns: 30 }
    )
  })
})
