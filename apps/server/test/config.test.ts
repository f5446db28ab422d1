/**
 * The service's settings (README "Configuration"): every default works, and an invalid value stops
 * start-up with a message naming the variable (main.ts prints it as `invalid configuration: ...`
 * and exits 1), never repeating a secret.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Option, Redacted } from "effect"
import { RateLimiterLive } from "@spot/adapters-http"
import { serverConfig } from "../src/ServerConfig.js"

const parse = <A>(config: { parse: (provider: ConfigProvider.ConfigProvider) => Effect.Effect<A, unknown> }, env: Record<string, string>) =>
  Effect.runSyncExit(config.parse(ConfigProvider.fromEnv({ env })))

/** The message start-up would print for `env`, or undefined when it starts. */
const refusal = (config: Parameters<typeof parse>[0], env: Record<string, string>): string | undefined => {
  const exit = parse(config, env)
  if (Exit.isSuccess(exit)) return undefined
  return String((exit.cause as any).reasons?.[0]?.error?.message ?? exit.cause)
}

describe("configuration", () => {
  it("starts on its defaults: port 8080, simulator on, the embedded database, the spec's rate limits", () => {
    const exit = parse(serverConfig, {})
    expect(Exit.isSuccess(exit)).toBe(true)
    const config = (exit as Exit.Success<any>).value
    expect(config.port).toBe(8080)
    expect(config.simulator).not.toBeNull()
    expect(Option.isNone(config.databaseUrl)).toBe(true)
    const limits = parse(RateLimiterLive.limitsConfig, {})
    expect((limits as Exit.Success<any>).value).toEqual({ keyPerMinute: 12_000, ipPerMinute: 60_000 })
  })

  it("takes a PostgreSQL URL for DATABASE_URL, and refuses anything else without repeating it", () => {
    const url = "postgres://spot:s3cret-pw@db.internal:5432/spot"
    const exit = parse(serverConfig, { DATABASE_URL: url })
    expect(Redacted.value(Option.getOrThrow((exit as Exit.Success<any>).value.databaseUrl) as Redacted.Redacted<string>)).toBe(url)
    for (const bad of ["garbage", "mysql://u:s3cret-pw@h/db", "postgres://u:s3cret-pw@/db"]) {
      const message = refusal(serverConfig, { DATABASE_URL: bad })
      expect(message, bad).toMatch(/DATABASE_URL/)
      expect(message, bad).not.toMatch(/s3cret-pw|garbage/)
    }
  })

  it("refuses a rate limit of zero or less (it would refuse every request forever), naming the variable", () => {
    for (const name of ["SPOT_RATE_LIMIT_KEY_PER_MINUTE", "SPOT_RATE_LIMIT_IP_PER_MINUTE"]) {
      for (const value of ["0", "-5", "1.5", "many"]) expect(refusal(RateLimiterLive.limitsConfig, { [name]: value }), `${name}=${value}`).toMatch(name)
    }
    expect(refusal(RateLimiterLive.limitsConfig, { SPOT_RATE_LIMIT_KEY_PER_MINUTE: "1" })).toBeUndefined()
  })

  it("refuses out-of-range simulator and port settings, naming the variable", () => {
    for (const [name, value] of [["PORT", "70000"], ["SPOT_SIM_WARMUP_MINUTES", "2000"], ["SPOT_SIM_TICK_MS", "5"], ["SPOT_SIMULATOR", "maybe"]] as const) {
      expect(refusal(serverConfig, { [name]: value }), `${name}=${value}`).toMatch(name)
    }
  })
})
