import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import type { Chain } from "../../src/Chain.js"
import { decodePosition, encodePosition } from "../../src/cursor/Cursor.js"
import * as Fixed from "../../src/Fixed.js"
import type { PositionWire } from "../../src/market/Positions.js"
import * as Query from "../../src/positions/PositionsQuery.js"
import { utf8 } from "../support/Utf8.js"

// ---------------------------------------------------------------------------------------------
// Fixtures

const walletPool = [
  "WaLLetAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "WaLLetBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
  "0xAbCdEf0000000000000000000000000000000001",
  "0xabcdef0000000000000000000000000000000002"
] as const
const chainPool: ReadonlyArray<Chain> = ["solana", "base", "bsc"]
const tokenPool = [
  "0xToKeN0000000000000000000000000000000001",
  "0xtoken0000000000000000000000000000000002",
  "So1anaTokenAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "So1anaTokenBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
] as const
const names = [
  ["PEPE", "Pepe Coin"],
  ["WIF", "dogwifhat"],
  ["BONK", "Bonk"],
  ["ZZ", "sleepy"]
] as const
const queries = ["pe", "PE", "Hat", "zz", "nomatch"] as const

const money = { native: "0", usd: "0" }

interface RowSpec {
  readonly wallet: string
  readonly chain: Chain
  readonly token: string
  readonly status: "open" | "closed"
  readonly isTransfer: boolean
  readonly symbol: string
  readonly name: string
  readonly openedAt: number
  readonly closedAt: number | null
  readonly liquidityUsd: number
  readonly valueUsd: number | null
  readonly totalPnlUsd: number | null
  readonly pnlPct: number | null
}

const positionWire = (s: RowSpec): PositionWire => ({
  walletAddress: s.wallet,
  chain: s.chain,
  product: "spot",
  status: s.status,
  token: {
    address: s.token,
    chain: s.chain,
    decimals: 6,
    image: null,
    name: s.name,
    symbol: s.symbol,
    price: money,
    marketCap: money
  },
  holdings: "0",
  holdingsPctSupply: "0",
  avgCost: money,
  invested: money,
  received: money,
  fees: money,
  realizedPnl: money,
  buyCount: 0,
  sellCount: 0,
  tokensBought: "0",
  tokensSold: "0",
  isStablecoin: false,
  isTransfer: s.isTransfer,
  openedAt: s.openedAt,
  updatedAt: s.openedAt,
  version: 1,
  funding: {
    status: "unresolved",
    address: null,
    amount: null,
    asset: null,
    sourceKind: null,
    sourceLabel: null,
    symbol: null,
    timestamp: null,
    tx: null
  },
  lifetime: {
    buyCount: 0,
    cycleCount: 1,
    fees: money,
    invested: money,
    realizedPnl: money,
    received: money,
    sellCount: 0,
    tokensBought: "0",
    tokensSold: "0",
    winningCycleCount: 0
  },
  ...(s.closedAt === null ? {} : { closedAt: s.closedAt })
})

const usd = (n: number | null): Fixed.Fixed | null => (n === null ? null : Fixed.fromNumber(n))

const rowOf = (s: RowSpec): Query.PositionRow => ({
  position: positionWire(s),
  liquidityUsd: Fixed.fromNumber(s.liquidityUsd),
  valueUsd: usd(s.valueUsd),
  totalPnlUsd: usd(s.totalPnlUsd),
  pnlPct: usd(s.pnlPct)
})

// ---------------------------------------------------------------------------------------------
// Arbitraries (small pools so ties, duplicates of sort keys and nulls are common)

const intBetween = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
/** A small number or null (encoded as -1). */
const smallOrNull = intBetween(-1, 4)
const RowInput = Schema.Tuple([
  intBetween(0, 3), // wallet
  intBetween(0, 2), // chain
  intBetween(0, 3), // token
  Schema.Boolean, // open
  Schema.Boolean, // isTransfer
  intBetween(0, 3), // names
  intBetween(0, 5), // openedAt
  smallOrNull, // closedAt offset
  intBetween(0, 2_000), // liquidity USD
  smallOrNull, // value
  intBetween(-3, 3), // pnl
  smallOrNull // pnlPct
])
type RowInput = typeof RowInput.Type
const RowsInput = Schema.Array(RowInput).check(Schema.isMaxLength(40))

const specOf = (r: RowInput): RowSpec => {
  const [w, c, t, open, isTransfer, n, openedAt, closedAt, liquidity, value, pnl, pnlPct] = r
  const chain = chainPool[c]!
  // Addresses fit their chain: pools 0-1 are EVM tokens / Solana wallets, 2-3 the reverse. EVM
  // rows carry lower-case addresses, as the engine stores them; Solana ones as they are.
  const token = chain === "solana" ? tokenPool[2 + (t % 2)]! : tokenPool[t % 2]!.toLowerCase()
  const wallet = chain === "solana" ? walletPool[w % 2]! : walletPool[2 + (w % 2)]!.toLowerCase()
  return {
    wallet,
    chain,
    token,
    status: open ? "open" : "closed",
    isTransfer,
    symbol: names[n]![0],
    name: names[n]![1],
    openedAt: openedAt * 1_000,
    closedAt: open ? null : closedAt < 0 ? 0 : (openedAt + closedAt) * 1_000,
    liquidityUsd: liquidity,
    valueUsd: value < 0 ? null : value * 0.5,
    totalPnlUsd: value < 0 ? null : pnl,
    pnlPct: pnlPct < 0 ? null : pnlPct * 10
  }
}

const identityOf = (s: { chain: string; token: string; wallet: string }): string => `${s.chain}|${s.token}|${s.wallet}`

/** Rows with one position per (chain, token, wallet), as the store holds them. */
const rowsOf = (input: ReadonlyArray<RowInput>): Array<Query.PositionRow> => {
  const seen = new Set<string>()
  const out: Array<Query.PositionRow> = []
  for (const r of input) {
    const spec = specOf(r)
    const id = identityOf(spec)
    if (seen.has(id)) continue
    seen.add(id)
    out.push(rowOf(spec))
  }
  return out
}

// Switches are on one time in four and q and token are mostly absent, so reads keep enough rows
// for paging, ties and nulls to matter.
const ReadInput = Schema.Tuple([
  intBetween(1, 15), // wallets mask
  intBetween(0, 7), // chains mask (0 = every chain)
  Schema.Boolean, // open lifecycle
  intBetween(0, 3), // hideLowLiquidity when 3
  intBetween(0, 3), // hideDust when 3
  intBetween(0, 3), // hideTransfers when 3
  intBetween(-4, 3), // token (negative: none)
  intBetween(-6, 4), // q (negative: none)
  Schema.Literals(["value", "pnl", "pnlPct", "openedAt", "closedAt"]),
  Schema.Literals(["asc", "desc"]),
  intBetween(-2, 8) // limit, clamped
])
type ReadInput = typeof ReadInput.Type

const readOf = (r: ReadInput): Query.PositionsRead => {
  const [walletMask, chainMask, open, hideLowLiquidity, hideDust, hideTransfers, token, q, field, direction, limit] = r
  return {
    // Wallets as a client may spell them: EVM ones in mixed case.
    wallets: walletPool.filter((_, i) => (walletMask & (1 << i)) !== 0),
    chains: chainPool.filter((_, i) => (chainMask & (1 << i)) !== 0),
    lifecycle: open ? "open" : "closed",
    hideLowLiquidity: hideLowLiquidity === 3,
    hideDust: hideDust === 3,
    hideTransfers: hideTransfers === 3,
    token: token < 0 ? null : { chain: token < 2 ? "base" : "solana", address: tokenPool[token]! },
    q: q < 0 ? null : queries[q]!,
    sort: { field, direction },
    limit
  }
}

// ---------------------------------------------------------------------------------------------
// Reference semantics, written from the spec independently of the module

const lower = (s: string) => s.toLowerCase()
const sameAddress = (chain: string, a: string, b: string) => (chain === "solana" ? a === b : lower(a) === lower(b))

const inScope = (row: Query.PositionRow, read: Query.PositionsRead): boolean => {
  const p = row.position
  const chains = read.chains.length === 0 ? chainPool : read.chains
  return chains.includes(p.chain) && read.wallets.some((w) => sameAddress(p.chain, w, p.walletAddress))
}

const ONE_USD = 10n ** 18n
const matches = (row: Query.PositionRow, read: Query.PositionsRead): boolean => {
  const p = row.position
  if (!inScope(row, read) || p.status !== read.lifecycle) return false
  if (read.hideTransfers && p.isTransfer) return false
  if (read.hideLowLiquidity && p.status === "open" && row.liquidityUsd < 1_000n * ONE_USD) return false
  if (read.hideDust && p.status === "open" && (row.valueUsd ?? 0n) < ONE_USD) return false
  if (read.token !== null && (p.chain !== read.token.chain || !sameAddress(p.chain, p.token.address, read.token.address)))
    return false
  if (read.q !== null && !lower(p.token.symbol).includes(lower(read.q)) && !lower(p.token.name).includes(lower(read.q)))
    return false
  return true
}

const sortValue = (row: Query.PositionRow, field: Query.PositionSortField): bigint | number | null =>
  field === "value"
    ? row.valueUsd
    : field === "pnl"
      ? row.totalPnlUsd
      : field === "pnlPct"
        ? row.pnlPct
        : field === "openedAt"
          ? row.position.openedAt
          : (row.position.closedAt ?? null)

/** True when `a` may come before `b` (or equal) in the read's order on the sort key alone. */
const keyInOrder = (a: Query.PositionRow, b: Query.PositionRow, read: Query.PositionsRead): boolean => {
  const x = sortValue(a, read.sort.field)
  const y = sortValue(b, read.sort.field)
  if (y === null) return true
  if (x === null) return false
  return read.sort.direction === "asc" ? x <= y : x >= y
}

/**
 * Pages through a read to the end, passing each cursor position through the cursor's position codec
 * (sealing it is the adapter's, tested there).
 */
const pageThrough = (
  rowsAt: (page: number) => ReadonlyArray<Query.PositionRow>,
  read: Query.PositionsRead,
  onPage: (result: Query.PositionsPageResult, page: number) => void = () => {}
): Array<PositionWire> => {
  const out: Array<PositionWire> = []
  let after: Query.CursorPosition | null = null
  for (let page = 0; page < 1_000; page++) {
    const result = Query.readPositions(rowsAt(page), read, after, 42)
    onPage(result, page)
    out.push(...result.positions)
    if (!result.hasMore) {
      expect(result.last).toBeNull()
      return out
    }
    const decoded = decodePosition(utf8, encodePosition(utf8, result.last!))
    if (decoded === undefined) throw new Error("own cursor refused")
    after = Query.parseCursorPosition(read, decoded)
    expect(after).toEqual(result.last)
  }
  throw new Error("paging did not end")
}

const idOfWire = (p: PositionWire) => identityOf({ chain: p.chain, token: lower(p.token.address), wallet: lower(p.walletAddress) })

// ---------------------------------------------------------------------------------------------

describe("readPositions examples", () => {
  const base: Query.PositionsRead = {
    wallets: [walletPool[0]],
    chains: [],
    lifecycle: "open",
    hideLowLiquidity: false,
    hideDust: false,
    hideTransfers: false,
    token: null,
    q: null,
    sort: Query.defaultSort("open"),
    limit: 50
  }
  const spec = (over: Partial<RowSpec>): RowSpec => ({
    wallet: walletPool[0],
    chain: "solana",
    token: tokenPool[2],
    status: "open",
    isTransfer: false,
    symbol: "PEPE",
    name: "Pepe",
    openedAt: 1_000,
    closedAt: null,
    liquidityUsd: 5_000,
    valueUsd: 10,
    totalPnlUsd: 1,
    pnlPct: 1,
    ...over
  })

  it("sorts by value descending by default, nulls last, ties by chain, token and wallet", () => {
    const rows = [
      rowOf(spec({ token: "T3", valueUsd: null })),
      rowOf(spec({ token: "T2", valueUsd: 5 })),
      rowOf(spec({ token: "T1", valueUsd: 50 })),
      rowOf(spec({ token: "T0", valueUsd: 5 }))
    ]
    const page = Query.readPositions(rows, base, null, 7)
    expect(page.positions.map((p) => p.token.address)).toEqual(["T1", "T0", "T2", "T3"])
    expect(page.asOf).toBe(7)
    expect(page.hasMore).toBe(false)
    const ascending = Query.readPositions(rows, { ...base, sort: { field: "value", direction: "asc" } }, null, 7)
    expect(ascending.positions.map((p) => p.token.address)).toEqual(["T0", "T2", "T1", "T3"])
  })

  it("applies the floors to open positions only; counts ignore every switch", () => {
    const rows = [
      rowOf(spec({ token: "lowLiquidity", liquidityUsd: 999.99 })),
      rowOf(spec({ token: "atFloor", liquidityUsd: 1_000, valueUsd: 1 })),
      rowOf(spec({ token: "dust", valueUsd: 0.99 })),
      rowOf(spec({ token: "noMarket", valueUsd: null })),
      rowOf(spec({ token: "airdrop", isTransfer: true })),
      rowOf(spec({ token: "closedLow", status: "closed", closedAt: 5_000, liquidityUsd: 1, valueUsd: 0 })),
      rowOf(spec({ token: "otherWallet", wallet: walletPool[1] }))
    ]
    const read = { ...base, hideLowLiquidity: true, hideDust: true, hideTransfers: true }
    const open = Query.readPositions(rows, read, null, 0)
    expect(open.positions.map((p) => p.token.address)).toEqual(["atFloor"])
    expect(open.counts).toEqual({ spot: { open: 5, closed: 1 } })
    const closed = Query.readPositions(rows, { ...read, lifecycle: "closed", sort: Query.defaultSort("closed") }, null, 0)
    expect(closed.positions.map((p) => p.token.address)).toEqual(["closedLow"])
    expect(closed.counts).toEqual(open.counts)
  })

  it("matches q in symbol or name in any letter case, and one token by chain and address", () => {
    const rows = [
      rowOf(spec({ token: "a", symbol: "PEPE", name: "x" })),
      rowOf(spec({ token: "b", symbol: "x", name: "dogwifhat" })),
      rowOf(spec({ token: "c", symbol: "BONK", name: "Bonk" })),
      rowOf(spec({ chain: "base", wallet: lower(walletPool[2]), token: lower(tokenPool[0]) }))
    ]
    const read = { ...base, wallets: [walletPool[0], walletPool[2]] }
    // Equal values: the tie-break puts chain "base" before "solana".
    expect(Query.readPositions(rows, { ...read, q: "pE" }, null, 0).positions.map((p) => p.token.address)).toEqual([
      lower(tokenPool[0]),
      "a"
    ])
    expect(Query.readPositions(rows, { ...read, q: "HAT" }, null, 0).positions.map((p) => p.token.address)).toEqual([
      "b"
    ])
    // Turkic i's fold together ("İ" lower-cases to "i" + U+0307), and the binding reads them alike
    const turkish = [...rows, rowOf(spec({ token: "d", symbol: "ŞİŞ", name: "x" }))]
    expect(Query.readPositions(turkish, { ...read, q: "şiş" }, null, 0).positions.map((p) => p.token.address)).toEqual(["d"])
    expect(Query.bindingOf({ ...read, q: "ŞİŞ" })).toBe(Query.bindingOf({ ...read, q: "şiş" }))
    const one = Query.readPositions(rows, { ...read, token: { chain: "base", address: tokenPool[0] } }, null, 0)
    expect(one.positions.map((p) => p.walletAddress)).toEqual([lower(walletPool[2])])
  })

  it("clamps the limit and pages by keyset", () => {
    const rows = Array.from({ length: 120 }, (_, i) => rowOf(spec({ token: `T${String(i).padStart(3, "0")}`, valueUsd: i })))
    expect(Query.readPositions(rows, { ...base, limit: 1_000 }, null, 0).positions).toHaveLength(100)
    expect(Query.readPositions(rows, { ...base, limit: 0 }, null, 0).positions).toHaveLength(1)
    expect(Query.readPositions(rows, { ...base, limit: Number.NaN }, null, 0).positions).toHaveLength(50)
    const first = Query.readPositions(rows, { ...base, limit: 2 }, null, 0)
    expect(first.positions.map((p) => p.token.address)).toEqual(["T119", "T118"])
    expect(first.last).toEqual([String(118n * 10n ** 18n), "solana", "T118", walletPool[0], 120, 0])
    const second = Query.readPositions(rows, { ...base, limit: 2 }, first.last, 0)
    expect(second.positions.map((p) => p.token.address)).toEqual(["T117", "T116"])
  })

  it("refuses cursor positions that do not fit the sort", () => {
    const byValue = base
    const byOpened = { ...base, sort: { field: "openedAt", direction: "desc" } } as const
    expect(Query.parseCursorPosition(byValue, ["100", "solana", "t", "w", 3, 1])).toEqual(["100", "solana", "t", "w", 3, 1])
    expect(Query.parseCursorPosition(byValue, [null, "solana", "t", "w", 0, 0])).not.toBeNull()
    expect(Query.parseCursorPosition(byValue, [1.5, "solana", "t", "w", 3, 1])).toBeNull()
    expect(Query.parseCursorPosition(byValue, ["1e5", "solana", "t", "w", 3, 1])).toBeNull()
    expect(Query.parseCursorPosition(byOpened, ["100", "solana", "t", "w", 3, 1])).toBeNull()
    expect(Query.parseCursorPosition(byOpened, [100, "solana", "t", "w", 3])).toBeNull()
    expect(Query.parseCursorPosition(byOpened, [100, "solana", "t", "w", -1, 1])).toBeNull()
    expect(Query.parseCursorPosition(byOpened, [100, "solana", "t", "w", 3, 0.5])).toBeNull()
    expect(Query.parseCursorPosition(byOpened, [100, "solana", "t", "w", "3", 1])).toBeNull()
    expect(Query.parseCursorPosition(byOpened, [100, "solana", "t", "w", 3, 1])).toEqual([100, "solana", "t", "w", 3, 1])
  })

  it("reports the first page's counts on every page of a read, though positions open and close between pages", () => {
    const before = [0, 1, 2, 3, 4].map((i) => rowOf(spec({ token: `T${i}`, valueUsd: 10 - i })))
    // Between the pages: T0 (already served) closes and two new positions open.
    const after = [
      rowOf(spec({ token: "T0", status: "closed", closedAt: 9_000, valueUsd: 0 })),
      ...before.slice(1),
      rowOf(spec({ token: "N1", valueUsd: 1 })),
      rowOf(spec({ token: "N2", valueUsd: 0.5 }))
    ]
    const read = { ...base, limit: 2 }
    const counts: Array<unknown> = []
    pageThrough((page) => (page === 0 ? before : after), read, (result) => counts.push(result.counts))
    expect(counts.length).toBeGreaterThan(2)
    for (const c of counts) expect(c).toEqual({ spot: { open: 5, closed: 0 } })
    // A new read counts the rows as they are now.
    expect(Query.readPositions(after, read, null, 0).counts).toEqual({ spot: { open: 6, closed: 1 } })
  })

  it("binds spellings that select the same rows to the same binding, and nothing else", () => {
    const read = { ...base, wallets: [walletPool[2], walletPool[0]], chains: ["base", "solana"] as Array<Chain> }
    const same = Query.bindingOf(read)
    expect(Query.bindingOf({ ...read, wallets: [walletPool[0], lower(walletPool[2]), walletPool[0]] })).toBe(same)
    expect(Query.bindingOf({ ...read, chains: ["solana", "base"] })).toBe(same)
    expect(Query.bindingOf({ ...read, limit: 3 })).toBe(same)
    expect(Query.bindingOf({ ...base, chains: [] })).toBe(
      Query.bindingOf({ ...base, chains: ["solana", "base", "bsc", "robinhood", "arc"] })
    )
    expect(Query.bindingOf({ ...read, q: "Pe" })).toBe(Query.bindingOf({ ...read, q: "pE" }))
    expect(Query.bindingOf({ ...read, q: "" })).toBe(same)
    // Solana addresses are case-sensitive: a different spelling is a different wallet.
    expect(Query.bindingOf({ ...read, wallets: [walletPool[2], lower(walletPool[0])] })).not.toBe(same)
  })
})

describe("readPositions properties", () => {
  it.prop(
    "paging with any limit yields every matching row exactly once, in order, with the same counts",
    [RowsInput, ReadInput],
    ([rowsInput, readInput]) => {
      const rows = rowsOf(rowsInput)
      const read = readOf(readInput)
      const expected = rows.filter((r) => matches(r, read))
      const counts = new Set<string>()
      const got = pageThrough(
        () => rows,
        read,
        (result) => {
          counts.add(JSON.stringify(result.counts))
          expect(result.positions.length).toBeLessThanOrEqual(Query.clampLimit(read.limit))
          if (result.hasMore) expect(result.positions.length).toBe(Query.clampLimit(read.limit))
        }
      )
      expect(got.map(idOfWire).sort()).toEqual(expected.map((r) => idOfWire(r.position)).sort())
      expect(new Set(got.map(idOfWire)).size).toBe(got.length)
      const byPosition = new Map(rows.map((r) => [r.position, r]))
      for (let i = 1; i < got.length; i++) {
        expect(keyInOrder(byPosition.get(got[i - 1]!)!, byPosition.get(got[i]!)!, read)).toBe(true)
      }
      // Counts: the wallets' and chains' positions by status, identical on every page.
      expect(counts.size).toBe(1)
      const scope = rows.filter((r) => inScope(r, read))
      expect(JSON.parse([...counts][0]!)).toEqual({
        spot: {
          open: scope.filter((r) => r.position.status === "open").length,
          closed: scope.filter((r) => r.position.status === "closed").length
        }
      })
    }
  )

  it.prop(
    "over every wallet and chain, pages come in one total order, each row exactly once",
    [RowsInput, Schema.Boolean, ReadInput],
    ([rowsInput, open, readInput]) => {
      const rows = rowsOf(rowsInput)
      const read: Query.PositionsRead = {
        ...readOf(readInput),
        wallets: walletPool,
        chains: [],
        lifecycle: open ? "open" : "closed",
        hideLowLiquidity: false,
        hideDust: false,
        hideTransfers: false,
        token: null,
        q: null
      }
      const got = pageThrough(() => rows, read)
      const byPosition = new Map(rows.map((r) => [r.position, r]))
      expect(got).toHaveLength(rows.filter((r) => r.position.status === read.lifecycle).length)
      expect(new Set(got).size).toBe(got.length)
      for (let i = 1; i < got.length; i++) {
        const a = byPosition.get(got[i - 1]!)!
        const b = byPosition.get(got[i]!)!
        expect(keyInOrder(a, b, read)).toBe(true)
        // Equal sort keys fall back to chain, token address, then wallet, ascending.
        if (keyInOrder(b, a, read)) {
          const ka = [a.position.chain, a.position.token.address, a.position.walletAddress]
          const kb = [b.position.chain, b.position.token.address, b.position.walletAddress]
          expect(ka.join("|") < kb.join("|")).toBe(true)
        }
      }
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop("every returned row satisfies every filter", [RowsInput, ReadInput], ([rowsInput, readInput]) => {
    const read = readOf(readInput)
    const page = Query.readPositions(rowsOf(rowsInput), { ...read, limit: 100 }, null, 0)
    const rows = rowsOf(rowsInput)
    for (const p of page.positions) {
      const row = rows.find((r) => idOfWire(r.position) === idOfWire(p))!
      expect(matches(row, read)).toBe(true)
    }
  })

  const Change = Schema.Tuple([Schema.Literals(["remove", "add", "resort"]), intBetween(0, 1_000), RowInput])
  it.prop(
    "rows changing between pages: unchanged rows appear exactly once; only re-sorted rows may repeat",
    [RowsInput, ReadInput, Schema.Array(Change).check(Schema.isMaxLength(20))],
    ([rowsInput, readInput, changes]) => {
      const read = readOf(readInput)
      let rows = rowsOf(rowsInput)
      const initial = rows
      const touched = new Set<string>()
      let applied = 0
      const got = pageThrough(
        (page) => {
          // Before each later page, apply the next change (one per page, then none).
          if (page > 0 && applied < changes.length) {
            const [kind, index, input] = changes[applied++]!
            if (kind === "add") {
              const spec = specOf(input)
              const id = identityOf(spec)
              if (!rows.some((r) => idOfWire(r.position) === id)) {
                touched.add(id)
                rows = [...rows, rowOf(spec)]
              }
            } else if (rows.length > 0) {
              const victim = rows[index % rows.length]!
              const id = idOfWire(victim.position)
              touched.add(id)
              if (kind === "remove") rows = rows.filter((r) => r !== victim)
              else {
                const moved = rowOf({
                  ...specOf(input),
                  wallet: victim.position.walletAddress,
                  chain: victim.position.chain,
                  token: victim.position.token.address
                })
                rows = rows.map((r) => (r === victim ? moved : r))
              }
            }
          }
          return rows
        },
        read
      )
      const ids = got.map(idOfWire)
      const seen = new Map<string, number>()
      for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1)
      for (const [id, n] of seen) if (n > 1) expect(touched.has(id)).toBe(true)
      for (const r of initial) {
        const id = idOfWire(r.position)
        if (!touched.has(id) && matches(r, read)) expect(seen.get(id)).toBe(1)
      }
    }
  )

  const Mutation = Schema.Literals([
    "wallets",
    "chains",
    "lifecycle",
    "hideLowLiquidity",
    "hideDust",
    "hideTransfers",
    "token",
    "q",
    "sortField",
    "sortDirection"
  ])
  it.prop(
    "changing any filter or the sort changes the binding; the limit does not",
    [ReadInput, Mutation, intBetween(1, 100)],
    ([readInput, mutation, limit]) => {
      const read = readOf(readInput)
      const binding = Query.bindingOf(read)
      expect(Query.bindingOf({ ...read, limit })).toBe(binding)
      const fields = ["value", "pnl", "pnlPct", "openedAt", "closedAt"] as const
      const changed: Query.PositionsRead =
        mutation === "wallets"
          ? { ...read, wallets: [...read.wallets, "AnotherWa11etXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"] }
          : mutation === "chains"
            ? { ...read, chains: read.chains.length === 1 ? ["arc"] : ["robinhood"] }
            : mutation === "lifecycle"
              ? { ...read, lifecycle: read.lifecycle === "open" ? "closed" : "open" }
              : mutation === "hideLowLiquidity"
                ? { ...read, hideLowLiquidity: !read.hideLowLiquidity }
                : mutation === "hideDust"
                  ? { ...read, hideDust: !read.hideDust }
                  : mutation === "hideTransfers"
                    ? { ...read, hideTransfers: !read.hideTransfers }
                    : mutation === "token"
                      ? { ...read, token: read.token === null ? { chain: "bsc", address: tokenPool[0] } : null }
                      : mutation === "q"
                        ? { ...read, q: read.q === null ? "x" : `${read.q}x` }
                        : mutation === "sortField"
                          ? {
                              ...read,
                              sort: { ...read.sort, field: fields[(fields.indexOf(read.sort.field) + 1) % fields.length]! }
                            }
                          : { ...read, sort: { ...read.sort, direction: read.sort.direction === "asc" ? "desc" : "asc" } }
      expect(Query.bindingOf(changed)).not.toBe(binding)
    }
  )
})
