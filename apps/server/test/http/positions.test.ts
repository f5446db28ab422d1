/**
 * GET /v1/positions on the real server (spec "GET /v1/positions"): every filter, switch and sort
 * checked against a brute-force reading of the same market, keyset paging with counts that stay
 * the same across pages, and every refusal the spec lists.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { MarketEvent, Position, PositionsPage as PositionsPageType } from "@spot/domain"
import { Chain, Fixed, PositionsPage } from "@spot/domain"
import { Events } from "@spot/domain/testing"
import type { ReadApi, SimulatedMarket } from "./support/ReadApi.js"
import { expectError, expectWire, query, simulatedMarket, startReadApi } from "./support/ReadApi.js"

type Params = Record<string, string | number | boolean>
const key = (p: Position) => `${p.chain}:${p.token.address}:${p.walletAddress}`
const usd = (money: { readonly usd: string } | null | undefined): Fixed.Fixed | null =>
  money === null || money === undefined ? null : Fixed.unsafeParse(money.usd)

const sortKeyOf = (p: Position, field: string): bigint | number | null => {
  switch (field) {
    case "value":
      return usd(p.value)
    case "pnl":
      return usd(p.totalPnl)
    case "pnlPct":
      return p.pnlPct === null || p.pnlPct === undefined ? null : Fixed.unsafeParse(p.pnlPct)
    case "openedAt":
      return p.openedAt
    default:
      return p.closedAt ?? null
  }
}

const canonicalWallet = (wallet: string) => (wallet.startsWith("0x") ? wallet.toLowerCase() : wallet)
const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The spec's order as a client would check it: the field (nulls last either way), then chain, token, wallet. */
const expectSorted = (positions: ReadonlyArray<Position>, field: string, direction: "asc" | "desc") => {
  for (let i = 1; i < positions.length; i++) {
    const a = positions[i - 1]!
    const b = positions[i]!
    const ka = sortKeyOf(a, field)
    const kb = sortKeyOf(b, field)
    let order: number
    if (ka === null || kb === null) order = ka === kb ? 0 : ka === null ? 1 : -1
    else order = (ka < kb ? -1 : ka > kb ? 1 : 0) * (direction === "desc" ? -1 : 1)
    if (order === 0) {
      order = text(a.chain, b.chain) ||
        text(Chain.canonicalAddress(a.chain, a.token.address), Chain.canonicalAddress(b.chain, b.token.address)) ||
        text(canonicalWallet(a.walletAddress), canonicalWallet(b.walletAddress))
    }
    expect(order, `${field}:${direction} at ${i}: ${key(a)} before ${key(b)}`).toBeLessThan(0)
  }
}

/**
 * Two hand-made Solana tokens held by `wallets`: one bought in a pool of 150 USD liquidity (under
 * the 1,000 USD floor), one only airdropped (no market record: no price, no value).
 */
const thinMarketEvents = (wallets: ReadonlyArray<string>, at: number): Array<MarketEvent> => {
  const thin = "Thin11111111111111111111111111111111111111"
  const airdrop = "Airdrop1111111111111111111111111111111111111"
  const launch = (token: string, id: string): MarketEvent =>
    Events.launch({ id, timestamp: at, token, metadata: Events.metadata(id, id.toUpperCase()) })
  const events: Array<MarketEvent> = [
    launch(thin, "thinpool"),
    launch(airdrop, "airdropped"),
    {
      type: "liquidityChanged",
      id: "thinpool-liquidity",
      timestamp: at,
      chain: "solana",
      token: thin,
      pool: "ThinPoo111111111111111111111111111111111111",
      dex: "raydium",
      anchorAddress: Chain.nativeAsset.solana.address,
      anchorSymbol: "SOL",
      liquidityNative: 1_000_000_000n,
      nativeUsd: "150",
      block: null
    }
  ]
  wallets.forEach((trader, i) => {
    events.push(Events.swap({
      id: `thinpool-buy-${i}`,
      timestamp: at,
      token: thin,
      pool: "ThinPoo111111111111111111111111111111111111",
      trader,
      transactionHash: `thinpool-buy-tx-${i}`,
      block: 2,
      indexInBlock: i,
      tokenAmount: 5_000_000_000n,
      quoteAmount: 100_000_000n
    }))
    events.push(Events.transfer({ id: `airdropped-${i}`, timestamp: at, token: airdrop, to: trader, transactionHash: `airdropped-tx-${i}`, block: 2 }))
  })
  return events
}

const lowLiquidityFloor = Fixed.fromInt(1_000)
const dustFloor = Fixed.ONE

describe("GET /v1/positions", () => {
  let api: ReadApi
  let simulated: SimulatedMarket
  let wallets: Array<string>
  let walletList: string

  beforeAll(async () => {
    simulated = simulatedMarket({ minutes: 5, seed: 5, tradesPerSecond: 40, launchesPerMinute: 30 })
    const engine = simulated.market.engine
    // 100 wallets covering every case the switches decide on: dust, transfers, closed positions
    // (from the simulation), low liquidity and no market at all (hand-made tokens below).
    const perWallet = new Map<string, number>()
    const chosen = new Set<string>()
    for (const token of engine.allTokens()) {
      for (const entry of engine.positionsOfToken(token)) {
        const wallet = entry.state.wallet
        perWallet.set(wallet, (perWallet.get(wallet) ?? 0) + 1)
        const wire = engine.positionWire(entry)
        const dust = wire.status === "open" && (usd(wire.value) ?? 0n) < dustFloor
        if (chosen.size < 30 && (dust || wire.isTransfer)) chosen.add(wallet)
      }
    }
    const byCount = [...perWallet].sort((a, b) => b[1] - a[1] || text(a[0], b[0])).map(([w]) => w)
    const solanaWallets = byCount.filter((w) => !w.startsWith("0x")).slice(0, 6)
    for (const wallet of solanaWallets) chosen.add(wallet)
    for (const wallet of byCount) if (chosen.size < 100) chosen.add(wallet)
    wallets = [...chosen]
    walletList = wallets.join(",")
    const outcome = simulated.market.apply(thinMarketEvents(solanaWallets, simulated.endTime))
    expect(outcome.rejected).toEqual([])
    api = await startReadApi({ market: simulated.market })
  })
  afterAll(() => api.close())

  const read = async (params: Params): Promise<PositionsPageType> =>
    expectWire(PositionsPage, await api.get(`/v1/positions${query(params)}`))

  /** Every page of a read; checks counts and asOf-independent invariants between pages. */
  const readAll = async (params: Params) => {
    const pages: Array<PositionsPageType> = [await read(params)]
    while (pages[pages.length - 1]!.hasMore) {
      const last = pages[pages.length - 1]!
      expect(last.nextCursor).not.toBeNull()
      pages.push(await read({ ...params, cursor: last.nextCursor! }))
      expect(pages.length).toBeLessThan(500)
    }
    expect(pages[pages.length - 1]!.nextCursor).toBeNull()
    for (const page of pages) expect(page.counts).toEqual(pages[0]!.counts)
    const positions = pages.flatMap((p) => p.positions)
    expect(new Set(positions.map(key)).size, "no position twice").toBe(positions.length)
    return { pages, positions, counts: pages[0]!.counts }
  }

  /** Brute force: every position of the wallets, from the market itself. */
  const marketPositions = () => {
    const engine = simulated.market.engine
    return engine.positionsOfWallets(wallets).map((entry) => ({ wire: engine.positionWire(entry), liquidityUsd: entry.token.liquidityUsd }))
  }
  const liquidityOf = (p: Position) => simulated.market.engine.token(p.chain, p.token.address)!.liquidityUsd

  it("answers every position of the wallets with the PositionsPage wire schema, and counts them by lifecycle", async () => {
    const all = marketPositions()
    const open = await readAll({ wallets: walletList, hideLowLiquidity: false, limit: 100 })
    const closed = await readAll({ wallets: walletList, lifecycle: "closed", limit: 100 })
    const expectedOpen = all.filter((p) => p.wire.status === "open").map((p) => key(p.wire as Position))
    const expectedClosed = all.filter((p) => p.wire.status === "closed").map((p) => key(p.wire as Position))
    expect(expectedOpen.length).toBeGreaterThan(100)
    expect(expectedClosed.length).toBeGreaterThan(5)
    expect(open.positions.map(key).sort()).toEqual(expectedOpen.sort())
    expect(closed.positions.map(key).sort()).toEqual(expectedClosed.sort())
    expect(open.counts).toEqual({ spot: { open: expectedOpen.length, closed: expectedClosed.length } })
    expect(closed.counts).toEqual(open.counts)
    for (const p of open.positions) expect(p.status).toBe("open")
    for (const p of closed.positions) expect(p.status).toBe("closed")
    for (const p of [...open.positions, ...closed.positions]) {
      expect(p.product).toBe("spot")
      expect(wallets).toContain(p.walletAddress)
    }
  })

  it("reads EVM wallet addresses in any letter case, and a wallet named twice once", async () => {
    const evm = wallets.filter((w) => w.startsWith("0x")).slice(0, 10)
    expect(evm.length).toBeGreaterThan(0)
    const plain = await readAll({ wallets: evm.join(","), hideLowLiquidity: false })
    const shouted = await readAll({ wallets: [...evm.map((w) => `0x${w.slice(2).toUpperCase()}`), evm[0]!].join(","), hideLowLiquidity: false })
    expect(plain.positions.length).toBeGreaterThan(0)
    expect(shouted.positions.map(key)).toEqual(plain.positions.map(key))
    expect(shouted.counts).toEqual(plain.counts)
  })

  it("answers asOf as the serve time", async () => {
    const before = Date.now()
    const page = await read({ wallets: walletList })
    expect(page.asOf).toBeGreaterThanOrEqual(before)
    expect(page.asOf).toBeLessThanOrEqual(Date.now())
  })

  it("keeps counts.spot identical across the pages of a read, whatever the filters", async () => {
    const reference = (await read({ wallets: walletList })).counts
    for (const params of [
      { wallets: walletList, limit: 7 },
      { wallets: walletList, limit: 9, lifecycle: "closed" },
      { wallets: walletList, limit: 11, hideDust: true, hideTransfers: true, q: "a" }
    ]) {
      const { pages, counts } = await readAll(params)
      expect(pages.length).toBeGreaterThan(1)
      expect(counts).toEqual(reference)
    }
  })

  it("sorts by value:desc for open and closedAt:desc for closed by default, ties by chain, token and wallet", async () => {
    expectSorted((await readAll({ wallets: walletList, hideLowLiquidity: false, limit: 13 })).positions, "value", "desc")
    expectSorted((await readAll({ wallets: walletList, lifecycle: "closed", limit: 13 })).positions, "closedAt", "desc")
  })

  it("sorts by every field in both directions, pages holding the same rows as one big page", async () => {
    for (const lifecycle of ["open", "closed"] as const) {
      for (const field of ["value", "pnl", "pnlPct", "openedAt", "closedAt"]) {
        for (const direction of ["asc", "desc"] as const) {
          const params = { wallets: walletList, lifecycle, hideLowLiquidity: false, sort: `${field}:${direction}` }
          const paged = await readAll({ ...params, limit: 40 })
          const whole = await readAll({ ...params, limit: 100 })
          expectSorted(paged.positions, field, direction)
          expect(paged.positions.map(key)).toEqual(whole.positions.map(key))
        }
      }
    }
  })

  describe("filters and switches, against the brute force", () => {
    let allOpen: Array<Position>
    beforeAll(async () => {
      allOpen = [...(await readAll({ wallets: walletList, hideLowLiquidity: false, limit: 100 })).positions]
    })

    const expectSubset = async (params: Params, keep: (p: Position) => boolean, what: string) => {
      const served = (await readAll({ wallets: walletList, limit: 100, ...params })).positions
      const expected = allOpen.filter(keep)
      expect(expected.length, `${what}: some rows kept`).toBeGreaterThan(0)
      expect(expected.length, `${what}: some rows dropped`).toBeLessThan(allOpen.length)
      expect(served.map(key)).toEqual(expected.map(key))
    }

    it("hideLowLiquidity (on by default) drops open positions in tokens with under 1,000 USD liquidity", async () => {
      const keep = (p: Position) => liquidityOf(p) >= lowLiquidityFloor
      await expectSubset({}, keep, "default")
      await expectSubset({ hideLowLiquidity: true }, keep, "hideLowLiquidity=true")
    })

    it("hideDust drops open positions worth under 1 USD (or with no price)", async () => {
      await expectSubset({ hideLowLiquidity: false, hideDust: true }, (p) => (usd(p.value) ?? -1n) >= dustFloor, "hideDust")
    })

    it("hideTransfers drops positions no buy opened", async () => {
      await expectSubset({ hideLowLiquidity: false, hideTransfers: true }, (p) => !p.isTransfer, "hideTransfers")
    })

    it("the hide switches combine", async () => {
      await expectSubset(
        { hideDust: true, hideTransfers: true },
        (p) => liquidityOf(p) >= lowLiquidityFloor && (usd(p.value) ?? -1n) >= dustFloor && !p.isTransfer,
        "all switches"
      )
    })

    it("q keeps tokens whose symbol or name contains it, in any letter case", async () => {
      const symbol = allOpen.map((p) => p.token.symbol).find((s) => s.length >= 3)!
      const q = symbol.slice(1, 3)
      const matches = (p: Position) => p.token.symbol.toLowerCase().includes(q.toLowerCase()) || p.token.name.toLowerCase().includes(q.toLowerCase())
      for (const spelling of [q, q.toUpperCase(), q.toLowerCase()]) {
        await expectSubset({ hideLowLiquidity: false, q: spelling }, matches, `q=${spelling}`)
      }
    })

    it("chain and token together read one token's positions of the wallets", async () => {
      const target = allOpen[0]!
      const served = (await readAll({ wallets: walletList, hideLowLiquidity: false, chain: target.chain, token: target.token.address })).positions
      expect(served.map(key)).toEqual(allOpen.filter((p) => p.chain === target.chain && p.token.address === target.token.address).map(key))
    })

    it("chains narrows the read to the listed chains, and counts follow it", async () => {
      const chain = allOpen[0]!.chain
      const { positions, counts } = await readAll({ wallets: walletList, hideLowLiquidity: false, chains: chain, limit: 100 })
      expect(positions.map(key)).toEqual(allOpen.filter((p) => p.chain === chain).map(key))
      const onChain = marketPositions().filter((p) => p.wire.chain === chain)
      expect(counts.spot.open).toBe(onChain.filter((p) => p.wire.status === "open").length)
    })

    it("lifecycle=closed ignores the open-only switches (liquidity and dust)", async () => {
      const plain = (await readAll({ wallets: walletList, lifecycle: "closed", hideLowLiquidity: false })).positions
      const hidden = (await readAll({ wallets: walletList, lifecycle: "closed", hideLowLiquidity: true, hideDust: true })).positions
      expect(hidden.map(key)).toEqual(plain.map(key))
    })
  })

  it("clamps limit instead of refusing it: 0 gives 1 position, 1000 gives 100, default 50", async () => {
    expect((await read({ wallets: walletList, hideLowLiquidity: false, limit: 0 })).positions.length).toBe(1)
    expect((await read({ wallets: walletList, hideLowLiquidity: false, limit: -3 })).positions.length).toBe(1)
    expect((await read({ wallets: walletList, hideLowLiquidity: false, limit: 1000 })).positions.length).toBe(100)
    const huge = await api.get(`/v1/positions${query({ wallets: walletList, hideLowLiquidity: false })}&limit=123456789012345678901234567890`)
    expect(huge.status).toBe(200)
    expect(huge.body.positions.length).toBe(100)
    expect((await read({ wallets: walletList, hideLowLiquidity: false })).positions.length).toBe(50)
  })

  it("accepts the cursor with the same filters spelled differently (wallet order) and another page size", async () => {
    const first = await read({ wallets: walletList, limit: 5 })
    const reply = await api.get(`/v1/positions${query({ wallets: [...wallets].reverse().join(","), limit: 8, cursor: first.nextCursor! })}`)
    expect(reply.status).toBe(200)
  })

  describe("refusals", () => {
    const refuse = async (params: Params, code: string, fields: ReadonlyArray<string>, exact = true) =>
      expectError(await api.get(`/v1/positions${query(params)}`), 400, code, fields, exact)

    it("answers 400 VALIDATION_ERROR on wallets when wallets is missing or names nothing", async () => {
      await refuse({}, "VALIDATION_ERROR", ["wallets"])
      await refuse({ wallets: "" }, "VALIDATION_ERROR", ["wallets"])
      await refuse({ wallets: " , " }, "VALIDATION_ERROR", ["wallets"])
    })

    it("answers 400 VALIDATION_ERROR on wallets for more than 100 distinct wallets, and 200 for exactly 100 (repeats count once)", async () => {
      const many = Array.from({ length: 101 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`)
      await refuse({ wallets: many.join(",") }, "VALIDATION_ERROR", ["wallets"])
      expect((await api.get(`/v1/positions${query({ wallets: many.slice(0, 100).join(",") })}`)).status).toBe(200)
      // 100 distinct plus a repeat and an upper-case spelling of one: still 100 wallets, as on the stream
      const repeated = [...many.slice(0, 100), many[0]!, many[10]!.toUpperCase().replace("0X", "0x")]
      expect((await api.get(`/v1/positions${query({ wallets: repeated.join(",") })}`)).status).toBe(200)
    })

    it("answers 400 VALIDATION_ERROR on wallets for a malformed wallet address", async () => {
      await refuse({ wallets: `${wallets[0]},not-a-wallet` }, "VALIDATION_ERROR", ["wallets"])
      await refuse({ wallets: "0x1234" }, "VALIDATION_ERROR", ["wallets"])
    })

    it("answers 400 VALIDATION_ERROR for chain without token, or token without chain", async () => {
      const target = marketPositions()[0]!.wire
      await refuse({ wallets: walletList, chain: target.chain }, "VALIDATION_ERROR", ["token"])
      await refuse({ wallets: walletList, token: target.token.address }, "VALIDATION_ERROR", ["chain"])
    })

    it("answers 400 VALIDATION_ERROR on token for a token address malformed for its chain", async () => {
      await refuse({ wallets: walletList, chain: "base", token: "So11111111111111111111111111111111111111112" }, "VALIDATION_ERROR", ["token"])
    })

    it("answers 400 UNSUPPORTED_CHAIN for an unsupported slug in chains or chain", async () => {
      await refuse({ wallets: walletList, chains: "solana,polygon" }, "UNSUPPORTED_CHAIN", ["chains"])
      await refuse({ wallets: walletList, chain: "polygon", token: "0x00000000000000000000000000000000000000aa" }, "UNSUPPORTED_CHAIN", ["chain"])
    })

    it("answers 400 VALIDATION_ERROR on chains for a chains list naming nothing", async () => {
      await refuse({ wallets: walletList, chains: "," }, "VALIDATION_ERROR", ["chains"])
      await refuse({ wallets: walletList, chains: "" }, "VALIDATION_ERROR", ["chains"])
    })

    it("reads list entries as written: a stray comma is 400 VALIDATION_ERROR, a slug with a space 400 UNSUPPORTED_CHAIN, as in a path", async () => {
      await refuse({ wallets: walletList, chains: "base," }, "VALIDATION_ERROR", ["chains"])
      await refuse({ wallets: walletList, chains: "base,,bsc" }, "VALIDATION_ERROR", ["chains"])
      await refuse({ wallets: walletList, chains: " base" }, "UNSUPPORTED_CHAIN", ["chains"])
      await refuse({ wallets: walletList, chains: "base\t" }, "UNSUPPORTED_CHAIN", ["chains"])
      await refuse({ wallets: `${walletList},` }, "VALIDATION_ERROR", ["wallets"])
      const first = walletList.split(",")[0]!
      await refuse({ wallets: ` ${first}` }, "VALIDATION_ERROR", ["wallets"])
      const reply = await api.get(`/v1/positions${query({ wallets: ` ${first}` })}`)
      expect(reply.body.error.details[0].message).toContain("is not a wallet address")
      // the same slug without the space is read
      expect((await api.get(`/v1/positions${query({ wallets: walletList, chains: "base,bsc" })}`)).status).toBe(200)
    })

    it("answers 400 VALIDATION_ERROR on sort for an unknown field, direction or shape", async () => {
      for (const sort of ["value", "value:up", "price:desc", "value:desc:x", "VALUE:desc", ""]) {
        await refuse({ wallets: walletList, sort }, "VALIDATION_ERROR", ["sort"])
      }
    })

    it("answers 400 VALIDATION_ERROR on the field for a bad lifecycle, switch or limit", async () => {
      await refuse({ wallets: walletList, lifecycle: "all" }, "VALIDATION_ERROR", ["lifecycle"])
      for (const name of ["hideLowLiquidity", "hideDust", "hideTransfers"]) {
        await refuse({ wallets: walletList, [name]: "yes" }, "VALIDATION_ERROR", [name])
      }
      await refuse({ wallets: walletList, limit: "many" }, "VALIDATION_ERROR", ["limit"])
    })

    it("answers 400 VALIDATION_ERROR naming each unknown parameter", async () => {
      await refuse({ wallets: walletList, wallet: wallets[0]!, page: 2 }, "VALIDATION_ERROR", ["wallet", "page"])
    })

    it("answers 400 VALIDATION_ERROR on cursor for a cursor replayed with other filters or sort", async () => {
      const base = { wallets: walletList, limit: 3 }
      const cursor = (await read(base)).nextCursor!
      const others: Array<Params> = [
        { hideDust: true },
        { hideLowLiquidity: false },
        { hideTransfers: true },
        { q: "x" },
        { sort: "pnl:desc" },
        { sort: "value:asc" },
        { lifecycle: "closed" },
        { chains: "solana" },
        { wallets: wallets.slice(1).join(",") }
      ]
      for (const other of others) {
        await refuse({ ...base, ...other, cursor }, "VALIDATION_ERROR", ["cursor"])
      }
      // The same filters spelled out as their defaults select the same rows: accepted.
      expect((await api.get(`/v1/positions${query({ ...base, hideLowLiquidity: true, sort: "value:desc", lifecycle: "open", cursor })}`)).status).toBe(200)
    })

    it("answers 400 VALIDATION_ERROR on cursor for an undecodable cursor, never restarting", async () => {
      for (const cursor of ["garbage", "AAAA", "e30"]) {
        await refuse({ wallets: walletList, cursor }, "VALIDATION_ERROR", ["cursor"])
      }
    })
  })
})
