import { describe, expect, it } from "@effect/vitest"
import { Headers } from "effect/http"
import * as Credentials from "../src/Credentials.js"
import * as RequestId from "../src/RequestId.js"

const key = "sk_live_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"

describe("Credentials.bearerKey", () => {
  it("reads the key after a case-insensitive Bearer and one or more spaces", () => {
    expect(Credentials.bearerKey(`Bearer ${key}`)).toBe(key)
    expect(Credentials.bearerKey(`bearer ${key}`)).toBe(key)
    expect(Credentials.bearerKey(`BEARER   ${key}`)).toBe(key)
  })

  it("refuses anything else", () => {
    for (const header of [undefined, "", "Bearer", "Bearer ", `Bearer${key}`, `Basic ${key}`, `Token ${key}`, key,
      `Bearer ${key} extra`, `Bearer ${key}\t`, `Bearer ${"k".repeat(257)}`, `Bearer ké`]) {
      expect(Credentials.bearerKey(header), String(header)).toBeUndefined()
    }
  })
})

describe("Credentials.hasMisplacedKey", () => {
  const headers = (input: Record<string, string>) => Headers.fromInput(input)
  it("finds keys in key headers, key query parameters, key cookies and anything shaped like our keys", () => {
    expect(Credentials.hasMisplacedKey("/v1/trades", headers({ "x-api-key": "x" }))).toBe(true)
    expect(Credentials.hasMisplacedKey("/v1/trades?apiKey=x", headers({}))).toBe(true)
    expect(Credentials.hasMisplacedKey("/v1/trades?access_token=x", headers({}))).toBe(true)
    expect(Credentials.hasMisplacedKey(`/v1/trades?q=${key}`, headers({}))).toBe(true)
    expect(Credentials.hasMisplacedKey("/v1/trades", headers({ cookie: "a=1; token=x" }))).toBe(true)
    for (const name of ["apikey", "api_token", "x-api-key", "auth_token", "Client.Secret", "session-key"]) {
      expect(Credentials.hasMisplacedKey("/v1/trades", headers({ cookie: `lang=en; ${name}=zzz` })), name).toBe(true)
    }
    // names that merely contain a word are not key cookies
    expect(Credentials.hasMisplacedKey("/v1/trades", headers({ cookie: "csrftoken=abc; monkey=1; keyboard=us" }))).toBe(false)
    expect(Credentials.hasMisplacedKey("/v1/trades", headers({ cookie: `sid=${key}` }))).toBe(true)
  })

  it("leaves ordinary requests alone, including the positions `token` parameter", () => {
    expect(Credentials.hasMisplacedKey("/v1/trades?identity=kol&limit=5", headers({}))).toBe(false)
    expect(Credentials.hasMisplacedKey("/v1/positions?wallets=a&chain=base&token=0xabc", headers({}))).toBe(false)
    expect(Credentials.hasMisplacedKey("/v1/trades", headers({ cookie: "AWSALB=abc; lang=en" }))).toBe(false)
  })
})

describe("Credentials.keyInOtherHeader", () => {
  const ordinary = { host: "api.example", "user-agent": "curl/8.5", accept: "application/json", authorization: `Bearer ${key}` }
  it("finds the presented key in any header but Authorization, and any key of our shape", () => {
    expect(Credentials.keyInOtherHeader(ordinary, key)).toBe(false)
    expect(Credentials.keyInOtherHeader({ ...ordinary, "x-key": key }, key)).toBe(true)
    expect(Credentials.keyInOtherHeader({ ...ordinary, "proxy-authorization": `Bearer ${key}` }, key)).toBe(true)
    expect(Credentials.keyInOtherHeader({ ...ordinary, "x-custom": ["a", `b ${key}`] }, key)).toBe(true)
    expect(Credentials.keyInOtherHeader({ ...ordinary, "x-note": "sk_test_0123456789abcdefXYZ" }, key)).toBe(true)
    expect(Credentials.presentedKey("/v1/x", { ...ordinary, "x-key": key })).toBeUndefined()
    expect(Credentials.presentedKey("/v1/x", ordinary)).toBe(key)
  })
  it("does not search for a short development key, which an ordinary value may contain by chance", () => {
    const dev = "dev"
    expect(Credentials.keyInOtherHeader({ "user-agent": "devtools/1.0", authorization: `Bearer ${dev}` }, dev)).toBe(false)
    expect(Credentials.presentedKey("/v1/x", { "user-agent": "devtools/1.0", authorization: `Bearer ${dev}` })).toBe(dev)
  })
})

describe("Credentials.keyInQuery", () => {
  const devKey = "bbF_read_key_0123456789" // not of the service's shape, long enough to be searched
  const bearer = { authorization: `Bearer ${devKey}` }
  it("finds the presented key in the query under any name, as sent or percent-encoded", () => {
    expect(Credentials.presentedKey("/v1/stream", bearer)).toBe(devKey)
    expect(Credentials.presentedKey("/v1/stream?x=1", bearer)).toBe(devKey)
    for (const url of [`/v1/stream?token=${devKey}`, `/v1/stream?x=${devKey}`, `/v1/stream?a=1&${devKey}`, `/v1/stream?x=bbF%5Fread_key_0123456789`]) {
      expect(Credentials.keyInQuery(url, devKey), url).toBe(true)
      expect(Credentials.presentedKey(url, bearer), url).toBeUndefined()
    }
    // a short development key is not searched: an ordinary value may hold it by chance
    expect(Credentials.presentedKey("/v1/positions?wallets=devnet", { authorization: "Bearer dev" })).toBe("dev")
  })
})

describe("RequestId.fromHeader", () => {
  it("echoes 1-128 visible ASCII characters, else makes a UUID", () => {
    expect(RequestId.fromHeader("abc-123")).toBe("abc-123")
    expect(RequestId.fromHeader("x".repeat(128))).toBe("x".repeat(128))
    for (const bad of [undefined, "", "x".repeat(129), "a b", "é", "a\u0000"]) {
      expect(RequestId.fromHeader(bad)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    }
  })

  it("refuses a repeated Authorization header and a percent-encoded key in a cookie", () => {
    const key = "sk_live_abcdefghijklmnopqrstuvwxyz012345"
    const headers = { authorization: `Bearer ${key}` }
    expect(Credentials.presentedKey("/v1/x", headers, ["Authorization", `Bearer ${key}`, "Host", "x"])).toBe(key)
    expect(Credentials.presentedKey("/v1/x", headers, ["Authorization", `Bearer ${key}`, "authorization", "Bearer other"])).toBeUndefined()
    expect(Credentials.repeatsAuthorization(["AUTHORIZATION", "a", "x-authorization", "b"])).toBe(false)
    expect(Credentials.presentedKey("/v1/x", { ...headers, cookie: "pref=sk%5Flive%5Fabcdefghijklmnopqrstuvwxyz012345" })).toBeUndefined()
    expect(Credentials.presentedKey("/v1/x", { ...headers, cookie: "pref=50%25off; theme=%E0%A4%A" })).toBe(key)
  })
})
