/**
 * Events that arrive late (an older timestamp than what the market already folded), as the
 * stream reports them (docs/streams.md, "Late events"):
 * - a late trade is counted in its token's latest candle (the tape never reopens an earlier
 *   bucket), so `spot.candles` pushes that latest bucket, never the late trade's own bucket, and a
 *   client merging by `time` agrees with a fresh REST read;
 * - a late event changes a token without moving its `updatedAt`: two pushed states of one token
 *   share an `updatedAt`; the stream pushes both, in the order they were folded, the last one is
 *   the REST object.
 * No timing: every wait is for a frame (a pong answers after every frame queued before the ping).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { MarketEvent } from "@spot/domain"
import { Candles, SnapshotMerge } from "@spot/domain"
import { simulatedMarket } from "../http/support/ReadApi.js"
import type { StreamApi, StreamClient } from "./support/StreamClient.js"
import { open, startStreamApi } from "./support/StreamClient.js"

type Swap = Extract<MarketEvent, { readonly type: "swap" }>

describe("late events on the stream", () => {
  const sim = simulatedMarket({ minutes: 4, seed: 33, tradesPerSecond: 60, launchesPerMinute: 20 })
  // Swaps the simulator would send next, to copy with other times (the simulator itself is not advanced further).
  const nextSwaps = sim.simulator.advance(sim.endTime + 60_000).filter((e): e is Swap => e.type === "swap")
  // The token of the next swap whose token has traded in an earlier minute than its latest trade.
  const swap = nextSwaps.find((e) => {
    const tape = sim.market.engine.token(e.chain, e.token)?.tape
    const last = tape?.lastTradeAt()
    return last !== undefined && tape!.candles({ timeframe: "1m", metric: "price", denomination: "usd" }).length >= 2
  })!
  const engine = sim.market.engine
  const token = engine.token(swap.chain, swap.token)!
  const base = `/v1/tokens/${token.chain}/${token.address}`
  let api: StreamApi
  let client: StreamClient
  let copies = 0
  /** The swap again, as a new trade at `timestamp`. */
  const swapAt = (timestamp: number): Swap => ({ ...swap, id: `${swap.id}-late-${++copies}`, timestamp })
  const apply = (events: ReadonlyArray<MarketEvent>) => expect(sim.market.apply(events).rejected).toEqual([])

  beforeAll(async () => {
    api = await startStreamApi({ market: sim.market })
    client = await open(api.wsUrl)
  })
  afterAll(async () => {
    client.ws.terminate()
    await api.close()
  })

  /** Waits until every frame queued before now has arrived. */
  const settle = async () => {
    const id = `settle-${++copies}`
    client.send({ action: "ping", id })
    await client.waitFor((f) => f.id === id)
  }

  const restCandles = async (timeframe: string) =>
    (await api.get(`${base}/ohlcv?timeframe=${timeframe}&metric=price&denomination=usd`)).candles as Array<{ time: number }>

  it("a late trade updates the candle of its own time, which is what spot.candles pushes", async () => {
    const timeframes = ["1m", "1s"] as const
    const acks = await Promise.all(timeframes.map((timeframe) =>
      client.subscribe("spot.candles", { chain: token.chain, token: token.address, timeframe, metric: "price", denomination: "usd" })
    ))
    const mergers = timeframes.map(() => new SnapshotMerge.SnapshotMerger(SnapshotMerge.candleSeriesRules<any>()))
    const snapshots = await Promise.all(timeframes.map(restCandles))
    snapshots.forEach((snapshot, i) => mergers[i]!.applySnapshot(snapshot))
    const latest = token.tape.lastTradeAt()!
    // a trade older than the token's latest one, in an earlier minute
    const late = Candles.bucketStart("1m", latest) - 30_000
    expect(Candles.bucketStart("1m", late)).toBeLessThan(Candles.bucketStart("1m", latest))

    apply([swapAt(late)])
    await settle()

    for (let i = 0; i < timeframes.length; i++) {
      const timeframe = timeframes[i]!
      const updates = client.updates(acks[i]!.subscriptionId)
      // exactly the late trade's own bucket, now holding it
      expect(updates.map((c) => c.time), timeframe).toEqual([Candles.bucketStart(timeframe, late)])
      const fresh = await restCandles(timeframe)
      const before = snapshots[i]!
      expect(fresh.find((c) => c.time === updates[0]!.time), timeframe).toEqual(updates[0])
      expect(before.find((c) => c.time === updates[0]!.time), timeframe).not.toEqual(updates[0])
      // the latest bucket is unchanged: the late trade is not in it
      expect(fresh.at(-1), timeframe).toEqual(before.at(-1))
      for (const update of updates) mergers[i]!.offer(update)
      expect(mergers[i]!.state!.slice(-fresh.length), timeframe).toEqual(fresh)
    }

    // A batch that opens a new minute, then folds a late trade: both buckets, oldest first.
    const opened = Candles.bucketStart("1m", latest) + 60_000 + 5_000
    const from = client.updates(acks[0]!.subscriptionId).length
    apply([swapAt(opened), swapAt(late)])
    await settle()
    const updates = client.updates(acks[0]!.subscriptionId).slice(from)
    expect(updates.map((c) => c.time)).toEqual([Candles.bucketStart("1m", late), Candles.bucketStart("1m", opened)])
    for (const update of updates) mergers[0]!.offer(update)
    const fresh = await restCandles("1m")
    expect(mergers[0]!.state!.slice(-fresh.length)).toEqual(fresh)
  })

  it("a late event still moves the token's updatedAt forward: both states pushed in fold order, the later one later, and it is the REST object", async () => {
    const ack = await client.subscribe("spot.tokens", { chain: token.chain, token: token.address })
    const at = engine.now + 1_000
    apply([swapAt(at)])
    // folded in its own batch: an older timestamp, yet a change (price, volumes, trade counts)
    apply([swapAt(at - 20_000)])
    await settle()
    const updates = client.updates(ack.subscriptionId)
    expect(updates).toHaveLength(2)
    expect(updates.map((t) => t.updatedAt)).toEqual([at, at + 1])
    expect(updates[1]).not.toEqual(updates[0])
    const rest = await api.get(base)
    expect(updates[1]).toEqual(rest)
    // the spec's merge rule (keep the later updatedAt) therefore keeps the newer state either way round
    expect(SnapshotMerge.mergeToken(updates[0] as never, rest as never)).toEqual(rest)
    expect(SnapshotMerge.mergeToken(rest as never, updates[0] as never)).toEqual(rest)
  })
})
