/**
 * Reading request parameters the way the spec words them: chain slugs, comma lists, clamped
 * limits, booleans, integers and cursors. Problems are collected, so one answer names every bad
 * field at once.
 */
import { Effect } from "effect"
import { Chain } from "@spot/domain"
import type { Cursor } from "@spot/domain"
import type { CursorCodecShape } from "../ports/CursorCodec.js"
import type { FieldIssue } from "../errors.js"
import { UnsupportedChain, ValidationFailed } from "../errors.js"

type ChainSlug = Chain.Chain

/** Collects field problems and the first unsupported chain of one request. */
export class Issues {
  readonly issues: Array<FieldIssue> = []
  unsupported: UnsupportedChain | undefined

  add(field: string, message: string): void {
    this.issues.push({ field, message })
  }

  /** A chain slug, or undefined after recording why not. */
  chain(field: string, value: string | undefined, required = true): ChainSlug | undefined {
    if (value === undefined || value === "") {
      if (required) this.add(field, `${field} is required: one of ${Chain.chains.join(", ")}`)
      return undefined
    }
    if (Chain.isChain(value)) return value
    this.unsupported ??= new UnsupportedChain({ field, value })
    return undefined
  }

  /**
   * The entries of a comma-separated list, taken as written (a slug or an address is spelled the
   * same in a list as anywhere else: " base" is no chain, as in a path); an empty entry (a stray
   * comma) is refused, and so is an empty list. Empty entries are left out of the answer.
   */
  listEntries(field: string, value: string, what: string): Array<string> {
    if (value === "") return []
    const entries = value.split(",")
    const named = entries.filter((entry) => entry.length > 0)
    if (named.length < entries.length) this.add(field, `${field} has an empty entry: ${what} separated by single commas, with nothing else between them`)
    return named
  }

  /**
   * A comma-separated list of chain slugs: undefined when absent (every chain); refused when it
   * names nothing; a repeated slug is read once.
   */
  chainList(field: string, value: string | undefined): ReadonlyArray<ChainSlug> | undefined {
    if (value === undefined) return undefined
    if (value === "") {
      this.add(field, `${field} names no chain: send one or more of ${Chain.chains.join(", ")}, comma-separated, or leave it out for every chain`)
      return undefined
    }
    return this.chainSlugs(field, this.listEntries(field, value, "chain slugs"))
  }

  /**
   * Chain slugs as written, each read once (a query list's entries or a body's array); an empty
   * slug is named as such, an unknown one is `UNSUPPORTED_CHAIN`.
   */
  chainSlugs(field: string, slugs: ReadonlyArray<string>): Array<ChainSlug> {
    const out: Array<ChainSlug> = []
    for (const slug of slugs) {
      if (slug === "") {
        this.add(field, `chains has an empty slug: each entry one of ${Chain.chains.join(", ")}`)
        continue
      }
      const chain = this.chain(field, slug)
      if (chain !== undefined && !out.includes(chain)) out.push(chain)
    }
    return out
  }

  /** An address of `chain`'s format. */
  address(field: string, chain: ChainSlug | undefined, value: string | undefined): string | undefined {
    if (value === undefined || value === "") {
      this.add(field, `${field} is required`)
      return undefined
    }
    if (chain === undefined) return value
    if (!Chain.isAddressOn(chain, value)) {
      this.add(field, `${field} is not ${Chain.describeAddressOn(chain)}`)
      return undefined
    }
    return Chain.canonicalAddress(chain, value)
  }

  /** A whole number; undefined when absent. */
  integer(field: string, value: string | undefined, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | undefined {
    if (value === undefined) return undefined
    if (!/^-?\d{1,16}$/.test(value)) {
      this.add(field, `${field} must be a whole number`)
      return undefined
    }
    const n = Number(value)
    if (n < min || n > max) {
      // Only the bounds a caller set are named, with the side that was crossed; beyond the
      // safe-integer range (a bound no caller sets) the message says so.
      const lower = min !== Number.MIN_SAFE_INTEGER
      const upper = max !== Number.MAX_SAFE_INTEGER
      const message = lower && upper
        ? `${field} must be between ${min} and ${max}`
        : n < min
        ? (lower ? `${field} must be at least ${min}` : `${field} must be at least ${Number.MIN_SAFE_INTEGER}`)
        : (upper ? `${field} must be at most ${max}` : `${field} must be at most ${Number.MAX_SAFE_INTEGER}`)
      this.add(field, message)
      return undefined
    }
    return n
  }

  /** A page size: a whole number, clamped into [1, max] (never refused for its size). */
  limit(field: string, value: string | undefined, fallback: number, max: number): number {
    if (value === undefined) return fallback
    // Any whole number, however many digits (one past 2^53 or beyond a double's range is clamped too).
    if (!/^-?\d+$/.test(value)) {
      this.add(field, `${field} must be a whole number (values outside 1-${max} are clamped)`)
      return fallback
    }
    return Math.min(max, Math.max(1, Number(value)))
  }

  boolean(field: string, value: string | undefined, fallback: boolean): boolean {
    if (value === undefined) return fallback
    if (value === "true") return true
    if (value === "false") return false
    this.add(field, `${field} must be true or false`)
    return fallback
  }

  oneOf<const T extends string>(field: string, value: string | undefined, allowed: ReadonlyArray<T>, fallback?: T): T | undefined {
    if (value === undefined) {
      if (fallback === undefined) this.add(field, `${field} is required: one of ${allowed.join(", ")}`)
      return fallback
    }
    if ((allowed as ReadonlyArray<string>).includes(value)) return value as T
    this.add(field, `${field} must be one of ${allowed.join(", ")}`)
    return undefined
  }

  /** A cursor of this read, decoded; undefined when absent or after recording why not. */
  cursor(cursors: CursorCodecShape, binding: string, value: string | undefined): Cursor.CursorPosition | undefined {
    if (value === undefined) return undefined
    const decoded = cursors.decode(binding, value)
    switch (decoded._tag) {
      case "Ok":
        return decoded.position
      case "OtherRead":
        this.add("cursor", "cursor was made by a read with other filters or sort: send the same filters as the read that returned it, or drop the cursor to start over")
        return undefined
      case "Unreadable":
        this.add("cursor", "cursor cannot be read: send back the nextCursor of the previous page exactly as received, or drop it to start from the first page")
        return undefined
    }
  }

  /** Fails with the unsupported chain, else with every field problem, else succeeds. */
  check(): Effect.Effect<void, ValidationFailed | UnsupportedChain> {
    if (this.unsupported !== undefined) return Effect.fail(this.unsupported)
    if (this.issues.length > 0) return Effect.fail(new ValidationFailed({ issues: this.issues }))
    return Effect.void
  }
}

/** Refuses parameters a read does not know (spec "Versioning" rule 4). */
export const refuseUnknown = (issues: Issues, params: Readonly<Record<string, string | undefined>>, known: ReadonlyArray<string>): void => {
  for (const name of Object.keys(params)) {
    if (!known.includes(name)) issues.add(name, `unknown parameter ${name}; this read accepts ${known.join(", ")}`)
  }
}
