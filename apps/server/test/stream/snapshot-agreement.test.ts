/**
 * The spec's recipe ("Combining a snapshot with a stream") against a live market: subscribe and
 * buffer, read the REST snapshot, apply buffered then new updates with the domain's merge rules
 * (SnapshotMerge), and check the merged state equals a fresh REST read — for tokens, candles,
 * trades and positions, and again after a forced reconnect (resubscribe, buffer, re-read, merge).
 * The simulator feeds the market while the client works (simulated time runs 100x faster, so a batch spans several 1s buckets).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SnapshotMerge } from "@spot/domain"
import { simulatedMarket } from "../http/support/ReadApi.js"
import type { StreamApi, StreamClient } from "./support/StreamClient.js"
import { open, startStreamApi } from "./support/StreamClient.js"

/** A position's own fields: what its `version` orders (docs/streams.md). */
const ownPositionFields = [
  "walletAddress", "chain", "product", "status", "holdings", "avgCost", "invested", "received", "fees", "realizedPnl",
  "buyCount", "sellCount", "tokensBought", "tokensSold", "isTransfer", "openedAt", "updatedAt", "version", "lifetime",
  "closedAt", "avgEntryMarketCap", "avgExitMarketCap"
]
const ownFields = (p: any) => Object.fromEntries(ownPositionFields.filter((f) => f in p).map((f) => [f, p[f]]))
const positionKey = (p: any) => `${p.walletAddress}|${p.chain}|${p.token.address}`
const withoutStreamOmissions = (t: any) => {
  const { flags: _f, platforms: _p, ...rest } = t
  return rest
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("snapshot + stream agree", () => {
  const sim = simulatedMarket({ minutes: 4, seed: 21, tradesPerSecond: 80, launchesPerMinute: 20 })
  let api: StreamApi
  let simulated = sim.endTime
  let feed: ReturnType<typeof setInterval> | undefined
  const startFeed = () => {
    feed = setInterval(() => {
      simulated += 2_000
      sim.market.apply(sim.simulator.advance(simulated))
    }, 20)
  }
  const stopFeed = () => clearInterval(feed)

  // The busiest token (most trades in its recent ring) and its most active traders.
  const busiest = [...sim.market.engine.allTokens()].sort((a, b) => (b.recentTrades?.size ?? 0) - (a.recentTrades?.size ?? 0))
  const token = busiest[0]!
  const tokens = busiest.filter((t) => t.chain === token.chain).slice(0, 5)
  const wallets = [...new Set(token.recentTrades!.page(null, 50).records.map((r) => r.trader))].slice(0, 5)
  const base = `/v1/tokens/${token.chain}/${token.address}`
  const candleQueries = [
    { timeframe: "1s", metric: "price", denomination: "native" },
    { timeframe: "1m", metric: "marketCap", denomination: "usd" }
  ]

  const readPositions = async () => {
    const out: Array<any> = []
    for (const lifecycle of ["open", "closed"]) {
      let cursor: string | null = null
      do {
        const page: any = await api.get(
          `/v1/positions?wallets=${wallets.join(",")}&lifecycle=${lifecycle}&hideLowLiquidity=false&limit=100${cursor === null ? "" : `&cursor=${cursor}`}`
        )
        out.push(...page.positions)
        cursor = page.nextCursor
      } while (cursor !== null)
    }
    return out
  }

  interface State {
    client: StreamClient
    readonly tokens: Map<string, SnapshotMerge.SnapshotMerger<any, any>>
    readonly candles: Array<SnapshotMerge.SnapshotMerger<ReadonlyArray<any>, any>>
    readonly trades: SnapshotMerge.SnapshotMerger<ReadonlyArray<any>, any>
    positions: Map<string, any>
    /** subscriptionId → what it feeds */
    routes: Map<string, (data: any) => void>
    consumed: number
  }

  const subscribeAll = async (state: State) => {
    state.routes = new Map()
    state.consumed = 0
    const client = state.client
    const tokenAck = await client.subscribe("spot.tokens", { chain: token.chain, tokens: tokens.map((t) => t.address) })
    state.routes.set(tokenAck.subscriptionId, (data) => state.tokens.get(`${data.chain}:${data.address}`)!.offer(data))
    for (let i = 0; i < candleQueries.length; i++) {
      const ack = await client.subscribe("spot.candles", { chain: token.chain, token: token.address, ...candleQueries[i] })
      state.routes.set(ack.subscriptionId, (data) => state.candles[i]!.offer(data))
    }
    const tradeAck = await client.subscribe("spot.trades", { chain: token.chain, token: token.address })
    state.routes.set(tradeAck.subscriptionId, (data) => state.trades.offer(data))
    const positionAck = await client.subscribe("spot.positions", { wallets })
    state.routes.set(positionAck.subscriptionId, (data) => {
      const key = positionKey(data)
      state.positions.set(key, SnapshotMerge.mergePosition(state.positions.get(key), data))
    })
  }

  /** Hands every update received so far to its merger (buffered until the snapshot is applied). */
  const pump = (state: State) => {
    const frames = state.client.frames
    for (; state.consumed < frames.length; state.consumed++) {
      const frame = frames[state.consumed]
      if (frame.type === "update") state.routes.get(frame.subscriptionId)?.(frame.data)
    }
  }

  const readSnapshots = async (state: State) => {
    for (const t of tokens) state.tokens.get(`${t.chain}:${t.address}`)!.applySnapshot(await api.get(`/v1/tokens/${t.chain}/${t.address}`))
    for (let i = 0; i < candleQueries.length; i++) {
      const q = candleQueries[i]!
      const body = await api.get(`${base}/ohlcv?timeframe=${q.timeframe}&metric=${q.metric}&denomination=${q.denomination}`)
      state.candles[i]!.applySnapshot(body.candles)
    }
    state.trades.applySnapshot((await api.get(`${base}/trades?limit=100`)).trades)
    // Positions: a snapshot is merged by version like any update.
    for (const p of await readPositions()) {
      const key = positionKey(p)
      state.positions.set(key, SnapshotMerge.mergePosition(state.positions.get(key), p))
    }
  }

  /** Waits until every frame sent before now has arrived (a pong answers after them). */
  const settle = async (state: State) => {
    const id = `settle-${Math.random()}`
    state.client.send({ action: "ping", id })
    await state.client.waitFor((f) => f.id === id, 5_000)
    pump(state)
  }

  /** A fresh REST read of everything the state follows. */
  const readFresh = async () => {
    const tokenStates = new Map<string, any>()
    for (const t of tokens) tokenStates.set(`${t.chain}:${t.address}`, await api.get(`/v1/tokens/${t.chain}/${t.address}`))
    const candles: Array<Array<any>> = []
    for (const q of candleQueries) {
      candles.push((await api.get(`${base}/ohlcv?timeframe=${q.timeframe}&metric=${q.metric}&denomination=${q.denomination}`)).candles)
    }
    const trades = (await api.get(`${base}/trades?limit=100`)).trades
    const positions = new Map((await readPositions()).map((p) => [positionKey(p), p]))
    return { tokenStates, candles, trades, positions }
  }

  const assertAgreement = (state: State, fresh: Awaited<ReturnType<typeof readFresh>>) => {
    for (const [key, token] of fresh.tokenStates) expect(state.tokens.get(key)!.state, key).toEqual(token)
    for (let i = 0; i < candleQueries.length; i++) {
      const candles = fresh.candles[i]!
      expect(candles.length).toBeGreaterThan(0)
      expect(state.candles[i]!.state!.slice(-candles.length), `${candleQueries[i]!.timeframe} candles`).toEqual(candles)
    }
    expect(state.trades.state!.slice(0, fresh.trades.length).map(withoutStreamOmissions)).toEqual(fresh.trades.map(withoutStreamOmissions))
    expect([...state.positions.keys()].sort()).toEqual([...fresh.positions.keys()].sort())
    for (const [key, position] of fresh.positions) expect(ownFields(state.positions.get(key)), key).toEqual(ownFields(position))
  }

  /**
   * The merged state equals a fresh read once the stream has delivered everything sent before the
   * read was answered (`settle` after it). The market's clock still ticks with the feed stopped
   * (every second its windows follow the wall clock, and the tokens whose windows moved are
   * pushed): a tick between the read and the settle makes the stream newer than the read, so the
   * comparison is made again, at most three times; a wrong merge fails every time.
   */
  const expectAgreement = async (state: State) => {
    for (let attempt = 1; ; attempt++) {
      await settle(state)
      const fresh = await readFresh()
      await settle(state)
      try {
        assertAgreement(state, fresh)
        return
      } catch (error) {
        if (attempt === 3) throw error
      }
    }
  }

  beforeAll(async () => {
    api = await startStreamApi({ market: sim.market })
  })
  afterAll(async () => {
    stopFeed()
    await api.close()
  })

  it("the merged state equals a fresh REST read, before and after a forced reconnect", async () => {
    const state: State = {
      client: await open(api.wsUrl),
      tokens: new Map(tokens.map((t) => [`${t.chain}:${t.address}`, new SnapshotMerge.SnapshotMerger(SnapshotMerge.tokenRules<any>())])),
      candles: candleQueries.map(() => new SnapshotMerge.SnapshotMerger(SnapshotMerge.candleSeriesRules<any>())),
      trades: new SnapshotMerge.SnapshotMerger(SnapshotMerge.tradeListRules<any>()),
      positions: new Map(),
      routes: new Map(),
      consumed: 0
    }
    startFeed()
    await subscribeAll(state)
    await sleep(100) // updates pile up in the buffer while the snapshot is read
    pump(state)
    await readSnapshots(state)
    pump(state)
    for (let i = 0; i < 10; i++) {
      await sleep(50)
      pump(state)
    }
    stopFeed()
    await settle(state)
    const received = state.client.frames.filter((f) => f.type === "update").length
    expect(received).toBeGreaterThan(20)
    await expectAgreement(state)

    // Forced reconnect: the socket drops while the market keeps moving.
    state.client.ws.terminate()
    await state.client.closed
    startFeed()
    await sleep(150)
    for (const merger of [...state.tokens.values(), ...state.candles, state.trades]) merger.reconnect()
    state.client = await open(api.wsUrl)
    await subscribeAll(state)
    await sleep(100)
    pump(state)
    await readSnapshots(state)
    for (let i = 0; i < 6; i++) {
      await sleep(50)
      pump(state)
    }
    stopFeed()
    await settle(state)
    await expectAgreement(state)
    state.client.ws.terminate()
  })
})
