/**
 * The arguments of `npm run keys -- …` (apps/server/src/keys.ts), read strictly: an option the
 * command does not know, or a value it cannot use, is an error before anything is stored (read
 * loosely, a typo such as `--expires-in-day 1` would make a key that never expires, and
 * `--expires-in-days 1e9` would store a key, then fail to print it).
 */
import { hasHiddenCharacter } from "@spot/domain"

export type KeysCommand =
  | { readonly command: "create"; readonly name: string; readonly expiresInDays: number | null }
  | { readonly command: "list" }
  | { readonly command: "revoke"; readonly id: string }

export const usage = "usage: npm run keys -- create <name> [--expires-in-days N] | list | revoke <id>"

/** At most 100 years; at least a second (a key must be usable when it is printed). */
export const maxExpiresInDays = 36_500
/** A day in ms: `--expires-in-days` times this is the key's lifetime. */
export const dayMs = 86_400_000
const plainDecimal = /^\d+(\.\d+)?$/
/** Longest key name, in characters (code points): a name says whose key it is, `list` shows it on one line. */
export const maxNameLength = 200

/** The command `args` name, or what is wrong with them (a message for the operator). */
export const parseKeysCommand = (args: ReadonlyArray<string>): KeysCommand | { readonly error: string } => {
  const [command, ...rest] = args
  switch (command) {
    case "create": {
      const [name, ...options] = rest
      if (name === undefined || name.startsWith("--") || name.trim() === "") return { error: usage }
      if (hasHiddenCharacter(name) || [...name].length > maxNameLength) {
        return {
          error: `a key's name is one line of at most ${maxNameLength} characters, without control or invisible characters ` +
            `(tab, newline, zero-width space, direction overrides, ...): \`list\` shows one key per line`
        }
      }
      let expiresInDays: number | null = null
      for (let i = 0; i < options.length; i += 2) {
        const option = options[i]!
        const value = options[i + 1]
        if (option !== "--expires-in-days" || expiresInDays !== null) return { error: `unknown or repeated option ${JSON.stringify(option)}; ${usage}` }
        const days = value !== undefined && plainDecimal.test(value) ? Number(value) : Number.NaN
        if (!(days * dayMs >= 1_000 && days <= maxExpiresInDays)) {
          return { error: `--expires-in-days needs a number of days, at least a second's worth and at most ${maxExpiresInDays} (plain digits, such as 30 or 0.5)` }
        }
        expiresInDays = days
      }
      return { command, name, expiresInDays }
    }
    case "list":
      return rest.length === 0 ? { command } : { error: usage }
    case "revoke":
      return rest.length === 1 ? { command, id: rest[0]! } : { error: usage }
    default:
      return { error: usage }
  }
}

/** A time for people: ISO 8601, or the raw number when it is past what a date can show (a key file written by hand). */
export const timeText = (ms: number): string => {
  const date = new Date(ms)
  return Number.isNaN(date.getTime()) ? `${ms} ms` : date.toISOString()
}
