import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  candleSeriesRules,
  mergeCandles,
  mergePosition,
  mergePositions,
  mergeToken,
  mergeTokens,
  mergeTrades,
  type MergeRules,
  positionRules,
  SnapshotMerger,
  tradeListRules
} from "../../src/merge/SnapshotMerge.js"

// ---------------------------------------------------------------------------------------------
// Test objects: each state is a pure function of its identity and its ordering field, so two
// objects with the same ordering field are the same state (the rules keep either).

interface TestToken {
  readonly chain: string
  readonly address: string
  readonly updatedAt: number
  readonly price: string
}
const token = (address: string, updatedAt: number): TestToken => ({
  chain: "solana",
  address,
  updatedAt,
  price: `${address}@${updatedAt}`
})

interface TestPosition {
  readonly wallet: string
  readonly version: number
  readonly holdings: number
}
const position = (wallet: string, version: number): TestPosition => ({ wallet, version, holdings: version * 7 })

interface TestCandle {
  readonly time: number
  readonly version: number
  readonly close: number
}
const candle = (time: number, version: number): TestCandle => ({ time, version, close: time + version / 10 })
const laterCandle = (incoming: TestCandle, held: TestCandle): boolean => incoming.version >= held.version

interface TestTrade {
  readonly id: string
  readonly timestamp: number
  readonly source: "rest" | "stream"
}

/** A permutation of `items` driven by generated `seeds` (any order is reachable). */
const permute = <A>(items: ReadonlyArray<A>, seeds: ReadonlyArray<number>): Array<A> =>
  items
    .map((item, i) => ({ item, seed: seeds[i] ?? 0, i }))
    .sort((a, b) => a.seed - b.seed || a.i - b.i)
    .map((entry) => entry.item)

/**
 * Runs the recipe: the first `beforeSnapshot` updates arrive while buffering, then the snapshot
 * is read, then the rest arrive live.
 */
const runRecipe = <S, U>(rules: MergeRules<S, U>, snapshot: S, updates: ReadonlyArray<U>, beforeSnapshot: number): S => {
  const merger = new SnapshotMerger(rules)
  const split = Math.min(beforeSnapshot, updates.length)
  for (let i = 0; i < split; i++) merger.offer(updates[i]!)
  merger.applySnapshot(snapshot)
  for (let i = split; i < updates.length; i++) merger.offer(updates[i]!)
  return merger.state!
}

const seeds = fc.array(fc.integer(), { maxLength: 40 })
const addresses = ["A", "B", "C"] as const

// A token/position/candle history: identity index + ordering value, unique per identity.
const history = fc.uniqueArray(fc.record({ key: fc.integer({ min: 0, max: 2 }), order: fc.integer({ min: 0, max: 30 }) }), {
  selector: (entry) => `${entry.key}:${entry.order}`,
  maxLength: 25
})

describe("tokens", () => {
  it("keeps the later updatedAt; a tie keeps the held object", () => {
    const held = token("A", 10)
    expect(mergeToken(held, token("A", 11))).toEqual(token("A", 11))
    expect(mergeToken(held, token("A", 9))).toBe(held)
    const sameTime = { ...token("A", 10), price: "other" }
    expect(mergeToken(held, sameTime)).toBe(held)
    expect(mergeToken(undefined, held)).toBe(held)
  })

  it("any interleaving of the snapshot and the updates converges to the latest state of every token", () => {
    fc.assert(
      fc.property(history, history, seeds, fc.nat({ max: 30 }), (snapshotEntries, updateEntries, order, split) => {
        const snapshot = mergeTokens(new Map(), snapshotEntries.map((e) => token(addresses[e.key]!, e.order)))
        const updates = permute(updateEntries, order).map((e) => token(addresses[e.key]!, e.order))
        const rules: MergeRules<ReadonlyMap<string, TestToken>, TestToken> = {
          applySnapshot: (held, snap) => mergeTokens(held ?? new Map(), [...snap.values()]),
          applyUpdate: (state, update) => mergeTokens(state, [update])
        }
        const result = runRecipe(rules, snapshot, updates, split)
        // From the raw entries: each token at its latest updatedAt among the snapshot's and the updates'.
        const expected = new Map<string, TestToken>()
        for (const address of addresses) {
          const times = [...snapshotEntries, ...updateEntries].filter((e) => addresses[e.key] === address).map((e) => e.order)
          if (times.length > 0) expected.set(`solana:${address}`, token(address, Math.max(...times)))
        }
        expect(new Map([...result].sort())).toEqual(new Map([...expected].sort()))
      })
    )
  })

  it("applying an update twice changes nothing more than applying it once", () => {
    fc.assert(
      fc.property(history, fc.nat({ max: 30 }), (entries, at) => {
        const state = mergeTokens(new Map(), entries.map((e) => token(addresses[e.key]!, e.order)))
        const update = token("B", at)
        const once = mergeTokens(state, [update])
        expect(mergeTokens(once, [update])).toEqual(once)
      })
    )
  })
})

describe("positions", () => {
  it("keeps the highest version; a tie keeps the held object", () => {
    const held = position("w", 3)
    expect(mergePosition(held, position("w", 4))).toEqual(position("w", 4))
    expect(mergePosition(held, position("w", 2))).toBe(held)
    expect(mergePosition(held, { ...position("w", 3), holdings: -1 })).toBe(held)
    expect(mergePosition(undefined, held)).toBe(held)
  })

  it("any interleaving of the snapshot and the updates converges to the highest version of every position", () => {
    fc.assert(
      fc.property(history, history, seeds, fc.nat({ max: 30 }), (snapshotEntries, updateEntries, order, split) => {
        const keyOf = (p: TestPosition) => p.wallet
        const snapshot = mergePositions(new Map(), snapshotEntries.map((e) => position(addresses[e.key]!, e.order)), keyOf)
        const updates = permute(updateEntries, order).map((e) => position(addresses[e.key]!, e.order))
        const rules: MergeRules<ReadonlyMap<string, TestPosition>, TestPosition> = {
          applySnapshot: (held, snap) => mergePositions(held ?? new Map(), [...snap.values()], keyOf),
          applyUpdate: (state, update) => mergePositions(state, [update], keyOf)
        }
        const result = runRecipe(rules, snapshot, updates, split)
        for (const wallet of addresses) {
          const versions = [...snapshotEntries, ...updateEntries].filter((e) => addresses[e.key] === wallet).map((e) => e.order)
          const expected = versions.length === 0 ? undefined : position(wallet, Math.max(...versions))
          expect(result.get(wallet)).toEqual(expected)
        }
      })
    )
  })

  it("a REST re-read at the version held replaces the pushed copy (its price-derived fields are newer); a push at that version does not", () => {
    const merger = new SnapshotMerger(positionRules<TestPosition & { value: string }>())
    merger.applySnapshot({ ...position("W", 3), value: "100" })
    merger.offer({ ...position("W", 3), value: "100" }) // a redelivered push
    merger.reconnect()
    merger.applySnapshot({ ...position("W", 3), value: "250" }) // the price moved; the position did not
    expect(merger.state).toEqual({ ...position("W", 3), value: "250" })
    merger.offer({ ...position("W", 3), value: "90" }) // an older push of the same version
    expect(merger.state!.value).toBe("250")
    merger.applySnapshot({ ...position("W", 2), value: "1" }) // an older read never wins
    expect(merger.state!.version).toBe(3)
  })

  it("the single-position rules are idempotent and order-free", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: 50 }), { minLength: 1, maxLength: 10 }), seeds, (versions, order) => {
        const rules = positionRules<TestPosition>()
        const [first, ...rest] = permute(versions, order).map((v) => position("w", v))
        let state = rules.applySnapshot(undefined, first!)
        for (const update of rest) state = rules.applyUpdate(rules.applyUpdate(state, update), update)
        expect(state).toEqual(position("w", Math.max(...versions)))
      })
    )
  })
})

describe("candles", () => {
  it("replaces the same time and appends or inserts a new one, keeping time order", () => {
    const held = [candle(0, 1), candle(60, 1), candle(120, 1)]
    expect(mergeCandles(held, [candle(120, 2)])).toEqual([candle(0, 1), candle(60, 1), candle(120, 2)])
    expect(mergeCandles(held, [candle(180, 1)])).toEqual([...held, candle(180, 1)])
    expect(mergeCandles(held, [candle(30, 1)])).toEqual([candle(0, 1), candle(30, 1), candle(60, 1), candle(120, 1)])
    expect(mergeCandles(held, [candle(60, 0)])).toEqual([candle(0, 1), candle(60, 0), candle(120, 1)])
    expect(mergeCandles(held, [candle(60, 0)], laterCandle)).toEqual(held)
    expect(held).toEqual([candle(0, 1), candle(60, 1), candle(120, 1)])
  })

  it("with versioned states, any interleaving converges to the latest state of every bucket, in time order", () => {
    const times = [0, 60_000, 120_000]
    fc.assert(
      fc.property(history, history, seeds, fc.nat({ max: 30 }), (snapshotEntries, updateEntries, order, split) => {
        const snapshot = mergeCandles([], snapshotEntries.map((e) => candle(times[e.key]!, e.order)), laterCandle)
        const updates = permute(updateEntries, order).map((e) => candle(times[e.key]!, e.order))
        const result = runRecipe(candleSeriesRules(laterCandle), snapshot, updates, split)
        const expected = times.flatMap((time, key) => {
          const versions = [...snapshotEntries, ...updateEntries].filter((e) => e.key === key).map((e) => e.order)
          return versions.length === 0 ? [] : [candle(time, Math.max(...versions))]
        })
        expect(result).toEqual(expected)
      })
    )
  })

  it("with the spec's plain replace rule, updates applied in arrival order leave the last state of every bucket", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ key: fc.integer({ min: 0, max: 4 }), version: fc.nat() }), { maxLength: 30 }), (entries) => {
        const result = mergeCandles([], entries.map((e) => candle(e.key * 60, e.version)))
        const last = new Map<number, TestCandle>()
        for (const e of entries) last.set(e.key * 60, candle(e.key * 60, e.version))
        expect(result).toEqual([...last.values()].sort((a, b) => a.time - b.time))
      })
    )
  })

  it("applying a candle update twice changes nothing more than applying it once", () => {
    fc.assert(
      fc.property(history, fc.integer({ min: 0, max: 4 }), fc.nat({ max: 40 }), (entries, key, version) => {
        const state = mergeCandles([], entries.map((e) => candle(e.key * 60, e.order)))
        const once = mergeCandles(state, [candle(key * 60, version)])
        expect(mergeCandles(once, [candle(key * 60, version)])).toEqual(once)
      })
    )
  })
})

describe("trades", () => {
  const trade = (id: number, timestamp: number, source: "rest" | "stream"): TestTrade => ({ id: `t${id}`, timestamp, source })
  // A trade's execution time is fixed by its id, as on the real feed.
  const timeOf = (id: number) => 1000 + (id % 7) * 10

  it("skips an update whose id is held and keeps the held copy", () => {
    const held = [trade(2, 20, "rest"), trade(1, 10, "rest")]
    expect(mergeTrades(held, [trade(2, 20, "stream"), trade(3, 30, "stream"), trade(3, 30, "stream")])).toEqual([
      trade(3, 30, "stream"),
      trade(2, 20, "rest"),
      trade(1, 10, "rest")
    ])
    expect(mergeTrades(held, [trade(0, 15, "stream")])).toEqual([trade(2, 20, "rest"), trade(0, 15, "stream"), trade(1, 10, "rest")])
  })

  it("any interleaving holds every trade once, newest first, with the REST copy of every snapshot trade", () => {
    const ids = fc.uniqueArray(fc.nat({ max: 40 }), { maxLength: 25 })
    fc.assert(
      fc.property(ids, fc.array(fc.nat({ max: 40 }), { maxLength: 40 }), seeds, fc.nat({ max: 40 }), (restIds, streamIds, order, split) => {
        const snapshot = mergeTrades([], restIds.map((id) => trade(id, timeOf(id), "rest")))
        // The stream may repeat a trade (redelivery) and also carries the snapshot's trades.
        const updates = permute(streamIds, order).map((id) => trade(id, timeOf(id), "stream"))
        const result = runRecipe(tradeListRules<TestTrade>(), snapshot, updates, split)
        const resultIds = result.map((t) => t.id)
        expect(new Set(resultIds).size).toBe(resultIds.length)
        expect(new Set(resultIds)).toEqual(new Set([...restIds, ...streamIds].map((id) => `t${id}`)))
        for (let i = 1; i < result.length; i++) expect(result[i - 1]!.timestamp).toBeGreaterThanOrEqual(result[i]!.timestamp)
        for (const t of result) expect(t.source).toBe(restIds.includes(Number(t.id.slice(1))) ? "rest" : "stream")
      })
    )
  })

  it("the merged list is the feed's own order (newest first by time, then by arrival; same-millisecond and late trades included), across a reconnect", () => {
    fc.assert(
      fc.property(
        // each trade's time (a few values, so many share a millisecond; later arrivals may be older)
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 5, maxLength: 5 }),
        fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 })),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.boolean(),
        (times, moments, [pageSize, rereadSize], redelivered, reconnects) => {
          const n = times.length
          const feed = times.map((t, seq) => ({ id: `t${seq}`, timestamp: 1000 + t * 10, seq }))
          // The REST page's order, which is the feed's: time, then arrival (seq), newest first.
          const truth = [...feed].sort((a, b) => b.timestamp - a.timestamp || b.seq - a.seq)
          // subscribe ≤ read ≤ drop ≤ resubscribe ≤ re-read, as positions in the feed
          const [subscribe, read, drop, resubscribe, reread] = moments.map((m) => m % (n + 1)).sort((a, b) => a - b) as [number, number, number, number, number]
          const rest = (t: { id: string; timestamp: number }): TestTrade => ({ id: t.id, timestamp: t.timestamp, source: "rest" })
          const stream = (seq: number): TestTrade => ({ id: feed[seq]!.id, timestamp: feed[seq]!.timestamp, source: "stream" })
          // A page read when `before` trades had arrived: the newest of them, at least `size`, and
          // (the recipe's premise: a snapshot covers the gap) every trade the stream delivered
          // between subscribing at `from` and the read.
          const page = (before: number, size: number, from: number) => {
            const arrived = truth.filter((t) => t.seq < before)
            let take = Math.min(size, arrived.length)
            arrived.forEach((t, i) => {
              if (t.seq >= from && i >= take) take = i + 1
            })
            return arrived.slice(0, take).map(rest)
          }
          const merger = new SnapshotMerger(tradeListRules<TestTrade>())
          const deliver = (from: number, to: number) => {
            for (let seq = from; seq < to; seq++) {
              merger.offer(stream(seq))
              if (redelivered.includes(seq)) merger.offer(stream(seq))
            }
          }
          const expected = new Set<string>()
          const firstPage = page(read, pageSize, subscribe)
          deliver(subscribe, read)
          merger.applySnapshot(firstPage)
          for (const t of firstPage) expected.add(t.id)
          const lastSeq = reconnects ? drop : n
          deliver(read, lastSeq)
          for (let seq = subscribe; seq < lastSeq; seq++) expected.add(feed[seq]!.id)
          let restIds = new Set(firstPage.map((t) => t.id))
          if (reconnects) {
            merger.reconnect()
            const secondPage = page(reread, rereadSize, resubscribe)
            deliver(resubscribe, reread)
            merger.applySnapshot(secondPage)
            deliver(reread, n)
            for (const t of secondPage) expected.add(t.id)
            for (let seq = resubscribe; seq < n; seq++) expected.add(feed[seq]!.id)
            restIds = new Set([...restIds, ...secondPage.map((t) => t.id)])
          }
          const result = merger.state!
          expect(result.map((t) => t.id)).toEqual(truth.filter((t) => expected.has(t.id)).map((t) => t.id))
          for (const t of result) expect(t.source).toBe(restIds.has(t.id) ? "rest" : "stream")
        }
      ),
      { numRuns: 2_000 }
    )
  })

  it("applying a trade update twice changes nothing more than applying it once", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: 30 }), { maxLength: 20 }), fc.nat({ max: 30 }), (heldIds, id) => {
        const held = mergeTrades([], heldIds.map((i) => trade(i, timeOf(i), "rest")))
        const once = mergeTrades(held, [trade(id, timeOf(id), "stream")])
        expect(mergeTrades(once, [trade(id, timeOf(id), "stream")])).toEqual(once)
      })
    )
  })
})

describe("SnapshotMerger", () => {
  it("buffers until the snapshot, then applies buffered and new updates; a reconnect merges the re-read", () => {
    const merger = new SnapshotMerger(candleSeriesRules<TestCandle>(laterCandle))
    merger.offer(candle(60, 1))
    expect(merger.isLive).toBe(false)
    expect(merger.state).toBeUndefined()
    merger.applySnapshot([candle(0, 5), candle(60, 2)])
    expect(merger.isLive).toBe(true)
    expect(merger.state).toEqual([candle(0, 5), candle(60, 2)])
    merger.offer(candle(60, 3))
    merger.offer(candle(120, 1))
    expect(merger.state).toEqual([candle(0, 5), candle(60, 3), candle(120, 1)])

    merger.reconnect()
    merger.offer(candle(180, 1))
    expect(merger.state).toEqual([candle(0, 5), candle(60, 3), candle(120, 1)])
    // The re-read covers the gap (candles with `to` left out): the latest buckets only.
    merger.applySnapshot([candle(120, 4), candle(180, 0)])
    expect(merger.state).toEqual([candle(0, 5), candle(60, 3), candle(120, 4), candle(180, 1)])
  })

  it("a re-read trade snapshot replaces stream copies with REST copies", () => {
    const merger = new SnapshotMerger(tradeListRules<TestTrade>())
    merger.applySnapshot([{ id: "a", timestamp: 1, source: "rest" }])
    merger.offer({ id: "b", timestamp: 2, source: "stream" })
    merger.reconnect()
    merger.applySnapshot([{ id: "b", timestamp: 2, source: "rest" }])
    expect(merger.state).toEqual([
      { id: "b", timestamp: 2, source: "rest" },
      { id: "a", timestamp: 1, source: "rest" }
    ])
  })
})
