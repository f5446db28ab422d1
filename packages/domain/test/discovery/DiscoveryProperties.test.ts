import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  clampLimit,
  type ColumnName,
  columnNames,
  columnOf,
  rankColumn,
  type SortBy
} from "../../src/discovery/Discovery.js"
import { candidatesArbitrary, filtersArbitrary, NOW } from "./arbitraries.js"
import { expectedBoard, expectedColumn, expectedOrder, expectedToPass } from "./oracle.js"

const sortFields: ReadonlyArray<SortBy> = [
  "createdAt",
  "volume24hUsd",
  "marketCapUsd",
  "liquidityUsd",
  "holdersCount",
  "tradeCount24h",
  "bondingCurvePct",
  "bondingCurveActivity",
  "graduatedAt"
]

const requestArbitrary = fc.record({
  sortBy: fc.constantFrom(...sortFields),
  order: fc.constantFrom("asc" as const, "desc" as const),
  limit: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 120 })),
  filters: filtersArbitrary()
})
const columnArbitrary = fc.constantFrom<ColumnName>(...columnNames)
const runs = { numRuns: 400 }

describe("rankColumn properties", () => {
  it("every returned row belongs to the column and meets every filter of the request", () => {
    fc.assert(
      fc.property(candidatesArbitrary, columnArbitrary, requestArbitrary, (candidates, column, request) => {
        for (const row of rankColumn(candidates, column, request, NOW)) {
          expect(expectedColumn(row)).toBe(column)
          expect(expectedToPass(request.filters, row, NOW)).toBe(true)
        }
      }),
      runs
    )
  })

  it("the board equals the first `limit` rows of a brute-force filter and full sort (so nothing that outranks the last row is missing)", () => {
    fc.assert(
      fc.property(candidatesArbitrary, columnArbitrary, requestArbitrary, (candidates, column, request) => {
        const board = rankColumn(candidates, column, request, NOW)
        const expected = expectedBoard(candidates, column, request, NOW)
        expect(board.map((c) => `${c.chain}:${c.address}`)).toEqual(expected.map((c) => `${c.chain}:${c.address}`))
      }),
      runs
    )
  })

  it("rows are strictly in the requested order, tie-break included", () => {
    fc.assert(
      fc.property(candidatesArbitrary, columnArbitrary, requestArbitrary, (candidates, column, request) => {
        const board = rankColumn(candidates, column, { ...request, filters: {} }, NOW)
        const order = expectedOrder(request.sortBy, request.order, NOW)
        for (let i = 1; i < board.length; i++) expect(order(board[i - 1]!, board[i]!)).toBeLessThan(0)
      }),
      runs
    )
  })

  it("the input order of the candidates does not change the board", () => {
    fc.assert(
      fc.property(candidatesArbitrary, columnArbitrary, requestArbitrary, (candidates, column, request) => {
        const forward = rankColumn(candidates, column, request, NOW)
        const backward = rankColumn([...candidates].reverse(), column, request, NOW)
        expect(backward).toEqual(forward)
      })
    )
  })

  it("every launchpad token is in exactly one column, the one the spec's table names", () => {
    fc.assert(
      fc.property(candidatesArbitrary, (candidates) => {
        for (const c of candidates) expect(columnOf(c)).toBe(expectedColumn(c))
      })
    )
  })

  it("a filter-free board of 100 lists every member up to 100, and no more", () => {
    fc.assert(
      fc.property(candidatesArbitrary, columnArbitrary, (candidates, column) => {
        const board = rankColumn(candidates, column, { sortBy: "createdAt", order: "desc", limit: 100, filters: {} }, NOW)
        expect(board.length).toBe(Math.min(100, candidates.filter((c) => expectedColumn(c) === column).length))
      })
    )
  })

  it("the limit is clamped to 1-100", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000, max: 1_000 }), (n) => {
        const clamped = clampLimit(n)
        expect(clamped).toBe(Math.min(100, Math.max(1, n)))
      })
    )
  })
})
