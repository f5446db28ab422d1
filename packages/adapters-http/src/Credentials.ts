/**
 * Reading the API key off a request (spec "Authentication", rules 1–3): only
 * `Authorization: Bearer <key>` is accepted; the scheme word is case-insensitive, the key is
 * case-sensitive. A key anywhere else (another header, the query string, a cookie) makes the
 * request refused even when a valid bearer header is present too: the key has leaked into a
 * place that is logged or cached, and accepting it would teach clients to keep doing that.
 */
import type { RequestHeaders } from "./RequestHeaders.js"
import { get } from "./RequestHeaders.js"

/** Longest key considered; longer values are refused before hashing. */
export const maxKeyLength = 256

/** Headers some clients use for API keys; any of them present means a misplaced key. */
const keyHeaders = ["x-api-key", "api-key", "apikey", "x-auth-token", "x-access-token", "x-api-token", "x-token"]

/**
 * Query parameter names used for keys. (`token` is not among them: `/v1/positions` has a `token`
 * parameter naming a token address.)
 */
const keyParameters = new Set([
  "api_key", "apikey", "api-key", "key", "access_token", "accesstoken", "auth", "authorization", "bearer", "secret"
])

/**
 * Cookie names that carry keys: a key or token word, alone or as the last part of a name
 * (`api_token`, `x-api-key`, `auth_token`); `csrftoken`-like names without a separator are not.
 */
const keyCookie = /(?:^|;)\s*(?:[\w.-]*[_.-])?(?:api[_-]?key|key|access[_-]?token|token|auth|authorization|bearer|secret|session[_-]?key)\s*=/i

/** The service's own key shape, recognised wherever it appears. */
const ownKeyShape = /\bsk_(?:live|test)_[A-Za-z0-9_-]{16,}/

/**
 * The key of a well-formed `Authorization: Bearer <key>` header, else undefined. The key is one
 * token68 (RFC 7235): visible ASCII without spaces; the separator is one or more spaces.
 */
export const bearerKey = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || authorization.length < 8) return undefined
  if (authorization.charCodeAt(6) !== 32) return undefined
  const scheme = authorization.slice(0, 6)
  if (scheme !== "Bearer" && scheme.toLowerCase() !== "bearer") return undefined
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  const length = authorization.length - start
  if (length === 0 || length > maxKeyLength) return undefined
  for (let i = start; i < authorization.length; i++) {
    const c = authorization.charCodeAt(i)
    if (c <= 0x20 || c > 0x7e) return undefined
  }
  return start === 7 ? authorization.slice(7) : authorization.slice(start)
}

/** True when the request carries a key somewhere other than the Authorization header. */
export const hasMisplacedKey = (url: string, headers: RequestHeaders): boolean => {
  for (let i = 0; i < keyHeaders.length; i++) {
    if (headers[keyHeaders[i]!] !== undefined) return true
  }
  const cookie = get(headers, "cookie")
  if (cookie !== undefined && (keyCookie.test(cookie) || ownKeyShape.test(cookie) || (cookie.includes("%") && ownKeyShape.test(percentDecoded(cookie))))) {
    return true
  }
  const queryStart = url.indexOf("?")
  if (queryStart >= 0) {
    const query = url.slice(queryStart + 1)
    for (const [name, value] of new URLSearchParams(query)) {
      if (keyParameters.has(name.toLowerCase()) || ownKeyShape.test(value)) return true
    }
  }
  return false
}

/** Cookie values are often percent-encoded: `sk%5Flive%5F…` is a key too. Malformed escapes stay as they are. */
const percentDecoded = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  }
}

/**
 * Keys at least this long are also looked for, as they are, in every other header's value (a
 * shorter development key could occur in an ordinary value by chance).
 */
export const minSearchedKeyLength = 16

/**
 * True when a header other than Authorization carries the presented key itself (at least
 * `minSearchedKeyLength` long), or any key of the service's own shape: "a key in any other header
 * is rejected" (spec "Authentication" rule 2), whatever the header's name.
 */
export const keyInOtherHeader = (headers: RequestHeaders, key: string): boolean => {
  const searched = key.length >= minSearchedKeyLength
  for (const name in headers) {
    if (name === "authorization") continue
    const value = headers[name]
    if (value === undefined) continue
    const text = typeof value === "string" ? value : value.join(", ")
    if ((searched && text.includes(key)) || (text.includes("sk_") && ownKeyShape.test(text))) return true
  }
  return false
}

/**
 * True when the query string carries the presented key itself (at least `minSearchedKeyLength`
 * long), under any parameter name, as sent or percent-decoded: "a key in the query string is
 * rejected" (spec "Authentication" rule 2). `hasMisplacedKey` knows only key-like names and the
 * service's own key shape, so without this `?token=<a development key>` would pass beside a valid
 * bearer header, on the stream too.
 */
export const keyInQuery = (url: string, key: string): boolean => {
  if (key.length < minSearchedKeyLength) return false
  const queryStart = url.indexOf("?")
  if (queryStart < 0) return false
  const query = url.slice(queryStart + 1)
  return query.includes(key) || ((query.includes("%") || query.includes("+")) && percentDecoded(query.replace(/\+/g, " ")).includes(key))
}

/**
 * True when the request carried more than one Authorization header (Node's header record keeps
 * only the first; `rawHeaders` has them all). A second one is a key in another place too: refused.
 */
export const repeatsAuthorization = (rawHeaders: ReadonlyArray<string> | undefined): boolean => {
  if (rawHeaders === undefined) return false
  let seen = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 13 && name.toLowerCase() === "authorization" && ++seen > 1) return true
  }
  return false
}

/**
 * The key to check, or undefined when the request must get the 401 without a lookup. `rawHeaders`
 * (Node's, when at hand) lets a repeated Authorization header be refused too.
 */
export const presentedKey = (url: string, headers: RequestHeaders, rawHeaders?: ReadonlyArray<string>): string | undefined => {
  const key = bearerKey(get(headers, "authorization"))
  return key === undefined || hasMisplacedKey(url, headers) || keyInOtherHeader(headers, key) || keyInQuery(url, key) ||
      repeatsAuthorization(rawHeaders)
    ? undefined
    : key
}
