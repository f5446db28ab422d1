import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { filterableTradeFlags, parseSubscription } from "../src/SubscribeFilters.js"
import { inIdentityFeed, matchesFlags } from "../src/TradeMatch.js"

const flag = fc.constantFrom(...filterableTradeFlags, "newLabel")
const trade = fc.record({
  flags: fc.uniqueArray(flag, { maxLength: 5 }),
  terminal: fc.option(fc.constantFrom("partner", "photon", "axiom"), { nil: null }),
  identities: fc.array(fc.record({ source: fc.constantFrom("partnerscan", "twitter") }), { maxLength: 2 })
})

describe("TradeMatch", () => {
  it("flags filter: a trade matches iff the trader carries a wanted flag, or partner is wanted and the trade routed through partner", () => {
    fc.assert(
      fc.property(trade, fc.option(fc.uniqueArray(flag, { minLength: 1, maxLength: 4 }), { nil: null }), (t, wanted) => {
        const expected = wanted === null || wanted.some((f) => t.flags.includes(f) || (f === "partner" && t.terminal === "partner"))
        expect(matchesFlags(t, wanted)).toBe(expected)
      })
    )
  })

  it("partner matches a partner-terminal trade even without the flag; other flags never match on the terminal", () => {
    expect(matchesFlags({ flags: [], terminal: "partner", identities: [] }, ["partner"])).toBe(true)
    expect(matchesFlags({ flags: ["partner"], terminal: null, identities: [] }, ["partner"])).toBe(true)
    expect(matchesFlags({ flags: [], terminal: "partner", identities: [] }, ["sniper"])).toBe(false)
    expect(matchesFlags({ flags: ["whale"], terminal: "photon", identities: [] }, ["partner", "sniper"])).toBe(false)
  })

  it("identity feeds: kol by label, partnerscan by label or profile", () => {
    fc.assert(
      fc.property(trade, (t) => {
        expect(inIdentityFeed(t, "kol")).toBe(t.flags.includes("kol"))
        expect(inIdentityFeed(t, "partnerscan")).toBe(t.flags.includes("partnerscan") || t.identities.some((p) => p.source === "partnerscan"))
      })
    )
  })
})

describe("SubscribeFilters", () => {
  const sol = "So11111111111111111111111111111111111111112"
  it("refuses every unknown filter field, naming each, on every channel", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("spot.tokens", "spot.candles", "spot.trades", "spot.positions"),
        fc.uniqueArray(fc.stringMatching(/^x[a-z]{1,6}$/), { minLength: 1, maxLength: 3 }),
        (channel, extra) => {
          const filters: Record<string, unknown> = { chain: "solana", token: sol, wallets: [sol] }
          if (channel === "spot.positions") {
            delete filters.chain
            delete filters.token
          } else delete filters.wallets
          for (const name of extra) filters[name] = 1
          const result = parseSubscription(channel, filters)
          expect(result.ok).toBe(false)
          if (!result.ok) for (const name of extra) expect(result.refusal.details.map((d) => d.field)).toContain(`filters.${name}`)
        }
      )
    )
  })

  it("applies the candle defaults and canonicalizes EVM addresses", () => {
    const r = parseSubscription("spot.candles", { chain: "base", token: "0xABCDEFabcdef0123456789012345678901234567" })
    expect(r).toEqual({
      ok: true,
      spec: {
        channel: "spot.candles",
        chain: "base",
        token: "0xabcdefabcdef0123456789012345678901234567",
        timeframe: "1m",
        metric: "marketCap",
        denomination: "usd"
      }
    })
    const t = parseSubscription("spot.tokens", { chain: "solana", tokens: [sol, sol] })
    expect(t.ok && t.spec.channel === "spot.tokens" && t.spec.tokens).toEqual([sol])
  })
})
